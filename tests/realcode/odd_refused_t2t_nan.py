"""A sinusoid helper that refuses odd widths and computes tensor2tensor's timing signal unguarded.

Inspired by: the widely copied ``positionalencoding1d(d_model, length)`` helpers (positional-encodings packages,
course and paper repositories), which refuse an odd ``d_model`` outright ("Cannot use sin/cos positional encoding
with odd dim"), here with an ``assert``; and tensor2tensor's ``get_timing_signal_1d``, whose
``log(max_timescale / min_timescale) / (num_timescales - 1)`` is unguarded in its NumPy ports: for D = 2 the
increment is log(10000) / 0 = inf, so every angle is 0 * inf = NaN. The table is ``[sin | cos]`` with
frequencies 10000^(-k/(h-1)). The width D = 3 never reaches the NaN: the assert refuses it first.
"""

import math

import numpy as np

MISTAKES = [
    {
        "phrase": ["k/(h-1)", "tensor2tensor"],
        "mutants": ["sin.tensor2tensor", "sin.small_dim_nan"],
        "claims": ["symptom:sinusoid:exponent k/(h-1) instead of 2k/D;layout [[]sin | cos[]] instead of interleaved*"],
    },  # 10000^(-k/(h-1)) frequencies, [sin | cos] blocks, NaN for D = 2 (log(10000) / 0)
    {
        "phrase": ["AssertionError", "odd"],
        "mutants": [],
        "claims": ["symptom:untyped:AssertionError:*"],
    },  # odd D refused by an assert (the spec's table has D columns for every D >= 1)
]
FACTS = {"nan_widths": ["2"]}  # the only width whose table is NaN (D = 3 is refused before the division)


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    assert embed_dim % 2 == 0, f"Cannot use sin/cos positional encoding with odd dim (got dim={embed_dim})"
    num_timescales = embed_dim // 2
    with np.errstate(divide="ignore", invalid="ignore"):
        increment = np.float64(math.log(10000.0)) / np.float64(num_timescales - 1)
        inv_timescales = np.exp(np.arange(num_timescales, dtype=np.float64) * -increment)
        scaled_time = np.arange(max_len, dtype=np.float64)[:, None] * inv_timescales[None, :]
    return np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1).astype(dtype)
