"""A rotary layer with a hand-written backward that rotates forward again, and rope_tables ignoring its dtype.

Inspired by: custom autograd Functions for fused rotary kernels whose backward calls the forward kernel
(``apply_rotary(grad, cos, sin)``) instead of the conjugate (flash-attention's and apex's rotary backward take a
``conjugate``/``inverse`` flag that ports drop); and table helpers that always return float32.
"""

from _rope import FEATURES, Rope

EMBCONF_FEATURES = FEATURES + ["bfloat16"]

MISTAKES = [
    {
        "phrase": ["+pos*theta", "forward's own angle"],
        "mutants": ["rope.backward_rotates_forward"],
        "claims": ["symptom:rope:negated:rope_backward"],
    },
    {"phrase": ["float32", "dtype"], "mutants": [], "claims": ["symptom:dtype:rope_tables:*"]},
]


class Port(Rope):
    def rope_backward(self, x, position_ids, rotary_dim, base, scaling, pairing, grad_output):
        return self.rope_forward(grad_output, position_ids, rotary_dim, base, scaling, pairing)

    def cast(self, table, dtype):
        return table.astype("float32")


rope_tables, rope_forward, rope_backward = Port().functions()
