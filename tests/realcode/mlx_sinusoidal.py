"""MLX's ``nn.SinusoidalPositionalEncoding`` with its defaults, ported to NumPy as the spec's sinusoid table.

Inspired by: ml-explore/mlx, python/mlx/nn/layers/positional_encoding.py: frequencies interpolated in log space
``exp(one_zero * (log(max_freq) - log(min_freq)) + log(min_freq))`` with ``one_zero = 1 - arange(D // 2) /
(D // 2 - 1)`` (so 10000^(-k/(h-1)), and 0/0 = NaN when D // 2 == 1), ``[sin | cos]`` concatenated, only
2 * (D // 2) columns (one short for odd D), and every value multiplied by the default ``scale = sqrt(2 / D)``.
"""

import math

import numpy as np

MISTAKES = [
    {
        "phrase": ["k/(h-1)", "tensor2tensor"],
        "mutants": ["sin.tensor2tensor"],
        "claims": ["symptom:sinusoid:exponent k/(h-1) instead of 2k/D;layout [[]sin | cos[]] instead of interleaved*"],
    },  # 10000^(-k/(h-1)) frequencies, [sin | cos] blocks
    {
        "phrase": ["sqrt(2/D)", "multiplied"],
        "mutants": [],
        "claims": ["symptom:sinusoid:*every value multiplied by sqrt(2/D);"],
    },  # the whole table times sqrt(2/D)
    {
        "phrase": "shape",
        "mutants": [],
        "claims": ["symptom:shape:sinusoidal_table:D - N columns for D = N"],
    },  # odd D: 2 * (D // 2) columns, one short
    {"phrase": "nan", "mutants": ["sin.small_dim_nan"]},  # D = 2, 3: one_zero = 1 - 0/0
]


def sinusoidal_table(max_len, embed_dim, dtype="float32", min_freq=0.0001, max_freq=1.0, scale=None):
    with np.errstate(divide="ignore", invalid="ignore"):
        one_zero = 1 - np.arange(0, embed_dim // 2, dtype=np.float32) / np.float32(embed_dim // 2 - 1)
    sigmas = np.exp(one_zero * (math.log(max_freq) - math.log(min_freq)) + math.log(min_freq)).astype(np.float32)
    scale = scale or (2 / embed_dim) ** 0.5
    y = np.arange(max_len, dtype=np.float32)[:, None] * sigmas
    y = np.concatenate([np.sin(y), np.cos(y)], axis=-1)
    if scale != 1:
        y = y * np.float32(scale)
    return y.astype(dtype)
