"""Fixed sinusoidal position tables (EMB-SIN): any point of the sinusoid family (EMB-SIN-6).

The canonical table (EMB-SIN-2/3) is interleaved: pair k has frequency
w_k = base^(-2k/D); column 2k holds sin(pos * w_k) and column 2k+1 holds
cos(pos * w_k), positions counted from 0. The family varies the layout, the
frequency spacing, the base, an amplitude on the whole table, the angle unit
and the odd-D rule; the named profiles (EMB-SIN-V1..V4) are points of it, so
an implementation of another convention can be checked against the one it declares.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from embconf.model.dtypes import round_once
from embconf.model.sinusoid import AngleUnit, Layout, OddWidth, SinusoidProfile, Spacing, profile_named
from embconf.reference.errors import EmbeddingError

CANONICAL = "interleaved"
BASE = 10000.0  # the canonical base (EMB-SIN-2)


def _positions(max_len: int) -> np.ndarray:
    return np.arange(max_len, dtype=np.float64)[:, None]


def _exponents(profile: SinusoidProfile, count: int, embed_dim: int) -> np.ndarray:
    """-e_k for k = 0 .. count-1 (h = floor(D/2), the divisor guarded at 1 as tensor2tensor does)."""
    pairs = np.arange(count, dtype=np.float64)
    half = embed_dim // 2
    if profile.spacing is Spacing.TWO_K_OVER_D:
        return -2.0 * pairs / embed_dim
    if profile.spacing is Spacing.K_OVER_H_MINUS_1:
        return -pairs / max(half - 1, 1)
    return -pairs / max(half, 1)


def family_table(max_len: int, embed_dim: int, profile: SinusoidProfile) -> np.ndarray:
    """The (max_len, D) table of ``profile`` in float64; invalid_config for an odd D the profile refuses."""
    odd = embed_dim % 2 == 1
    if odd and profile.odd_d is OddWidth.REFUSED:
        raise EmbeddingError("invalid_config", f"the sinusoid profile {profile.describe()} refuses odd D = {embed_dim}")
    n_cos = embed_dim // 2
    n_sin = embed_dim - n_cos if profile.odd_d is OddWidth.SINE_COLUMN else n_cos
    angles = _positions(max_len) * profile.base ** _exponents(profile, n_sin, embed_dim)
    if profile.angle_unit is AngleUnit.TURNS:
        angles = angles * (2.0 * math.pi)
    sines, cosines = np.sin(angles), np.cos(angles[:, :n_cos])
    if profile.layout is Layout.INTERLEAVED:
        table = np.zeros((max_len, embed_dim), dtype=np.float64)
        table[:, 0 : 2 * n_sin : 2] = sines
        table[:, 1 : 2 * n_cos : 2] = cosines
    else:
        blocks = [sines, cosines] if profile.layout is Layout.SIN_COS else [cosines, sines]
        table = np.concatenate(blocks + [np.zeros((max_len, embed_dim - n_sin - n_cos))], axis=1)
    amplitude = profile.amplitude_for(embed_dim)
    return table if amplitude == 1.0 else table * amplitude


def as_profile(convention: Union[str, SinusoidProfile]) -> SinusoidProfile:
    return convention if isinstance(convention, SinusoidProfile) else profile_named(convention)


def sinusoidal_table(
    max_len: int, embed_dim: int, dtype: str = "float32", convention: Union[str, SinusoidProfile] = CANONICAL
) -> np.ndarray:
    """The (max_len, embed_dim) table of ``convention`` (a profile name or a point of the family), computed
    in float64 and rounded once to ``dtype``."""
    return round_once(family_table(max_len, embed_dim, as_profile(convention)), dtype)


def interleaved(max_len: int, embed_dim: int) -> np.ndarray:
    """The canonical table in float64 (EMB-SIN-2): ceil(D/2) sine and floor(D/2) cosine columns."""
    return family_table(max_len, embed_dim, profile_named("interleaved"))


def concatenated(max_len: int, embed_dim: int) -> np.ndarray:
    """[sin block | cos block] with the canonical frequencies (Marian, EMB-SIN-V1), in float64."""
    return family_table(max_len, embed_dim, profile_named("concatenated"))


def tensor2tensor(max_len: int, embed_dim: int) -> np.ndarray:
    """tensor2tensor's timing signal (EMB-SIN-V2) in float64: base^(-k/(h-1)), [sin | cos], zero column for odd D."""
    return family_table(max_len, embed_dim, profile_named("tensor2tensor"))
