"""An MLX-style llama3 rotary whose medium band is interpolated on the wavelength from the wrong end, with the
model's rope_theta never passed.

Inspired by: ml-explore/mlx-examples PR #907's first ``compute_llama3_base_freq`` (MLX's RoPE takes periods
``base ** (2k / d)``; the medium band was ``freq * ((1 - smooth) * factor + smooth)`` with ``smooth = (wavelen -
high_freq_wavelen) / (low_freq_wavelen - high_freq_wavelen)``: fully scaled at the high-frequency end, unscaled at
the low one, the reverse of transformers' ``(original / wavelen - low) / (high - low)``); and young-geng/EasyLM PR
#117 / lyogavin/airllm PR #369 (``rope_theta`` never passed to the rotary function: the default 10000 is used).
"""

import math

import numpy as np
from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["llama3", "medium", "smooth"],
        "mutants": [],
        "claims": [
            "symptom:rope:frequencies:rope_forward",
            "symptom:rope:frequencies:rope_tables",
            "symptom:rope:frequencies:rope_backward",
        ],
    },  # llama3's medium band: inv / ((1 - s) * factor + s), s linear in the wavelength from the high end
    {
        "phrase": ["base 10000", "base argument"],
        "mutants": ["rope.base_ignored", "rope.tables.base_ignored"],
        "claims": ["symptom:rope:frequencies:*:base_10000"],
    },  # base fixed at 10000
]


class Port(Rope):
    def given_base(self, base):
        return 10000.0

    def llama3(self, inv, s):
        factor, original = s["factor"], s["original_max_position_embeddings"]
        low_wavelen, high_wavelen = original / s["low_freq_factor"], original / s["high_freq_factor"]
        wavelen = 2 * math.pi / inv
        out = np.where(wavelen > low_wavelen, inv / factor, inv)
        medium = ~(wavelen > low_wavelen) & ~(wavelen < high_wavelen)
        smooth = (wavelen - high_wavelen) / (low_wavelen - high_wavelen)
        return np.where(medium, inv / ((1 - smooth) * factor + smooth), out)


rope_tables, rope_forward, rope_backward = Port().functions()
