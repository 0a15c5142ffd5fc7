"""Quantize conventions an implementation may declare (spec section 17, EMB-QNT-V1..V4, since 2.3.0), as it declares
a bag convention: each is a documented choice of real quantizers that the canonical ``quantize_table`` cases would
fail (rounding a tie the other way, dividing by the scale as stored, an affine bias from the minimum). A declared
convention makes the canonical cases it changes not applicable (they carry its canonical marker, implied unless it
is declared) and its own cases (feature ``quantize-<name>``) apply.
"""

from __future__ import annotations

import enum
from typing import Any, Iterable

from embconf.model.declarations import ConventionKind, declared_names, enum_kind

MARKERS = {
    "round_half_even": "quantize-ties-away",
    "round_half_away": "quantize-ties-even",
    "scale_as_stored": "quantize-scale-unrounded",
    "bias_from_min": "quantize-bias-edge",
}
DESCRIPTIONS = {
    "round_half_even": "a tie rounds to even where a ggml format's reference rounds it away or up",
    "round_half_away": "a tie rounds away from zero where an FBGEMM or MLX format's reference rounds it to even",
    "scale_as_stored": "values divided by the float16 scale as stored, not ggml's float32 one",
    "bias_from_min": "an affine group's bias is its minimum and its scale (max - min) / (2^bits - 1)",
}
FORMATS = {  # the kinds of format whose canonical answer a convention changes
    "round_half_even": ("q8_0", "q4_0"),
    "round_half_away": ("fused8_rowwise", "fused4_rowwise", "affine"),
    "scale_as_stored": ("q8_0", "q4_0"),
    "bias_from_min": ("affine",),
}


class QuantizeConvention(enum.Enum):
    """A declared quantize convention: its name (as declared), feature, requirement and what it is."""

    ROUND_HALF_EVEN = "round_half_even"
    ROUND_HALF_AWAY = "round_half_away"
    SCALE_AS_STORED = "scale_as_stored"
    BIAS_FROM_MIN = "bias_from_min"

    @property
    def kind(self) -> str:
        return "quantize"

    @property
    def feature(self) -> str:
        """The feature of the cases under it (implied by the declaration, never claimed directly)."""
        return f"quantize-{self.value}"

    @property
    def computed(self) -> bool:
        """False: its cases are frozen goldens only."""
        return False

    def replaced(self) -> str:
        return f"a canonical quantize case: it declares the quantize convention {self.describe()}"

    @property
    def canonical_marker(self) -> str:
        """The feature the canonical cases it changes carry (implied unless it is declared)."""
        return MARKERS[self.value]

    @property
    def requirement(self) -> str:
        return f"EMB-QNT-V{list(QuantizeConvention).index(self) + 1}"

    @property
    def formats(self) -> tuple[str, ...]:
        """The kinds of format it applies to (:attr:`embconf.model.quantized.QuantFormat.kind`)."""
        return FORMATS[self.value]

    def describe(self) -> str:
        return f"{DESCRIPTIONS[self.value]} ({self.requirement})"

    def changes(self, operation: str, features: Iterable[str]) -> bool:
        """Whether a canonical case with ``features`` has another answer under this convention (it carries the
        marker)."""
        return self.canonical_marker in set(features)


def quantize_conventions(declared: Any) -> frozenset[QuantizeConvention]:
    """The conventions ``declared`` names (a list of names); ValueError (one line) for anything else."""
    return declared_names("quantize", QuantizeConvention, declared)


KIND: ConventionKind = enum_kind("quantize", "quantized", QuantizeConvention, MARKERS.values())
