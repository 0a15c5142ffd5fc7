"""The position tables of jadore801120/attention-is-all-you-need-pytorch (its 2018 layout), ported to NumPy.

Inspired by: jadore801120/attention-is-all-you-need-pytorch, transformer/Models.py (2018):
``get_sinusoid_encoding_table(n_position, d_hid, padding_idx=0)`` builds the table with NumPy in float64 and
sets ``sinusoid_table[padding_idx] = 0.`` (row 0 is the padding position), and the position ids fed to it run
1..T because 0 means padding. The original wraps the table in ``torch.FloatTensor``; this port forgets the cast,
as many NumPy copies of the function do (Kyubyong/transformer #19 is the float64 table reaching a float32 model).
"""

import numpy as np
from _spec import check_grad_shape, check_start, check_x

EMBCONF_FEATURES = ["float64"]

MISTAKES = [
    {
        "phrase": ["row 0", "position 0"],
        "mutants": [],
        "claims": ["symptom:zero_rows:sinusoidal_table:table:0", "symptom:zeros:sinusoidal_table:table"],
    },  # sinusoid_table[padding_idx] = 0: position 0 is all zeros, not [0, 1, 0, 1, ...]
    {
        "phrase": "float64",
        "mutants": [],
        "claims": ["symptom:dtype:sinusoidal_table:float64->float32"],
    },  # the NumPy table is never cast: float64 for a float32 request
    {
        "phrase": ["start_pos+1", "shifted by 1", "counted from 1"],
        "mutants": ["pos.slice_off_by_one"],
        "claims": ["symptom:positions_shifted:1"],
    },  # position ids 1..T
]


def sinusoidal_table(max_len, embed_dim, dtype="float32", padding_idx=0):
    def cal_angle(position, hid_idx):
        return position / np.power(10000, 2 * (hid_idx // 2) / embed_dim)

    sinusoid_table = np.array([[cal_angle(pos, j) for j in range(embed_dim)] for pos in range(max_len)])
    sinusoid_table = sinusoid_table.reshape(max_len, embed_dim)
    sinusoid_table[:, 0::2] = np.sin(sinusoid_table[:, 0::2])  # dim 2i
    sinusoid_table[:, 1::2] = np.cos(sinusoid_table[:, 1::2])  # dim 2i+1
    if padding_idx is not None:
        sinusoid_table[padding_idx] = 0.0  # zero vector for padding dimension
    return sinusoid_table


def _position_ids(start_pos, seq_len):
    return np.arange(start_pos + 1, start_pos + seq_len + 1)  # 0 is the padding position


def learned_positions_forward(table, x, start_pos=0):
    check_x(table, x)
    start = check_start(start_pos, x.shape[1], table.shape[0])
    return x + table[_position_ids(start, x.shape[1])]


def learned_positions_backward(table, x, start_pos, grad_output):
    check_x(table, x)
    start = check_start(start_pos, x.shape[1], table.shape[0])
    check_grad_shape(grad_output, x.shape)
    grad_table = np.zeros_like(table)
    np.add.at(grad_table, _position_ids(start, x.shape[1]), grad_output.sum(axis=0))
    return grad_output.copy(), grad_table
