"""A rotary embedding whose interleaved sin/cos table is unpacked by halves, with a backward that calls the forward
kernel.

Inspired by: NVIDIA/ngpt #10 (``get_sinusoidal_embeddings`` puts sines at even and cosines at odd indices, then
``sin, cos = sinusoidal_pos.chunk(2, dim=-1)`` takes the first and second halves: the "sin" table is sin and cos of
the first quarter of the frequencies interleaved, the "cos" table those of the second); and the fused rotary
kernels with a ``BACKWARD_PASS`` flag (foundation-model-stack/fms-acceleration #33's ``_rope_embedding``) called
from the backward without it: the gradient rotated by +angle, not its transpose.
"""

import numpy as np
from _rope import FEATURES, SCALED, Rope
from _spec import check_grad, check_rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["chunk", "halves of", "interleaved table", "sin and cos mixed"],
        "mutants": [],
    },  # (sin, cos) = the two halves of [sin0, cos0, sin1, cos1, ...]
    {
        "phrase": ["+angle", "same sign", "forward rotation", "transpose"],
        "mutants": ["rope.backward_rotates_forward"],
        "claims": ["symptom:rope:negated:rope_backward"],
    },  # the backward rotates by the forward's angle
]


class Port(Rope):
    def tables(self, position_ids, rotary_dim, base, scaling):
        cos, sin = super().tables(position_ids, rotary_dim, base, scaling)
        h = cos.shape[-1]
        emb = np.empty(cos.shape[:-1] + (2 * h,))
        emb[..., 0::2], emb[..., 1::2] = sin, cos
        return emb[..., h:], emb[..., :h]  # "sin, cos = emb.chunk(2)"

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
        check_grad(x, grad_output)
        return super().rope_forward(grad_output, position_ids, rotary_dim, base, scaling, pairing)


rope_tables, rope_forward, rope_backward = Port().functions()
