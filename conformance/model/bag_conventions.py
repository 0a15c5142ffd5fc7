"""Bag conventions an implementation may declare (spec section 16, EMB-BAG-V1, V2, since 2.1.0), as it declares a
rotary convention: each is a documented choice of real code (TensorFlow's ``safe_embedding_lookup_sparse``) that
the canonical cases would fail. A declared convention makes the canonical cases it changes not applicable (they
carry its canonical marker, implied unless it is declared: :mod:`embconf.model.bag`) and the cases under its
feature ``bag-<name>`` apply; an implementation that has the convention without declaring it fails the canonical
cases as before.
"""

from __future__ import annotations

import enum
from typing import Any, Iterable

from embconf.model.bag import NEGATIVE_IDS_REFUSED, NONPOSITIVE_WEIGHTS_KEPT
from embconf.model.declarations import ConventionKind, declared_names, enum_kind


class BagConvention(enum.Enum):
    """A declared bag convention: its name (as declared), feature, requirement and what it is."""

    DROP_NEGATIVE_IDS = "drop_negative_ids"
    PRUNE_NONPOSITIVE_WEIGHTS = "prune_nonpositive_weights"

    @property
    def kind(self) -> str:
        return "bag"

    @property
    def feature(self) -> str:
        """The feature of the cases under it (implied by the declaration, never claimed directly)."""
        return f"bag-{self.value}"

    @property
    def computed(self) -> bool:
        """True: besides its frozen goldens, the run that declares it computes a case from each canonical case it
        changes (a declaration never leaves a case with nothing in its place)."""
        return True

    def replaced(self) -> str:
        return f"a canonical bag case: it declares the bag convention {self.describe()}"

    @property
    def canonical_marker(self) -> str:
        """The feature the canonical cases it changes carry (implied unless it is declared)."""
        return NEGATIVE_IDS_REFUSED if self is BagConvention.DROP_NEGATIVE_IDS else NONPOSITIVE_WEIGHTS_KEPT

    @property
    def requirement(self) -> str:
        return "EMB-BAG-V1" if self is BagConvention.DROP_NEGATIVE_IDS else "EMB-BAG-V2"

    def describe(self) -> str:
        return {
            "drop_negative_ids": "ids < 0 dropped, not refused (TensorFlow safe_embedding_lookup_sparse)",
            "prune_nonpositive_weights": "positions of weight <= 0 dropped (TensorFlow safe_embedding_lookup_sparse)",
        }[self.value] + f" ({self.requirement})"

    def changes(self, operation: str, features: Iterable[str]) -> bool:
        """Whether a canonical case with ``features`` has another answer under this convention (it carries the
        marker; ``operation`` says nothing more)."""
        return self.canonical_marker in set(features)


def bag_conventions(declared: Any) -> frozenset[BagConvention]:
    """The conventions ``declared`` names (a list of names); ValueError (one line) for anything else."""
    return declared_names("bag", BagConvention, declared)


KIND: ConventionKind = enum_kind("bag", "bags", BagConvention, (c.canonical_marker for c in BagConvention))
