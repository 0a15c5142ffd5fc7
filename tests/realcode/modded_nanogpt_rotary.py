"""The rotary module of a speedrun GPT (late 2024): a bfloat16 cos/sin cache, rotation in the opposite sense,
positions from the sequence length.

Inspired by: KellerJordan/modded-nanogpt #39 ("RoPE has precision errors when used with BFloat16": the cached
``cos_cached = freqs.cos().bfloat16()`` / ``sin_cached`` lose precision; "replace .bfloat16() with .float()"), whose
``apply_rotary_emb`` computes ``y1 = x1 * cos + x2 * sin; y2 = x1 * (-sin) + x2 * cos`` (a rotation by the negative
angle, consistent for q and k in its own model but not the rotate_half convention), with
``t = torch.arange(seq_len)`` (the positions are the row numbers). The backward is what autograd gives: the
transpose of that forward.
"""

import ml_dtypes
import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-half_split", "bfloat16"]

MISTAKES = [
    {
        "phrase": "bfloat16",
        "mutants": ["rope.cos_sin_bfloat16", "rope.tables.cos_sin_bfloat16"],
        "claims": ["symptom:rope:table_precision:*"],
    },
    {
        "phrase": ["negative angle", "+pos*theta", "+angle"],
        "mutants": ["rope.rotate_half_sign", "rope.backward_rotates_forward"],
        "claims": ["symptom:rope:negated:*"],
    },
    {
        "phrase": ["position_ids are ignored", "ignores position_ids"],
        "mutants": ["rope.position_ids_ignored", "rope.tables.position_ids_ignored"],
        "claims": ["symptom:rope:rows:*"],
    },
]


class Rotary:
    def __init__(self, dim, base=10000):
        self.inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))
        self.seq_len_cached = None

    def __call__(self, seq_len):
        if seq_len != self.seq_len_cached:
            self.seq_len_cached = seq_len
            t = np.arange(seq_len).astype(np.float32)
            freqs = np.outer(t, self.inv_freq)
            self.cos_cached = np.cos(freqs).astype(ml_dtypes.bfloat16)
            self.sin_cached = np.sin(freqs).astype(ml_dtypes.bfloat16)
        return self.cos_cached, self.sin_cached


def apply_rotary_emb(x, cos, sin, rotary_dim):
    d = rotary_dim // 2
    c, s = cos.astype(np.float32), sin.astype(np.float32)
    x1, x2 = x[..., :d].astype(np.float32), x[..., d:rotary_dim].astype(np.float32)
    y1 = x1 * c + x2 * s
    y2 = x1 * (-s) + x2 * c
    return np.concatenate([y1, y2, x[..., rotary_dim:].astype(np.float32)], axis=-1).astype(x.dtype)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    cos, sin = Rotary(rotary_dim, base)(len(position_ids))
    return cos.astype(dtype), sin.astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    return apply_rotary_emb(x, *Rotary(rotary_dim, base)(x.shape[-2]), rotary_dim)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    cos, sin = Rotary(rotary_dim, base)(x.shape[-2])
    return apply_rotary_emb(grad_output, cos, -sin.astype(np.float32), rotary_dim)  # autograd: the transpose
