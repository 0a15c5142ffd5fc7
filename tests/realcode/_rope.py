"""A correct rotary embedding built from small steps, so that each corpus module overrides only its mistakes.

``Rope`` computes, as the spec says (SPEC.md section 14, Hugging Face's formulas), from the base it is given: the frequencies of every
scaling family (``inv_freq``), the attention factor (``attention``), the positions, the angles, the (cos, sin)
tables, the pair columns of each pairing and the rotation, forward and backward (the transpose). A module
subclasses it, overrides the step its source got wrong, and exports ``functions()``. Written for this corpus; it
imports nothing from embconf.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from _spec import check_grad, check_rope

BETA_FAST, BETA_SLOW = 32.0, 1.0


class Rope:
    """The spec's rotary embedding; every method is one step a port can get wrong."""

    work = np.float64  # the dtype the angles are computed in
    call_dtype = "float32"  # the call's dtype: rope_tables' argument, x's in the forward and backward
    call_width = None  # x's last axis in the forward and backward (None in rope_tables)

    def given_base(self, base: float) -> float:
        """The base the port uses: the config's."""
        return base

    def positions(self, position_ids: Any) -> np.ndarray:
        return np.asarray(position_ids).astype(self.work)

    def base_of(self, rotary_dim: int, base: float, scaling: dict, position_ids: Any) -> float:
        if scaling.get("rope_type") != "dynamic":
            return base
        length = int(np.max(position_ids, initial=0)) + 1
        original, factor = scaling["original_max_position_embeddings"], scaling["factor"]
        if length <= original:
            return base
        return base * ((factor * length / original) - (factor - 1)) ** (rotary_dim / (rotary_dim - 2))

    def exponents(self, rotary_dim: int) -> np.ndarray:
        return np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim

    def inv_freq(self, rotary_dim: int, base: float, scaling: dict, position_ids: Any) -> np.ndarray:
        base = self.given_base(base)
        inv = 1.0 / self.base_of(rotary_dim, base, scaling, position_ids) ** self.exponents(rotary_dim)
        kind = scaling.get("rope_type", "default")
        if kind == "linear":
            return inv / scaling["factor"]
        if kind == "llama3":
            return self.llama3(inv, scaling)
        if kind == "yarn":
            return self.yarn(rotary_dim, base, scaling)
        return inv

    def llama3(self, inv: np.ndarray, s: dict) -> np.ndarray:
        factor, original = s["factor"], s["original_max_position_embeddings"]
        low, high = s["low_freq_factor"], s["high_freq_factor"]
        wavelen = 2 * math.pi / inv
        scaled = np.where(wavelen > original / low, inv / factor, inv)
        smooth = (original / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < original / high) & ~(wavelen > original / low)
        return np.where(medium, smoothed, scaled)

    def yarn_bounds(self, rotary_dim: int, base: float, s: dict) -> tuple[float, float]:
        original = s["original_max_position_embeddings"]

        def dim(rotations: float) -> float:
            return rotary_dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

        low, high = dim(s.get("beta_fast") or BETA_FAST), dim(s.get("beta_slow") or BETA_SLOW)
        if s.get("truncate", True) is not False:
            low, high = math.floor(low), math.ceil(high)
        return max(low, 0), min(high, rotary_dim - 1)

    def yarn(self, rotary_dim: int, base: float, s: dict) -> np.ndarray:
        extrapolation = base ** -(np.arange(0, rotary_dim, 2, dtype=np.float64) / rotary_dim)
        low, high = self.yarn_bounds(rotary_dim, base, s)
        if low == high:
            high += 0.001
        ramp = np.clip((np.arange(rotary_dim // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
        return extrapolation / s["factor"] * ramp + extrapolation * (1.0 - ramp)

    def attention(self, scaling: dict) -> float:
        if scaling.get("rope_type") != "yarn":
            return 1.0
        if scaling.get("attention_factor") is not None:
            return float(scaling["attention_factor"])

        def mscale(scale: float, m: float = 1.0) -> float:
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        factor = scaling["factor"]
        if scaling.get("mscale") and scaling.get("mscale_all_dim"):
            return mscale(factor, scaling["mscale"]) / mscale(factor, scaling["mscale_all_dim"])
        return mscale(factor)

    def angles(self, position_ids: Any, inv_freq: np.ndarray) -> np.ndarray:
        return self.positions(position_ids)[:, None] * inv_freq.astype(self.work)[None, :]

    def tables(self, position_ids: Any, rotary_dim: int, base: float, scaling: Any) -> tuple[np.ndarray, np.ndarray]:
        scaling = dict(scaling or {})
        theta = self.angles(position_ids, self.inv_freq(rotary_dim, base, scaling, position_ids))
        a = self.attention(scaling)
        return a * np.cos(theta).astype(np.float64), a * np.sin(theta).astype(np.float64)

    def columns(self, rotary_dim: int, width: int, pairing: str) -> tuple[np.ndarray, np.ndarray]:
        h = rotary_dim // 2
        if pairing == "half_split":
            return np.arange(h), np.arange(h) + h
        return 2 * np.arange(h), 2 * np.arange(h) + 1

    def rotate(self, v: np.ndarray, cos: np.ndarray, sin: np.ndarray, rotary_dim: int, pairing: str, sign: float):
        i, j = self.columns(rotary_dim, v.shape[-1], pairing)
        wide = v.astype(np.float64)
        out = wide.copy()
        out[..., i] = wide[..., i] * cos - sign * wide[..., j] * sin
        out[..., j] = wide[..., j] * cos + sign * wide[..., i] * sin
        return out.astype(v.dtype)

    def rope_tables(self, position_ids, rotary_dim, base, scaling, dtype="float32"):
        check_rope(None, position_ids, rotary_dim, base, scaling)
        self.call_dtype, self.call_width = dtype, None
        cos, sin = self.tables(position_ids, rotary_dim, base, scaling)
        return self.cast(cos, dtype), self.cast(sin, dtype)

    def cast(self, table: np.ndarray, dtype: str) -> np.ndarray:
        if dtype == "bfloat16":
            import ml_dtypes

            return table.astype(ml_dtypes.bfloat16)
        return table.astype(dtype)

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
        self.call_dtype, self.call_width = str(np.asarray(x).dtype), np.shape(x)[-1]
        cos, sin = self.tables(position_ids, rotary_dim, base, scaling)
        return self.rotate(x, cos, sin, rotary_dim, pairing, 1.0)

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
        check_grad(x, grad_output)
        self.call_dtype, self.call_width = str(np.asarray(x).dtype), np.shape(x)[-1]
        cos, sin = self.tables(position_ids, rotary_dim, base, scaling)
        return self.rotate(grad_output, cos, sin, rotary_dim, pairing, -1.0)

    def functions(self) -> tuple[Callable[..., Any], ...]:
        """(rope_tables, rope_forward, rope_backward) as the ``functions:`` interface names them."""
        return self.rope_tables, self.rope_forward, self.rope_backward


FEATURES = ["rope-half_split", "rope-interleaved", "rope-partial", "rope-positions"]
SCALED = ["rope-linear", "rope-dynamic", "rope-yarn", "rope-llama3"]
