"""A Rust-style port of Qwen2's rotary embedding: tables built in the model dtype, applied with the interleaved
kernel.

Inspired by: huggingface/candle #3520 ("qwen2: build RoPE cos/sin tables in fp32 (fixes long-context
divergence)": ``RotaryEmbedding::new`` casts ``inv_freq`` and the positions ``t`` to the model dtype, bfloat16,
before the matmul, then takes sin/cos of the bfloat16 product, so position 15962 becomes 15968 and the trig
outputs become noise), and the two kernels of ports like candle's ``rotary_emb`` (``rope`` for the half-split
pairing of Llama/Qwen, ``rope_i`` for the interleaved one of GPT-J): calling ``rope_i`` for a half-split model.
"""

import ml_dtypes
import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-half_split", "rope-positions", "bfloat16"]
MODEL_DTYPE = ml_dtypes.bfloat16

MISTAKES = [
    {
        "phrase": "bfloat16",
        "mutants": ["rope.angles_bfloat16", "rope.tables.angles_bfloat16", "rope.cos_sin_bfloat16"],
        "claims": ["symptom:rope:angle_precision:*", "symptom:rope:table_precision:*"],
    },
    {
        "phrase": ["pairs", "pairing"],
        "mutants": ["rope.pairing_swapped"],
        "claims": ["symptom:rope:pairing:*:interleaved"],
    },
]


def _tables(position_ids, dim, base):
    inv_freq = (1.0 / base ** (np.arange(0, dim, 2, dtype=np.float32) / dim)).astype(MODEL_DTYPE)  # .to_dtype(dtype)
    t = np.asarray(position_ids).astype(MODEL_DTYPE)  # t.to_dtype(dtype)
    freqs = (t[:, None] * inv_freq[None, :]).astype(MODEL_DTYPE)  # t.matmul(&inv_freq) in bfloat16
    return np.cos(freqs).astype(MODEL_DTYPE), np.sin(freqs).astype(MODEL_DTYPE)  # sin/cos of the bfloat16 product


def _rope_i(v, cos, sin, rotary_dim):
    """The interleaved kernel: pairs (2k, 2k+1)."""
    out = v.astype(np.float32).copy()
    c, s = cos.astype(np.float32), sin.astype(np.float32)
    x0, x1 = out[..., 0:rotary_dim:2].copy(), out[..., 1:rotary_dim:2].copy()
    out[..., 0:rotary_dim:2] = x0 * c - x1 * s
    out[..., 1:rotary_dim:2] = x0 * s + x1 * c
    return out.astype(v.dtype)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    cos, sin = _tables(position_ids, rotary_dim, base)
    return cos.astype(dtype), sin.astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    return _rope_i(x, *_tables(position_ids, rotary_dim, base), rotary_dim)  # rope_i where rope was meant


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    cos, sin = _tables(position_ids, rotary_dim, base)
    return _rope_i(grad_output, cos, -sin, rotary_dim)
