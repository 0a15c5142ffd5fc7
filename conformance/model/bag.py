"""Bags (spec section 16, EMB-BAG, since 2.1.0): the modes, the bag features, and the features a bag case's inputs
imply (``embconf validate`` checks every bag case carries exactly those; the catalogue derives them the same way).

A forward or backward case carries its mode's feature (``bag-sum``, ``bag-mean``, ``bag-max``, ``bag-sqrtn``; an
unknown mode's error case ``bag-sum``), ``bag-2d`` for ids (B, N), ``bag-weights`` with per-sample weights (and
``bag-weighted-mean`` in modes mean and sqrtn), ``bag-padding`` and ``bag-last-offset`` with those inputs. A
canonical case a declared bag convention answers otherwise carries the convention's canonical marker
(:mod:`embconf.model.bag_conventions`): ``bag-negative-ids-refused`` where an id is negative,
``bag-nonpositive-weights-kept`` where a result's weight is <= 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import numpy as np


def _bag_operations(offsets: bool) -> tuple[str, ...]:
    """The bags family's operations that take offsets (the lookups) or do not (the memory of a sharded table)."""
    from embconf.model.family import operations_of
    from embconf.model.vocabulary import operations

    return tuple(name for name in operations_of("bags") if ("offsets" in operations()[name]["inputs"]) is offsets)


BAG_OPERATIONS = _bag_operations(True)  # embedding_bag_forward, embedding_bag_backward
(SHARDING_OPERATION,) = _bag_operations(False)  # sharded_table_bytes
MODES = ("sum", "mean", "max", "sqrtn")
WEIGHTED_MEAN_MODES = ("mean", "sqrtn")
TWO_D, WEIGHTS, WEIGHTED_MEAN = "bag-2d", "bag-weights", "bag-weighted-mean"
PADDING, LAST_OFFSET, SHARDING = "bag-padding", "bag-last-offset", "bag-sharding"
NEGATIVE_IDS_REFUSED = "bag-negative-ids-refused"  # implied unless drop_negative_ids is declared
NONPOSITIVE_WEIGHTS_KEPT = "bag-nonpositive-weights-kept"  # implied unless prune_nonpositive_weights is declared
CANONICAL_MARKERS = (NEGATIVE_IDS_REFUSED, NONPOSITIVE_WEIGHTS_KEPT)


def mode_feature(mode: Any) -> str:
    """The feature of a case's mode (``bag-sum`` for a mode that is none of the four: its error case)."""
    return f"bag-{mode}" if isinstance(mode, str) and mode in MODES else "bag-sum"


def bag_features() -> tuple[str, ...]:
    """Every feature of the bag area an implementation may claim (the canonical markers are implied)."""
    return (*(f"bag-{m}" for m in MODES), TWO_D, WEIGHTS, WEIGHTED_MEAN, PADDING, LAST_OFFSET, SHARDING)


def _values(value: Any) -> Optional["np.ndarray"]:
    """An input array (encoded or decoded) as NumPy, None when absent or not decodable here (bfloat16 without
    ml_dtypes: its features are checked where it can be)."""
    if value is None:
        return None
    import numpy as np  # here: the command line's early start imports the features' names, never NumPy

    if isinstance(value, Mapping):
        from embconf.model.encoding import EncodingError, decode_array

        try:
            return decode_array(value)
        except EncodingError:
            return None
    return np.asarray(value)


def implied_features(
    operation: str, inputs: Mapping[str, Any], error: Optional[str], conventions: Any = ()
) -> set[str]:
    """The bag features a case of ``operation`` with ``inputs`` needs (``conventions``: the convention features
    it is computed under, whose canonical markers it then does not carry)."""
    if operation == SHARDING_OPERATION:
        return {SHARDING}
    if operation not in BAG_OPERATIONS:
        return set()
    mode = inputs.get("mode")
    needed = {mode_feature(mode)}
    ids = _values(inputs.get("ids"))
    if ids is not None and ids.ndim == 2:
        needed.add(TWO_D)
    if inputs.get("per_sample_weights") is not None:
        needed.add(WEIGHTS)
        if mode in WEIGHTED_MEAN_MODES:
            needed.add(WEIGHTED_MEAN)
    needed |= {
        feature for name, feature in (("padding_idx", PADDING), ("include_last_offset", LAST_OFFSET)) if name in inputs
    }
    convention_features = set(conventions)
    if ids is not None and ids.dtype.kind == "i" and bool((ids < 0).any()):
        if "bag-drop_negative_ids" not in convention_features:
            needed.add(NEGATIVE_IDS_REFUSED)
    weights = _values(inputs.get("per_sample_weights"))
    if error is None and weights is not None and weights.size and bool((weights.astype("float64") <= 0).any()):
        if "bag-prune_nonpositive_weights" not in convention_features:
            needed.add(NONPOSITIVE_WEIGHTS_KEPT)
    return needed


def case_feature_problems(operation: str, inputs: Mapping[str, Any], features: Any, error: Optional[str]) -> list[str]:
    """What a bag case's features lack or claim wrongly for its inputs (``embconf validate``)."""
    if operation not in (*BAG_OPERATIONS, SHARDING_OPERATION):
        return []
    from embconf.model.bag_conventions import KIND

    conventions = {f for f in features if f in KIND.features}
    undecided = _read_off_undecodable_values(inputs)
    needed = implied_features(operation, inputs, error, conventions) - undecided
    claimed = {f for f in features if f.startswith("bag-")} - conventions - undecided
    problems = [f"a bag case of these inputs needs feature {f!r}" for f in sorted(needed - claimed)]
    return problems + [f"feature {f!r} does not match the case's inputs" for f in sorted(claimed - needed)]


def _read_off_undecodable_values(inputs: Mapping[str, Any]) -> set[str]:
    """The features read off input values not decodable here (bfloat16 weights without ml_dtypes): judged where
    they can be, neither needed nor wrong here."""
    weights = inputs.get("per_sample_weights")
    return {NONPOSITIVE_WEIGHTS_KEPT} if weights is not None and _values(weights) is None else set()
