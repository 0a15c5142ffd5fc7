"""What claimed features imply, family by family, in one place: the features of which an implementation has at
most one (the first of each pair implied unless the other is claimed), and why a case whose feature is not
claimed does not apply, where a sentence says more than "needs optional feature(s)"."""

from __future__ import annotations

from typing import Iterable, Optional

from embconf.model.rope import LAYER_FEATURE, LAYER_REFUSED_FEATURE

# The feature of a case of calls on one instance (spec section 9.7, since 2.0.0): an implementation that can be
# called several times on one instance declares it (every in-process adapter; a protocol peer from minor 5).
STATEFUL = "stateful"

# A table is stored or computed (EMB-MEM-1); a layer refuses pos_encoding 'rope' or computes it (EMB-LAY-7,
# EMB-LAY-10). The first of each pair is implied unless the second is claimed.
EXCLUSIVE_FEATURES = (("sinusoid_stored", "sinusoid_computed"), (LAYER_REFUSED_FEATURE, LAYER_FEATURE))

MISSING_REASONS = {
    STATEFUL: (
        "a case of calls on one instance: the implementation does not declare the feature stateful "
        "(a protocol peer declares it with protocol minor 5, PROTOCOL.md section 8)"
    ),
    LAYER_REFUSED_FEATURE: f"a case of a layer without rope (pos_encoding 'rope' refused): it declares {LAYER_FEATURE}",
}


def contradictory_features(features: Iterable[str]) -> Optional[str]:
    """Why claiming ``features`` together contradicts itself (in one line), or None."""
    claimed = set(features)
    for group in EXCLUSIVE_FEATURES:
        both = [name for name in group if name in claimed]
        if len(both) > 1:
            return f"it declares the features {' and '.join(both)}, which exclude each other; declare one"
    return None


def exclusive_defaults(features: Iterable[str]) -> set[str]:
    """The first feature of each exclusive pair whose second is not claimed: implied."""
    claimed = set(features)
    return {default for default, declared in EXCLUSIVE_FEATURES if declared not in claimed}


def exclusive_choices() -> set[str]:
    """Every feature of an exclusive pair (what a canonical implementation leaves at its default, unclaimed)."""
    return {name for group in EXCLUSIVE_FEATURES for name in group}


def missing_reason(missing: Iterable[str]) -> Optional[str]:
    """The sentence that says why a case needing one of ``missing`` does not apply, where there is one."""
    return next((MISSING_REASONS[name] for name in missing if name in MISSING_REASONS), None)
