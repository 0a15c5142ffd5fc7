"""A long-context rotary port with every scaling family, partial rotary included, written from model configs.

Inspired by: ports that read ``rope_scaling["factor"]`` and divide every ``inv_freq`` by it whatever the
``rope_type`` (llama3's and YaRN's band rules reduced to linear interpolation: the high-frequency bands must keep
theta_k); YaRN ports that leave out the attention factor (``mscale``, 0.1 ln(factor) + 1, that
transformers' ``_compute_yarn_parameters`` returns with the frequencies); and ``partial_rotary_factor``
(GPT-NeoX's rotary_pct, Phi's partial rotary) ignored, so every feature of the head is rotated with frequencies
over the head dim.
"""

import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = [
    "rope-half_split",
    "rope-partial",
    "rope-positions",
    "rope-linear",
    "rope-dynamic",
    "rope-yarn",
    "rope-llama3",
]

MISTAKES = [
    {
        "phrase": ["every band", "every frequency"],
        "mutants": ["rope.scaling_every_band", "rope.tables.scaling_every_band"],
        "claims": ["symptom:rope:frequencies:*:every_band"],
    },
    {
        "phrase": "attention factor",
        "mutants": ["rope.yarn_attention_factor_missing", "rope.tables.yarn_attention_factor_missing"],
        "claims": ["symptom:rope:amplitude:*:missing"],
    },
    {
        "phrase": ["every feature", "features rotary_dim"],
        "mutants": ["rope.partial_rotates_all"],
        "claims": ["symptom:rope:passthrough:*:rotated"],
    },
]


def _inv_freq(dim, base, scaling, position_ids):
    scaling = scaling or {"rope_type": "default"}
    rope_type = scaling.get("rope_type", "default")
    if rope_type == "dynamic":
        length, original = int(np.max(position_ids)) + 1, scaling["original_max_position_embeddings"]
        if length > original:
            factor = scaling["factor"]
            base = base * ((factor * length / original) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    if rope_type in ("linear", "llama3", "yarn"):
        inv_freq = inv_freq / scaling["factor"]  # one rule for every family
    return inv_freq.astype(np.float32)


def _tables(position_ids, dim, base, scaling):
    angles = np.asarray(position_ids).astype(np.float32)[:, None] * _inv_freq(dim, base, scaling, position_ids)
    return np.cos(angles), np.sin(angles)  # no attention factor for yarn


def _rotate(v, cos, sin):
    h = v.shape[-1] // 2
    w = v.astype(np.float32)
    x1, x2 = w[..., :h], w[..., h:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1).astype(v.dtype)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    cos, sin = _tables(position_ids, rotary_dim, base, scaling)
    return cos.astype(dtype), sin.astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    head_dim = x.shape[-1]  # partial_rotary_factor ignored: the whole head is rotated
    return _rotate(x, *_tables(position_ids, head_dim, base, scaling))


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    cos, sin = _tables(position_ids, x.shape[-1], base, scaling)
    return _rotate(grad_output, cos, -sin)
