"""An inference-engine rotary path that always rotates the halves and always rotates the whole head.

Inspired by: vllm-project/vllm-ascend PR #12780 (``AscendMRotaryEmbedding.forward_oot`` hard-codes
``rotary_mode="half"``, ignoring ``is_neox_style``: a GPT-J-style model, pairs (2k, 2k+1), is rotated as pairs
(k, k + d/2)); and vllm-project/vllm #747 (the RoPE attention always used the whole query and key, where GPT-J and
GPT-NeoX rotate only ``rotary_dim`` features and pass the rest through).
"""

from _rope import FEATURES, SCALED, Rope

EMBCONF_FEATURES = FEATURES + SCALED

MISTAKES = [
    {
        "phrase": ["pairs", "pairing", "half"],
        "mutants": ["rope.pairing_swapped"],
        "claims": ["symptom:rope:pairing:*"],
    },  # pairing ignored: interleaved models rotated as half_split
    {
        "phrase": ["every feature", "pass-through", "whole head"],
        "mutants": ["rope.partial_rotates_all"],
        "claims": ["symptom:rope:passthrough:*:rotated", "symptom:rope:passthrough:*:changed"],
    },  # rotary_dim ignored in the forward and backward: all D features rotated, frequencies over D
]


class Port(Rope):
    def columns(self, rotary_dim, width, pairing):
        return super().columns(rotary_dim, width, "half_split")

    def rope_forward(self, x, position_ids, rotary_dim, base, scaling, pairing):
        super().rope_forward(x, position_ids, rotary_dim, base, scaling, pairing)  # the checks, as given
        return super().rope_forward(x, position_ids, x.shape[-1], base, scaling, pairing)

    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        super().rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
        return super().rope_backward(x, position_ids, x.shape[-1], base, scaling, pairing, grad_output)


rope_tables, rope_forward, rope_backward = Port().functions()
