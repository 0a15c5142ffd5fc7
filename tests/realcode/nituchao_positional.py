"""A PositionalEmbedding from Chinese-language Transformer tutorials, ported to NumPy (sinusoid table and learned positions).

Inspired by: nituchao/nituchao-deeplearning, pytorch/transformer_explain/positional_embedding.py (and the blog
copies it came from; seasa2016/code_test pytorch/encode_test.py has the same table): the table is
``pos / np.power(10000, 2 * i / d_model) for i in range(d_model)`` (the column index in the exponent), row 0 is
``np.zeros(d_model)`` and sin/cos are applied to rows ``1:`` only, and the forward does
``enc_inputs += self.pos_table[:enc_inputs.size(1), :]``, adding the positions into its input in place.
"""

import numpy as np
from _spec import check_grad_shape, check_start, check_x

MISTAKES = [
    {"phrase": "column", "mutants": ["sin.column_exponent"]},  # 2 * i / d_model with i the column index
    {
        "phrase": ["row 0", "position 0"],
        "mutants": [],
        "claims": ["symptom:zero_rows:sinusoidal_table:table:0", "symptom:zeros:sinusoidal_table:table"],
    },  # position 0 is all zeros (cos(0) = 1 is never written)
    {"phrase": "modif", "mutants": []},  # x += table[...]: the input x is modified and returned
]


def sinusoidal_table(max_len, embed_dim, dtype="float32"):
    pos_table = np.array(
        [
            [pos / np.power(10000, 2 * i / embed_dim) for i in range(embed_dim)] if pos != 0 else np.zeros(embed_dim)
            for pos in range(max_len)
        ]
    )
    pos_table[1:, 0::2] = np.sin(pos_table[1:, 0::2])  # even columns
    pos_table[1:, 1::2] = np.cos(pos_table[1:, 1::2])  # odd columns
    return pos_table.astype(dtype)  # torch.FloatTensor(pos_table)


def learned_positions_forward(table, x, start_pos=0):
    check_x(table, x)
    start = check_start(start_pos, x.shape[1], table.shape[0])
    x += table[start : start + x.shape[1]]
    return x


def learned_positions_backward(table, x, start_pos, grad_output):
    check_x(table, x)
    start = check_start(start_pos, x.shape[1], table.shape[0])
    check_grad_shape(grad_output, x.shape)
    grad_table = np.zeros_like(table)
    grad_table[start : start + x.shape[1]] = grad_output.sum(axis=0)
    return grad_output.copy(), grad_table
