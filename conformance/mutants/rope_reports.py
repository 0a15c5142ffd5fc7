"""Mistakes of rotary embeddings found in the trackers and pull requests of the projects that ship them (area rope),
each citing its report: a scaling ignored or inverted, YaRN's correction range rounded against the case's
``truncate``, YaRN's factor raised to the exponent, dynamic NTK computed once for the longest length, partial
rotary's frequencies over the head dim, the rotation applied twice. Each is a :class:`~embconf.mutants.rope.Slip`
(its backward the gradient of its forward) or the reference on a changed scaling (``rope_families.changed_inputs``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.mutants.rope import Slip, slip
from embconf.mutants.rope_families import changed_inputs
from embconf.reference.rope import inverse_frequencies

REPORTED: list[str] = []  # the primary ids this module registers (killed by the goldens, ranked in the tests)


def _type(scaling: Any) -> str:
    return str(scaling.get("rope_type", "default")) if isinstance(scaling, Mapping) else "default"


def _unscaled(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    return ({"rope_type": "default"} if _type(scaling) in ("linear", "llama3", "yarn") else scaling), ids


def _inverted(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
    if _type(scaling) != "linear" or not scaling.get("factor"):
        return scaling, ids
    return {**scaling, "factor": 1.0 / float(scaling["factor"])}, ids


def _truncating(truncate: bool) -> Any:
    def change(scaling: Mapping[str, Any], ids: np.ndarray, pairing: Optional[str]) -> tuple[Any, np.ndarray]:
        return ({**scaling, "truncate": truncate} if _type(scaling) == "yarn" else scaling), ids

    return change


def static_dynamic(rotary_dim: int, base: float, scaling: Any, largest: int) -> tuple[Any, Any]:
    """dynamic NTK grown for L = original * factor at every call (vLLM's cache), whatever the call's positions."""
    if _type(scaling) == "dynamic":
        longest = int(float(scaling["original_max_position_embeddings"]) * float(scaling.get("factor") or 1.0))
        largest = max(longest - 1, 0)
    return inverse_frequencies(rotary_dim, base, scaling, largest)


def factor_in_power(rotary_dim: int, base: float, scaling: Any, largest: int) -> tuple[Any, Any]:
    """YaRN whose interpolated frequencies are (factor * base)^(-2k/r), not base^(-2k/r) / factor: the ramp (the
    share of the original frequency) is the spec's, recovered from the spec's frequencies."""
    theta, attention = inverse_frequencies(rotary_dim, base, scaling, largest)
    if _type(scaling) != "yarn" or float(scaling.get("factor") or 1.0) == 1.0:
        return theta, attention
    factor, k = float(scaling["factor"]), np.arange(rotary_dim // 2, dtype=np.float64)
    original = float(base) ** (-2.0 * k / rotary_dim)
    interpolated = original / factor
    keep = (np.asarray(theta, dtype=np.float64) - interpolated) / (original - interpolated)
    return (factor * float(base)) ** (-2.0 * k / rotary_dim) * (1 - keep) + original * keep, attention


def _changed(name: str, description: str, hint: str, change: Any, source: str, tables_too: bool = True) -> None:
    changed_inputs(name, description, hint, change, tables_too=tables_too, source=source)
    REPORTED.append(f"rope.{name}")


def _slipped(name: str, description: str, hint: str, made: Slip, source: str, tables_too: bool = True) -> None:
    slip(name, description, hint, made, tables_too=tables_too, source=source)
    REPORTED.append(f"rope.{name}")


YARN_RANGE = "round YaRN's correction range (floor low, ceil high) unless the scaling says truncate: false (EMB-ROPE-9)"
_changed(
    "scaling_ignored",
    "ignores the case's linear, llama3 or yarn scaling: plain theta_k = base^(-2k/rotary_dim) and no attention factor",
    "apply the scaling the case asks for to theta_k (and YaRN's attention factor to cos and sin) (EMB-ROPE-7, 9, 10)",
    _unscaled,
    "https://github.com/IBM/text-generation-inference/pull/61 (models with a linear rope_scaling loaded fine but "
    "gave garbage output: the scaling was never applied); felafax #59 (Llama 3.1's frequency scaling missing)",
)
_changed(
    "linear_factor_multiplied",
    "multiplies by the linear scaling factor where it divides (a frequency scale of factor, not 1/factor): every "
    "frequency is factor^2 times the scaled theta_k",
    "linear scaling divides: theta_k / factor, or position / factor (EMB-ROPE-7)",
    _inverted,
    "https://github.com/ggml-org/llama.cpp/pull/2544 (--rope-freq-scale is the inverse of the config's linear "
    "factor; issue #2530 passed --rope-freq-scale 8.0 for a factor-8 model)",
)
_changed(
    "yarn_always_truncates",
    "rounds YaRN's correction range to integers (floor, ceil) even where the scaling says truncate: false",
    YARN_RANGE,
    _truncating(True),
    "https://github.com/vllm-project/vllm/issues/27722 (yarn_find_correction_range always rounded: GPT-OSS's "
    "truncate false ignored; fixed by #28244)",
    tables_too=False,  # no rope_tables golden asks for truncate: false
)
_changed(
    "yarn_never_truncates",
    "never rounds YaRN's correction range (truncate taken as false when the scaling does not say it)",
    YARN_RANGE,
    _truncating(False),
    "https://github.com/keras-team/keras-hub/pull/2981 (RotaryEmbedding's YaRN defaulted truncate to False where "
    "the reference reads True)",
)
_slipped(
    "yarn_factor_in_power",
    "raises YaRN's factor with the base to the exponent: interpolated frequencies (factor*base)^(-2k/r) instead of "
    "base^(-2k/r) / factor",
    "YaRN's interpolated frequency is theta_k / factor, mixed with theta_k by the ramp (EMB-ROPE-9)",
    Slip(frequencies=factor_in_power),
    "https://github.com/apache/tvm/pull/18576 (freq_inter = 1 / (scaling_factor * theta)^(2d/d_range): the "
    "factor affected by the exponent)",
)
_slipped(
    "dynamic_static_length",
    "dynamic NTK grown once for L = original * factor (a cache for the longest length): the same base at every "
    "call, scaled even for positions within the original length",
    "grow the base from each call's max(position_ids) + 1, and only past the original length (EMB-ROPE-8)",
    Slip(frequencies=static_dynamic),
    "https://github.com/vllm-project/vllm/issues/41236 (max_len = max_position_embeddings * scaling_factor makes "
    "the dynamic base a constant; issue #5093)",
    tables_too=False,  # no rope_tables golden has dynamic scaling within the original length
)
_slipped(
    "partial_frequencies_over_head_dim",
    "computes partial rotary's frequencies over the head dim d: theta_k = base^(-2k/d) for the rotary_dim features "
    "it rotates",
    "theta_k = base^(-2k/rotary_dim): inv_freq over the rotated width, not the head's (EMB-ROPE-1, 4)",
    Slip(over_width=True),
    "https://github.com/huggingface/transformers/pull/48652 (inv_freq built over the full head_dim while only "
    "rotary_ndims features rotate; pie-project/pie #603: theta^(-2i/head_dim))",
    tables_too=False,
)
_slipped(
    "applied_twice",
    "applies the rotation twice: every angle is 2*pos*theta_k and cos and sin carry the attention factor squared",
    "rotate q and k once: one place applies rope (EMB-ROPE-2)",
    Slip(times=2),
    "https://github.com/NVIDIA/TensorRT-LLM/pull/16378 (yarn missing from is_rope(): the Python module and the "
    "attention backend both rotated, by twice the angle with mscale squared)",
    tables_too=False,
)
