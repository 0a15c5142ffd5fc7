"""MLX's cos-first sinusoid table in turns, a point of the sinusoid family no named profile is (EMB-SIN-6): its
declared parameters and the source of a functions module that computes it, for the tests that declare a point."""

from __future__ import annotations

# A declared point of the sinusoid family no named profile is (EMB-SIN-6): MLX's cos-first table in turns.
MLX_OPTIONS = {
    "layout": "cos_sin",
    "spacing": "k/(h-1)",
    "amplitude": "sqrt(2/D)",
    "odd_d": "refused",
    "angle_unit": "turns",
}

MLX_COS_FIRST_FULL_TURNS = """
import numpy as np

EMBCONF_SINUSOID_PARAMETERS = {parameters!r}


class Refused(ValueError):
    kind = "invalid_config"


def sinusoidal_table(max_len, embed_dim, dtype):  # MLX SinusoidalPositionalEncoding(cos_first=True, full_turns=True)
    if embed_dim % 2:
        raise Refused("odd dims")
    half = embed_dim // 2
    one_zero = 1.0 - np.arange(half, dtype=np.float32) / max(half - 1, 1)
    freqs = np.exp(one_zero * np.log(1.0) + (1 - one_zero) * np.log(1e-4)).astype(np.float32)
    angles = np.arange(max_len, dtype=np.float32)[:, None] * freqs[None] * np.float32(2 * np.pi)
    table = np.concatenate([np.cos(angles), np.sin(angles)], axis=1) * np.float32(np.sqrt(2.0 / embed_dim))
    return table.astype(dtype)
"""
