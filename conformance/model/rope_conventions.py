"""Rotary conventions an implementation may declare (spec section 14, EMB-ROPE-V1..V3, since 2.0.0), as it declares
a sinusoid profile: each is a documented choice of real code that the canonical cases would fail. A declared
convention makes the canonical cases it changes not applicable and adds the cases computed for it
(:mod:`embconf.corpus.conventions`); an implementation that has the convention without declaring it fails the
canonical cases as before.
"""

from __future__ import annotations

import enum
from typing import Any, Iterable, Optional

from embconf.model.declarations import ConventionKind, declared_names, enum_kind
from embconf.model.rope import ROTATIONS, TABLE_OPERATIONS

HALF_DTYPES = ("float16", "bfloat16")


class RopeConvention(enum.Enum):
    """A declared rotary convention: its name (as declared), feature, requirement and what it is."""

    NEGATIVE_SENSE = "negative_sense"
    ATTENTION_BY_CALLER = "attention_by_caller"
    FLOAT32_TABLES = "float32_tables"

    @property
    def kind(self) -> str:
        return "rope"

    @property
    def feature(self) -> str:
        """The feature of the cases under it (implied by the declaration, never claimed directly)."""
        return f"rope-{self.value}"

    @property
    def canonical_marker(self) -> Optional[str]:
        """None: it changes cases by their operation and features, not by a marker."""
        return None

    @property
    def computed(self) -> bool:
        """True: the run that declares it computes its cases from the canonical cases it changes."""
        return True

    def replaced(self) -> str:
        return f"a canonical rope case: it declares the rope convention {self.describe()}"

    @property
    def requirement(self) -> str:
        return {"negative_sense": "EMB-ROPE-V1", "attention_by_caller": "EMB-ROPE-V2", "float32_tables": "EMB-ROPE-V3"}[
            self.value
        ]

    def describe(self) -> str:
        return {
            "negative_sense": "rotation by the negative angle (nanochat)",
            "attention_by_caller": "YaRN's attention factor left to the caller (tables without it)",
            "float32_tables": "cos/sin in float32 whatever the dtype of x (strict precision)",
        }[self.value] + f" ({self.requirement})"

    def changes(self, operation: str, features: Iterable[str]) -> bool:
        """Whether a canonical case of ``operation`` with ``features`` has another answer under this convention
        (its cases are then not applicable: the case computed for the convention replaces it)."""
        found = set(features)
        if self.feature in found:
            return False
        if self is RopeConvention.NEGATIVE_SENSE:
            return operation in ROTATIONS
        if self is RopeConvention.ATTENTION_BY_CALLER:
            return operation in TABLE_OPERATIONS and "rope-yarn" in found
        return operation in ROTATIONS and bool(found & set(HALF_DTYPES))


def rope_conventions(declared: Any) -> frozenset[RopeConvention]:
    """The conventions ``declared`` names (a list of names); ValueError (one line) for anything else."""
    return declared_names("rope", RopeConvention, declared)


KIND: ConventionKind = enum_kind("rope", "rope", RopeConvention)
