"""Meta's complex-number rotary (``precompute_freqs_cis`` / ``apply_rotary_emb``) copied with a slip, and a
hand-written backward for an autograd-free framework.

Inspired by: the reference Llama code quoted in vllm-project/vllm #863 (``freqs = 1.0 / (theta **
(torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))``, ``torch.polar``, ``view_as_complex`` on
``reshape(..., -1, 2)``: the interleaved pairing), copied as ``torch.arange(0, dim)[: (dim // 2)]`` (the step 2
dropped: exponent k/d), with positions generated as ``torch.arange(1, end + 1)`` ("positions 1 to N" helpers);
and a backward that multiplies the upstream gradient by ``freqs_cis`` again instead of its conjugate (the
transpose of a rotation is the rotation by the negative angle).
"""

import numpy as np
from _spec import check_grad, check_rope

EMBCONF_FEATURES = ["rope-interleaved", "rope-positions"]

MISTAKES = [
    {
        "phrase": ["k/d", "without step 2"],
        "mutants": ["rope.frequencies_step_1", "rope.tables.frequencies_step_1"],
        "claims": ["symptom:rope:frequencies:*:step_1"],
    },
    {
        "phrase": ["from 1", "position_ids +1"],
        "mutants": ["rope.positions_from_1", "rope.tables.positions_from_1"],
        "claims": ["symptom:rope:shifted:*:1"],
    },
    {
        "phrase": ["+pos*theta", "+angle", "transpose"],
        "mutants": ["rope.backward_rotates_forward"],
        "claims": ["symptom:rope:negated:rope_backward"],
    },
]


def precompute_freqs_cis(dim, position_ids, theta=10000.0):
    freqs = 1.0 / (theta ** (np.arange(0, dim)[: (dim // 2)].astype(np.float32) / dim))  # step 2 dropped
    t = np.asarray(position_ids).astype(np.float32) + 1  # positions 1 to N
    freqs = np.outer(t, freqs)
    return np.exp(1j * freqs.astype(np.float64)).astype(np.complex64)  # torch.polar(ones, freqs)


def _apply(v, freqs_cis, rotary_dim):
    rot = v[..., :rotary_dim].astype(np.float32)
    as_complex = rot.reshape(rot.shape[:-1] + (-1, 2))
    z = (as_complex[..., 0] + 1j * as_complex[..., 1]) * freqs_cis
    out = np.stack([z.real, z.imag], axis=-1).reshape(rot.shape)
    return np.concatenate([out.astype(v.dtype), v[..., rotary_dim:]], axis=-1)


def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):
    check_rope(None, position_ids, rotary_dim, base, scaling)
    freqs_cis = precompute_freqs_cis(rotary_dim, position_ids, base)
    return freqs_cis.real.astype(dtype), freqs_cis.imag.astype(dtype)


def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    return _apply(x, precompute_freqs_cis(rotary_dim, position_ids, base), rotary_dim)


def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
    check_rope(x, position_ids, rotary_dim, base, scaling, pairing)
    check_grad(x, grad_output)
    return _apply(grad_output, precompute_freqs_cis(rotary_dim, position_ids, base), rotary_dim)  # not conj()
