"""A Llama rotary embedding of the transformers 4.3x era, after the model was cast to bfloat16, ported to code
that keeps Llama 2's base.

Inspired by: huggingface/transformers #25681 ("LlamaRotaryEmbedding: wrong cache value when casting model to
float16/bfloat16": ``inv_freq`` is a registered buffer, ``model.to(torch.bfloat16)`` casts it, and
``t = torch.arange(seq_len).type_as(self.inv_freq)`` and ``torch.outer(t, inv_freq)`` follow it into bfloat16)
and #29285 (autocast runs the same product in bfloat16; "RoPE loses precision ... especially for very large
context lengths"); and Llama 2 code that hard-codes ``base=10000`` (``rope_theta`` not read), loading a Llama 3
checkpoint whose rope_theta is 500000.
"""

import ml_dtypes
import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-half_split", "rope-positions", "bfloat16"]
BF16 = ml_dtypes.bfloat16

MISTAKES = [
    {
        "phrase": "bfloat16",
        "mutants": ["rope.angles_bfloat16", "rope.tables.angles_bfloat16"],
        "claims": [
            "symptom:rope:angle_precision:*:angles:bfloat16",
        ],
    },
    {
        "phrase": ["base 10000", "base argument"],
        "mutants": ["rope.base_ignored", "rope.tables.base_ignored"],
        "claims": ["symptom:rope:frequencies:*:base_10000"],
    },
]


class LlamaRotaryEmbedding:
    def __init__(self, dim, max_position_embeddings=2048, base=10000):
        self.dim, self.base = dim, 10000.0  # Llama 2: rope_theta is not read from the config
        self.inv_freq = 1.0 / (self.base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
        self.inv_freq = self.inv_freq.astype(BF16)  # model.to(torch.bfloat16) casts the buffer
        self._set_cos_sin_cache(max_position_embeddings)

    def _set_cos_sin_cache(self, seq_len):
        self.max_seq_len_cached = seq_len
        t = np.arange(seq_len).astype(self.inv_freq.dtype)  # type_as(self.inv_freq)
        freqs = np.outer(t, self.inv_freq).astype(BF16)
        self.cos_cached = np.cos(freqs.astype(np.float32))
        self.sin_cached = np.sin(freqs.astype(np.float32))

    def __call__(self, position_ids):
        needed = int(np.max(position_ids)) + 1
        if needed > self.max_seq_len_cached:
            self._set_cos_sin_cache(needed)
        return self.cos_cached[position_ids], self.sin_cached[position_ids]


def rotate_half(x):
    h = x.shape[-1] // 2
    return np.concatenate([-x[..., h:], x[..., :h]], axis=-1)


def _apply(v, cos, sin, rotary_dim):
    rot = v[..., :rotary_dim].astype(np.float32)
    cos2, sin2 = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
    out = rot * cos2 + rotate_half(rot) * sin2
    return np.concatenate([out.astype(v.dtype), v[..., rotary_dim:]], axis=-1)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    cos, sin = LlamaRotaryEmbedding(rotary_dim, base=base)(position_ids)
    return cos.astype(dtype), sin.astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    return _apply(x, *LlamaRotaryEmbedding(rotary_dim, base=base)(position_ids), rotary_dim)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    cos, sin = LlamaRotaryEmbedding(rotary_dim, base=base)(position_ids)
    return _apply(grad_output, cos, -sin, rotary_dim)
