"""Mistakes of rotary position embeddings (area rope), each a wrong way of building or applying cos/sin.

A mistake is a :class:`Slip` (what it changes: the positions, the base, the precision of the angles or the
tables, the pairing, the sign, ...). Its forward rotates x by its own (cos, sin), its backward is the gradient of
that forward (the transpose: (cos, -sin)), as an autograd framework computes it; the frequencies (with the
case's scaling) are the reference's (``inverse_frequencies``), so a slip changes only what it names. A slip
of the tables registers a second mutant ``rope.tables.NAME`` for rope_tables, sharing the mistake's identity.
The precision slips reproduce public bugs: transformers #25681 and #29285, gpt-neox #1003, candle #3520,
modded-nanogpt #39.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable, Optional

import numpy as np

from embconf.model.dtypes import rounded_to
from embconf.model.rope import ROTATIONS
from embconf.mutants.base import Mutant, register
from embconf.reference import OPERATIONS
from embconf.reference.rope import inverse_frequencies, pair_columns, per_row, position_grid

(FWD, BWD), TABLES = ROTATIONS, "rope_tables"
ACTIVATIONS = "activations"  # the dtype of the activations (x, or the tables asked for)
FIX_PRECISION = (
    "compute positions, inv_freq and their product in float32 or wider; round only cos/sin, once, to the output dtype"
)


@dataclass(frozen=True)
class Slip:
    """What a mistake changes; the defaults are the spec's computation."""

    offset: int = 0  # added to every position
    ignore_positions: bool = False  # positions 0..T-1 whatever position_ids says
    base: Optional[Callable[[float, int], float]] = None  # (base, rotary_dim) -> the base used
    angle_precision: str = ""  # positions, inv_freq and their product in this dtype
    inv_freq_precision: str = ""  # inv_freq alone rounded to this dtype (product in float32)
    positions_precision: str = ""  # ACTIVATIONS: positions made in x's dtype (inv_freq and product in float32)
    table_precision: str = ""  # cos and sin rounded to this dtype before use
    swap: bool = False  # cos and sin exchanged
    every_band: bool = False  # llama3 / yarn: frequencies divided by the factor in every band
    no_attention_factor: bool = False  # yarn: cos and sin not multiplied by the attention factor
    sin_sign: float = 1.0  # -1: rotate_half's sign flipped (the rotation by the negative angle)
    other_pairing: bool = False
    rotate_all: bool = False  # rotary_dim taken as d
    backward_forward: bool = False  # the backward rotates by +angle (not the gradient of the forward)
    largest: Optional[int] = None  # dynamic NTK grown for this largest position (a module's kept state), not the call's
    frequencies: Optional[Callable[[int, float, Any, int], tuple[Any, Any]]] = None  # replaces inverse_frequencies
    times: int = 1  # the rotation applied this many times: every angle times it, the attention factor to its power
    over_width: bool = False  # theta_k = base^(-2k/d) with d = x's width, rotating only rotary_dim features


def tables(
    slip: Slip, position_ids: Any, rotary_dim: int, base: float, scaling: Any, activations: str = "float32"
) -> tuple[np.ndarray, np.ndarray]:
    """This slip's (cos, sin), (..., T, h) float64, for activations (x, or the tables asked for) of that dtype."""
    positions = np.asarray(position_ids, dtype=np.int64)
    if slip.ignore_positions:
        positions = np.broadcast_to(np.arange(positions.shape[-1], dtype=np.int64), positions.shape)
    positions = position_grid(positions + slip.offset, rotary_dim, scaling)  # (..., T, h): each k's position
    used = slip.base(float(base), rotary_dim) if slip.base else float(base)
    largest = int(positions.max(initial=0)) if slip.largest is None else slip.largest
    theta, attention = (slip.frequencies or inverse_frequencies)(rotary_dim, used, scaling, largest)
    mapping = scaling if isinstance(scaling, Mapping) else {}
    if slip.every_band and mapping.get("rope_type") in ("llama3", "yarn"):
        plain, _ = inverse_frequencies(rotary_dim, used, None, largest)
        theta = plain / float(mapping["factor"])
    if slip.no_attention_factor:
        attention = 1.0
    with np.errstate(all="ignore"):
        if slip.angle_precision:  # a product of two half numbers is exact in float64: one rounding is the half multiply
            held = rounded_to(positions, slip.angle_precision) * rounded_to(theta, slip.angle_precision)
            angles = rounded_to(held, slip.angle_precision)
        elif slip.inv_freq_precision:
            rounded = rounded_to(theta, slip.inv_freq_precision).astype(np.float32)
            angles = (positions.astype(np.float32) * rounded).astype(np.float64)
        elif slip.positions_precision == ACTIVATIONS and activations in ("float16", "bfloat16"):
            held = rounded_to(positions, activations).astype(np.float32)
            angles = (held * theta.astype(np.float32)).astype(np.float64)
        else:
            angles = positions.astype(np.float64) * theta
    angles, attention = angles * slip.times, attention**slip.times
    with np.errstate(all="ignore"):  # float16 positions past 65504 are inf: their angles are NaN, as in the bug
        cos, sin = attention * np.cos(angles), attention * np.sin(angles)
    if slip.table_precision:
        cos, sin = rounded_to(cos, slip.table_precision), rounded_to(sin, slip.table_precision)
    return (sin, cos) if slip.swap else (cos, sin)


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, rotary_dim: int, pairing: str) -> np.ndarray:
    """out_i = x_i cos - x_j sin, out_j = x_j cos + x_i sin for each pair (i, j); the rest passed through."""
    i, j = pair_columns(rotary_dim, pairing)
    wide = np.asarray(x, dtype=np.float64)
    cos, sin = per_row(cos, wide), per_row(sin, wide)
    out = wide.copy()
    with np.errstate(all="ignore"):
        out[..., i] = wide[..., i] * cos - wide[..., j] * sin
        out[..., j] = wide[..., j] * cos + wide[..., i] * sin
    return out.astype(x.dtype)


def _shape(slip: Slip, x: np.ndarray, rotary_dim: int, pairing: str) -> tuple[Slip, int, str]:
    """(the slip as it reads x, the features it rotates, its pairing)."""
    dim = x.shape[-1] if slip.rotate_all and x.shape[-1] % 2 == 0 else rotary_dim
    if slip.over_width:  # base^(-2k/d) is (base^(r/d))^(-2k/r)
        width = x.shape[-1]
        slip = replace(slip, base=lambda b, r: b ** (r / width))
    return (
        slip,
        dim,
        ({"half_split": "interleaved", "interleaved": "half_split"}[pairing] if slip.other_pairing else pairing),
    )


def forward(slip: Slip) -> Callable[..., np.ndarray]:
    def rope_forward(
        x: np.ndarray, position_ids: Any, rotary_dim: int, base: float, scaling: Any, pairing: str
    ) -> np.ndarray:
        OPERATIONS[FWD](x, position_ids, rotary_dim, base, scaling, pairing)  # the spec's checks, and errors
        made, dim, pairs = _shape(slip, x, rotary_dim, pairing)
        cos, sin = tables(made, position_ids, dim, base, scaling, np.dtype(x.dtype).name)
        return rotate(x, cos, slip.sin_sign * sin, dim, pairs)

    return rope_forward


def backward(slip: Slip) -> Callable[..., np.ndarray]:
    def rope_backward(
        x: np.ndarray,
        position_ids: Any,
        rotary_dim: int,
        base: float,
        scaling: Any,
        pairing: str,
        grad_output: np.ndarray,
    ) -> np.ndarray:
        OPERATIONS[BWD](x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
        made, dim, pairs = _shape(slip, x, rotary_dim, pairing)
        cos, sin = tables(made, position_ids, dim, base, scaling, np.dtype(x.dtype).name)
        transpose = 1.0 if slip.backward_forward else -1.0
        return rotate(grad_output, cos, transpose * slip.sin_sign * sin, dim, pairs)

    return rope_backward


def table_operation(slip: Slip) -> Callable[..., tuple[np.ndarray, np.ndarray]]:
    def rope_tables(
        position_ids: Any, rotary_dim: int, base: float, scaling: Any, dtype: str = "float32"
    ) -> tuple[np.ndarray, np.ndarray]:
        want = OPERATIONS[TABLES](position_ids, rotary_dim, base, scaling, dtype)
        cos, sin = tables(slip, position_ids, rotary_dim, base, scaling, dtype)
        return cos.astype(want[0].dtype), sin.astype(want[1].dtype)

    return rope_tables


def slip(
    name: str,
    description: str,
    hint: str,
    made: Slip,
    tables_too: bool = True,
    source: str = "",
    only: str = "",
) -> None:
    """Register ``rope.NAME`` (forward and backward, or the one operation ``only`` names) and, for a slip of the
    tables, ``rope.tables.NAME`` (rope_tables), one mistake."""
    ops: dict[str, Any] = {FWD: forward(made), BWD: backward(made)}
    ops = {only: ops[only]} if only else ops
    primary = register(Mutant(f"rope.{name}", description, hint, ops, source=source))
    if tables_too:
        register(
            replace(primary, id=f"rope.tables.{name}", overrides={TABLES: table_operation(made)}, mistake=primary.id)
        )


PRECISION = "https://github.com/huggingface/transformers/issues/25681"
slip(
    "pairing_swapped",
    "pairs the other features: interleaved (2k, 2k+1) where half_split (k, k+h) is asked, or the reverse",
    "pair features as the case's pairing says; or declare the pairing you implement (rope-half_split / rope-interleaved)",
    Slip(other_pairing=True),
    tables_too=False,
)
slip(
    "rotate_half_sign",
    "flips rotate_half's sign (cat(x2, -x1)): every pair is rotated by the negative angle",
    "rotate_half(x) = cat(-x2, x1), out = x*cos + rotate_half(x)*sin",
    Slip(sin_sign=-1.0),
    tables_too=False,
    only=FWD,  # its autograd backward rotates by +angle: that is rope.backward_rotates_forward, on its own
)
slip(
    "positions_from_1",
    "counts positions from 1: every angle is that of position_ids + 1",
    "angle = position_ids * theta_k, with position_ids as given (the first token has position 0)",
    Slip(offset=1),
)
slip(
    "position_ids_ignored",
    "ignores position_ids: rotates row t by the angle of position t (a cache offset or packed restarts lost)",
    "index cos/sin by position_ids, not by the row number",
    Slip(ignore_positions=True),
)
slip(
    "frequencies_over_d_minus_1",
    "divides the frequency exponent by rotary_dim - 1: theta_k = base^(-2k/(d-1))",
    "theta_k = base^(-2k/d) with d = rotary_dim: inv_freq = 1 / base ** (arange(0, d, 2) / d)",
    Slip(base=lambda b, r: b ** (r / (r - 1)) if r > 1 else b),
)
slip(
    "frequencies_step_1",
    "takes arange(0, d) without step 2: theta_k = base^(-k/d)",
    "inv_freq = 1 / base ** (arange(0, d, 2) / d): the exponent is 2k/d",
    Slip(base=lambda b, r: b**0.5),
)
slip(
    "base_ignored",
    "ignores the base argument and uses 10000 (a Llama 3 checkpoint, base 500000, in Llama 2 code)",
    "theta_k = base^(-2k/d) with the case's base",
    Slip(base=lambda b, r: 10000.0),
)
slip(
    "cos_sin_swapped",
    "swaps cos and sin: the pairs are rotated by pi/2 minus the angle",
    "out = x*cos + rotate_half(x)*sin, cos = cos(angle), sin = sin(angle)",
    Slip(swap=True),
)
slip(
    "angles_bfloat16",
    "computes the angles in bfloat16 (positions, inv_freq and their product): the error grows with the position",
    FIX_PRECISION,
    Slip(angle_precision="bfloat16"),
    source=PRECISION,
)
slip(
    "angles_float16",
    "computes the angles in float16 (positions, inv_freq and their product): the error grows with the position",
    FIX_PRECISION,
    Slip(angle_precision="float16"),
    source="https://github.com/EleutherAI/gpt-neox/issues/1003",
)
slip(
    "inv_freq_bfloat16",
    "rounds inv_freq to bfloat16 before multiplying by the positions: the angle error grows with the position",
    FIX_PRECISION,
    Slip(inv_freq_precision="bfloat16"),
    source="https://github.com/huggingface/transformers/issues/29496",
)
slip(
    "positions_in_activation_dtype",
    "makes the positions in the activations' dtype (arange(T, dtype=x.dtype)): in bfloat16 they are not exact "
    "above 256, in float16 above 2048",
    FIX_PRECISION,
    Slip(positions_precision=ACTIVATIONS),
    source="https://github.com/nkalyanv99/UNI-D2/pull/6",
)
slip(
    "cos_sin_bfloat16",
    "rounds cos and sin to bfloat16 and rotates a float32 x with them",
    "keep cos/sin in float32 for a float32 x; round them to x's dtype only for a half-precision x",
    Slip(table_precision="bfloat16"),
    source="https://github.com/KellerJordan/modded-nanogpt/issues/39",
)
slip(
    "scaling_every_band",
    "divides every frequency by the scaling factor: llama3 and yarn scale only the low-frequency bands",
    "apply the family's band rule (llama3: wavelength cutoffs; yarn: the beta_fast/beta_slow ramp)",
    Slip(every_band=True),
)
slip(
    "yarn_attention_factor_missing",
    "leaves out yarn's attention factor: cos and sin are not multiplied by it",
    "multiply cos and sin by the attention factor (given, or 0.1*ln(factor) + 1)",
    Slip(no_attention_factor=True),
)
slip(
    "partial_rotates_all",
    "ignores rotary_dim: rotates every feature, with frequencies over the head dim",
    "rotate only x[..., :rotary_dim] with theta_k = base^(-2k/rotary_dim); pass the rest through unchanged",
    Slip(rotate_all=True),
    tables_too=False,
)
slip(
    "backward_rotates_forward",
    "the backward rotates grad_output by +angle, as the forward does, instead of by -angle (the transpose)",
    "grad_x = the rotation of grad_output by the negative angle: g_i*cos + g_j*sin, g_j*cos - g_i*sin",
    Slip(backward_forward=True),
    tables_too=False,
    only=BWD,
)


def _usable(rotary_dim: Any, width: int) -> Any:
    """The rotary_dim an unchecked implementation ends up using: slicing clips it to d, pairs drop an odd feature."""
    if isinstance(rotary_dim, int) and not isinstance(rotary_dim, bool) and rotary_dim >= 2:
        return min(rotary_dim, width) // 2 * 2
    return rotary_dim


def _unchecked_forward(x: np.ndarray, position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, pairing: Any) -> Any:
    width = x.shape[-1] if isinstance(x, np.ndarray) and x.ndim else 0
    return OPERATIONS[FWD](x, position_ids, _usable(rotary_dim, width), base, scaling, pairing)


def _unchecked_backward(
    x: np.ndarray, position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, pairing: Any, grad_output: Any
) -> Any:
    width = x.shape[-1] if isinstance(x, np.ndarray) and x.ndim else 0
    return OPERATIONS[BWD](x, position_ids, _usable(rotary_dim, width), base, scaling, pairing, grad_output)


def _unchecked_tables(position_ids: Any, rotary_dim: Any, base: Any, scaling: Any, dtype: str = "float32") -> Any:
    return OPERATIONS[TABLES](position_ids, _usable(rotary_dim, 1 << 30), base, scaling, dtype)


UNCHECKED = register(
    Mutant(
        "rope.rotary_dim_unchecked",
        "does not check rotary_dim: an odd one drops its last feature from the pairs, one above d rotates all d",
        "reject rotary_dim that is odd, below 2 or above d with invalid_config (EMB-ROPE-12)",
        {FWD: _unchecked_forward, BWD: _unchecked_backward},
    )
)
register(
    replace(
        UNCHECKED, id="rope.tables.rotary_dim_unchecked", overrides={TABLES: _unchecked_tables}, mistake=UNCHECKED.id
    )
)
