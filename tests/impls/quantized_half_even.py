"""tests/impls/quantized_plain.py quantizing ggml's formats with numpy.round (a tie to even), as code written with
numpy or torch rounds: the quantize convention round_half_even (EMB-QNT-V1), declared."""

import quantized_plain
from quantized_plain import *  # noqa: F403

quantized_plain.HALF_EVEN = ("q8_0", "q4_0")
EMBCONF_QUANTIZE_CONVENTIONS = ["round_half_even"]
