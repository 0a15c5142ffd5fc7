"""Quantized tables (spec section 17, EMB-QNT, since 2.3.0): the formats by name, their row layouts and byte sizes,
and the features a quantized case carries. Pure Python: the byte codec is :mod:`embconf.reference.quantized_codec`.

A format is named after the public format it is: ggml's ``q8_0`` and ``q4_0`` (blocks of 32), FBGEMM's
``fused8_rowwise`` and ``fused4_rowwise`` (the scale and bias after each row), and MLX's affine groups
``affine<bits>_g<group>`` with float32 scales and biases, ``..._float16`` or ``..._bfloat16`` with half ones
(``affine4_g64_float16``). A table is carried as its bytes: ``qweight`` of shape ``(num_rows, row_bytes)``, one
integer 0..255 per byte (int32 on the wire and in fixtures).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

BLOCK_FORMATS = ("q8_0", "q4_0")  # ggml: blocks of 32 values, a float16 d first
ROWWISE_FORMATS = ("fused8_rowwise", "fused4_rowwise")  # FBGEMM: the scale and bias after the row
AFFINE_BITS = (1, 2, 3, 4, 5, 6, 8)
AFFINE_GROUPS = (32, 64, 128)
SCALE_DTYPES = {"float32": 4, "float16": 2, "bfloat16": 2}
AFFINE_NAME = re.compile(r"affine([0-9])_g([0-9]+)(?:_(float16|bfloat16))?")
GGML_BLOCK = 32
MODES = ("sum", "mean")  # the reductions of quantized_bag_forward
OUT_DTYPES = ("float32", "float16")
BAG_WEIGHTS = "quant-bag-weights"


@dataclass(frozen=True)
class QuantFormat:
    """One format: its kind (the name of its family of layouts), the width of a stored value, how many values
    share a scale, where the scale and bias live and in which dtype."""

    name: str
    kind: str  # "q8_0", "q4_0", "fused8_rowwise", "fused4_rowwise" or "affine"
    bits: int  # of one stored value
    group: Optional[int]  # values sharing one scale (None: the whole row)
    scale_dtype: str  # "float32", "float16" or "bfloat16"
    signed: bool  # q8_0's int8; every other format's values are unsigned

    @property
    def feature(self) -> str:
        """The feature every case of the format carries (``quant-affine`` for every affine format)."""
        return f"quant-{self.kind}"

    def check_width(self, embed_dim: int) -> Optional[str]:
        """Why ``embed_dim`` does not fit the format (a width not a multiple of its block or group), or None."""
        if self.group is not None and embed_dim % self.group:
            return f"embed_dim {embed_dim} is not a multiple of the {self.name} block of {self.group}"
        return None

    def row_bytes(self, embed_dim: int) -> int:
        """The bytes of one row of ``embed_dim`` values (EMB-QNT-13); the width must fit (:meth:`check_width`)."""
        scale = SCALE_DTYPES[self.scale_dtype]
        if self.kind in BLOCK_FORMATS:
            return embed_dim // GGML_BLOCK * (scale + GGML_BLOCK * self.bits // 8)
        if self.kind in ROWWISE_FORMATS:
            return -(-embed_dim * self.bits // 8) + 2 * scale
        assert self.group is not None
        return embed_dim * self.bits // 8 + 2 * (embed_dim // self.group) * scale


def parse_format(name: Any) -> Optional[QuantFormat]:
    """The format named ``name``, or None for anything else (the caller's ``invalid_config``)."""
    if not isinstance(name, str):
        return None
    fixed = {
        "q8_0": QuantFormat("q8_0", "q8_0", 8, GGML_BLOCK, "float16", True),
        "q4_0": QuantFormat("q4_0", "q4_0", 4, GGML_BLOCK, "float16", False),
        "fused8_rowwise": QuantFormat("fused8_rowwise", "fused8_rowwise", 8, None, "float32", False),
        "fused4_rowwise": QuantFormat("fused4_rowwise", "fused4_rowwise", 4, None, "float16", False),
    }
    if name in fixed:
        return fixed[name]
    match = AFFINE_NAME.fullmatch(name)
    if match is None:
        return None
    bits, group = int(match.group(1)), int(match.group(2))
    if bits not in AFFINE_BITS or group not in AFFINE_GROUPS or match.group(2) != str(group):
        return None
    return QuantFormat(name, "affine", bits, group, match.group(3) or "float32", False)


def format_features() -> tuple[str, ...]:
    """The format features an implementation may claim, one a kind of format."""
    return tuple(f"quant-{kind}" for kind in (*BLOCK_FORMATS, *ROWWISE_FORMATS, "affine"))


def case_features(inputs: dict[str, Any]) -> tuple[str, ...]:
    """The features a quantized case's inputs imply: its format's (``quant-q8_0`` for a name that is no format:
    its error case), ``float16`` for a half output, ``quant-bag-weights`` with per-sample weights."""
    fmt = parse_format(inputs.get("format"))
    found = [fmt.feature if fmt is not None else "quant-q8_0"]
    if inputs.get("out_dtype") == "float16":
        found.append("float16")
    if inputs.get("per_sample_weights") is not None:
        found.append(BAG_WEIGHTS)
    return tuple(found)
