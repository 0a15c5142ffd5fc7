"""An EmbeddingBag kernel (PyTorch's MPS backend) that never validates its offsets, ends the last bag at the end of
the ids whatever the terminal offset says, and checks the ids with ``>`` where ``>=`` was meant.

Inspired by: pytorch/pytorch #190060 ("[MPS] embedding_bag(include_last_offset=True) ignores the terminal offset":
the host drops one bag but the kernel ends the final bag at ``num_indices``, so trailing ids are summed into the last
bag) and pytorch/pytorch #170370 / PR #187572 (MPS does not check ``offsets[0] == 0``, non-decreasing offsets or
``offsets[-1] <= num_indices``, which CPU and CUDA refuse: silently wrong output). Each bag is the slice
``ids[offsets[b]:offsets[b + 1]]``, as a kernel reading its range would. And pytorch/pytorch #189971 / PR #189973
(the MPS index bounds check used ``> num_weights`` instead of ``>=``: an id equal to V passes the check and reads one
row past the table, here NumPy's IndexError).
"""

import numpy as np
from _bag import FEATURES, check_call, functions, gradients, pool

EMBCONF_FEATURES = FEATURES

MISTAKES = [
    {
        "phrase": ["offsets are not checked", "not validated", "invalid_offsets", "terminal offset", "last offset"],
        "mutants": [],
        "claims": ["symptom:accepts:*:invalid_offsets"],
    },  # offsets not from 0, decreasing, past N, or a terminal offset < N accepted: each bag the clipped slice, the last
    # bag running to N
    {
        "phrase": ["off by one", "id >= vocab_size", "IndexError"],
        "mutants": ["fwd.range_check_off_by_one"],
        "claims": ["symptom:untyped:IndexError:*"],
    },  # ids checked with id > V: id == V passes and its read raises IndexError
]
FACTS = {"forward_ids": "off_by_one", "backward_ids": "off_by_one"}


def _call(weight, ids, offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output=None):
    """The checks in the spec's order with ``id > V`` for the range (id == V let through), then the kernel's read of
    every id's row: id == V is one row past the table."""
    ids = np.asarray(ids)
    given = (offsets, mode, per_sample_weights, padding_idx, include_last_offset, grad_output)
    call = check_call(weight, np.where(ids == weight.shape[0], 0, ids), *given, _bounds)
    weight[ids.reshape(-1).astype(np.int64)]
    return call


def _bounds(ids, offsets, last):
    """Each bag's [start, end) as the kernel reads it: no checks, the last bag ending at N."""
    if ids.ndim == 2:
        width = ids.shape[1]
        return [(b * width, (b + 1) * width) for b in range(ids.shape[0])]
    starts, n = [min(max(int(v), 0), ids.size) for v in offsets], ids.size
    if last:
        starts = starts[:-1]
    ends = starts[1:] + [n]
    return [(s, max(s, e)) for s, e in zip(starts, ends)]


embedding_bag_forward, embedding_bag_backward = functions(_call)
