"""Fixed sinusoidal position tables (EMB-SIN): any point of the sinusoid family (EMB-SIN-6).

The canonical table (EMB-SIN-2/3) is interleaved: pair k has frequency
w_k = base^(-2k/D); column 2k holds sin(pos * w_k) and column 2k+1 holds
cos(pos * w_k), positions counted from 0. The family varies the layout, the
frequency spacing, the base, an amplitude on the whole table, the angle unit
and the odd-D rule; the named profiles (EMB-SIN-V1..V4) are points of it, so
an implementation of another convention can be checked against the one it declares.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from embconf.model.dtypes import numpy_dtype
from embconf.model.sinusoid import (
    SQRT_2_OVER_D,
    AngleUnit,
    Layout,
    OddWidth,
    SinusoidProfile,
    Spacing,
    profile_named,
)
from embconf.reference.arithmetic import active
from embconf.reference.errors import EmbeddingError

CANONICAL = "interleaved"
BASE = 10000.0  # the canonical base (EMB-SIN-2)


def _exponents(profile: SinusoidProfile, count: int, embed_dim: int) -> Any:
    """-e_k for k = 0 .. count-1 (h = floor(D/2), the divisor guarded at 1 as tensor2tensor does)."""
    pairs = active().array(np.arange(count))
    half = embed_dim // 2
    if profile.spacing is Spacing.TWO_K_OVER_D:
        return -2 * pairs / embed_dim
    if profile.spacing is Spacing.K_OVER_H_MINUS_1:
        return -pairs / max(half - 1, 1)
    return -pairs / max(half, 1)


def amplitude(profile: SinusoidProfile, embed_dim: int) -> Any:
    """A, the factor on the whole table, in the active arithmetic (sqrt(2/D) is irrational)."""
    if profile.amplitude == SQRT_2_OVER_D:
        return active().sqrt(active().number(2) / embed_dim)
    return active().number(profile.amplitude_for(embed_dim))


def family_rows(positions: Sequence[int], embed_dim: int, profile: SinusoidProfile) -> np.ndarray:
    """Rows ``positions`` of the (max_len, D) table of ``profile``, unrounded in the active arithmetic;
    invalid_config for an odd D the profile refuses."""
    ar = active()
    odd = embed_dim % 2 == 1
    if odd and profile.odd_d is OddWidth.REFUSED:
        raise EmbeddingError("invalid_config", f"the sinusoid profile {profile.describe()} refuses odd D = {embed_dim}")
    n_cos = embed_dim // 2
    n_sin = embed_dim - n_cos if profile.odd_d is OddWidth.SINE_COLUMN else n_cos
    frequencies = ar.power(ar.number(profile.base), _exponents(profile, n_sin, embed_dim))
    angles = ar.array(np.asarray(positions, dtype=np.int64))[:, None] * frequencies
    if profile.angle_unit is AngleUnit.TURNS:
        angles = angles * (2 * ar.pi)
    sines, cosines = ar.sin(angles), ar.cos(angles[:, :n_cos])
    rows = len(positions)
    if profile.layout is Layout.INTERLEAVED:
        table = ar.zeros((rows, embed_dim))
        table[:, 0 : 2 * n_sin : 2] = sines
        table[:, 1 : 2 * n_cos : 2] = cosines
    else:
        blocks = [sines, cosines] if profile.layout is Layout.SIN_COS else [cosines, sines]
        table = np.concatenate(blocks + [ar.zeros((rows, embed_dim - n_sin - n_cos))], axis=1)
    factor = amplitude(profile, embed_dim)
    return table if factor == 1 else table * factor


def family_table(max_len: int, embed_dim: int, profile: SinusoidProfile) -> np.ndarray:
    """The (max_len, D) table of ``profile``, unrounded in the active arithmetic (float64 unless exact)."""
    return family_rows(range(max_len), embed_dim, profile)


def as_profile(convention: Union[str, SinusoidProfile]) -> SinusoidProfile:
    return convention if isinstance(convention, SinusoidProfile) else profile_named(convention)


def sinusoidal_table(
    max_len: int,
    embed_dim: int,
    dtype: str = "float32",
    convention: Union[str, SinusoidProfile] = CANONICAL,
    only_rows: Optional[Sequence[int]] = None,
) -> np.ndarray:
    """The (max_len, embed_dim) table of ``convention`` (a profile name or a point of the family), computed
    in the active arithmetic and rounded once to ``dtype``. With ``only_rows`` (how a golden that pins rows
    is made) only those rows are computed and the others are zero."""
    profile = as_profile(convention)
    if only_rows is None:
        return active().round(family_table(max_len, embed_dim, profile), dtype)
    rows = np.asarray(only_rows, dtype=np.int64)
    table = np.zeros((max_len, embed_dim), dtype=numpy_dtype(dtype))
    table[rows] = active().round(family_rows(rows.tolist(), embed_dim, profile), dtype)
    return table


def interleaved(max_len: int, embed_dim: int) -> np.ndarray:
    """The canonical table in float64 (EMB-SIN-2): ceil(D/2) sine and floor(D/2) cosine columns."""
    return family_table(max_len, embed_dim, profile_named("interleaved"))


def concatenated(max_len: int, embed_dim: int) -> np.ndarray:
    """[sin block | cos block] with the canonical frequencies (Marian, EMB-SIN-V1), in float64."""
    return family_table(max_len, embed_dim, profile_named("concatenated"))


def tensor2tensor(max_len: int, embed_dim: int) -> np.ndarray:
    """tensor2tensor's timing signal (EMB-SIN-V2) in float64: base^(-k/(h-1)), [sin | cos], zero column for odd D."""
    return family_table(max_len, embed_dim, profile_named("tensor2tensor"))
