"""A GPT-NeoX-style rotary module after ``model.half()``: the cached tables are built in float16, from a cache
of the first seq_len positions.

Inspired by: EleutherAI/gpt-neox #1003 ("RotaryEmbedding computation is wrong for certain position/feature pairs
in reduced precision"): ``inv_freq`` is a buffer that ``.half()`` casts, ``t = arange(seq_len).type_as(inv_freq)``
and the outer product are float16 too, so a large angle is rounded to float16 (the issue's emb[1857, 1]: 1044.27
becomes 1045) and positions past 65504 overflow; and the ``cos_cached[:seq_len]`` slicing of the NeoX/HF caches
(transformers #25813), which indexes the cache by the row number, so an offset (a KV cache) or packed position_ids
are lost. The rotation itself (rotate_half, partial rotary_pct) is right.
"""

import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-half_split", "rope-partial", "rope-positions", "float16"]

MISTAKES = [
    {
        "phrase": "float16",
        "mutants": ["rope.angles_float16", "rope.tables.angles_float16"],
        "claims": ["symptom:rope:angle_precision:*:angles:float16"],
    },
    {
        "phrase": ["position_ids are ignored", "ignores position_ids"],
        "mutants": ["rope.position_ids_ignored", "rope.tables.position_ids_ignored"],
        "claims": ["symptom:rope:rows:*"],
    },
]


def _cache(seq_len, dim, base):
    inv_freq = (1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float32) / dim))).astype(np.float16)  # model.half()
    t = np.arange(seq_len).astype(inv_freq.dtype)  # type_as(inv_freq)
    with np.errstate(over="ignore", invalid="ignore"):
        freqs = np.einsum("i,j->ij", t, inv_freq)  # float16 outer product
        return np.cos(freqs.astype(np.float32)), np.sin(freqs.astype(np.float32))


def _tables(position_ids, rotary_dim, base):
    seq_len = len(position_ids)
    cos, sin = _cache(seq_len, rotary_dim, base)
    return cos[:seq_len], sin[:seq_len]  # the cache sliced by length, not indexed by position_ids


def _rotate(v, cos, sin, rotary_dim):
    h = rotary_dim // 2
    rot, rest = v[..., :rotary_dim].astype(np.float32), v[..., rotary_dim:]
    x1, x2 = rot[..., :h], rot[..., h:]
    out = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    with np.errstate(invalid="ignore"):
        return np.concatenate([out.astype(v.dtype), rest], axis=-1)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    cos, sin = _tables(position_ids, rotary_dim, base)
    return cos.astype(dtype), sin.astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    return _rotate(x, *_tables(position_ids, rotary_dim, base), rotary_dim)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    cos, sin = _tables(position_ids, rotary_dim, base)
    return _rotate(grad_output, cos, -sin, rotary_dim)
