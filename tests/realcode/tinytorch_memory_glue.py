"""The memory arithmetic of TinyTorch's embeddings module, as its notebook glue code computes it.

Inspired by: harvard-edge/cs249r_book tinytorch/src/11_embeddings (ABOUT.md's glue cells compute
``bytes / 1024**2`` and print it as "MB"; 11_embeddings.py defines ``BYTES_PER_FLOAT32 = 4`` and
``MB_TO_BYTES = 1024 * 1024`` for every table), and the common "Adam needs three copies of the parameters"
rule of thumb, which counts the parameters themselves into the optimizer state.
"""

import numpy as np

BYTES_PER_FLOAT32 = 4  # Standard float32 size in bytes
MB_TO_BYTES = 1024 * 1024  # Megabytes to bytes conversion

MISTAKES = [
    {"phrase": ["megabytes", "MiB"], "mutants": ["mem.mb_as_mib"]},  # megabytes = bytes / 2**20 (that is MiB)
    {
        "phrase": ["4 bytes", "bytes per element"],
        "mutants": [
            "mem.unknown_dtype_default",
            "mem.every_dtype_float32",
            "mem.adam_float32_moments",
            "mem.bfloat16_as_float32",
        ],
    },  # int8, float16, float64 ... all 4 bytes
    {"phrase": "Adam", "mutants": ["mem.adam_with_params"]},  # parameters + m + v: 3 copies instead of the 2 moments
]


def table_bytes(num_rows, embed_dim, dtype):
    size = num_rows * embed_dim * BYTES_PER_FLOAT32
    return {"bytes": size, "megabytes": size / MB_TO_BYTES, "mebibytes": size / 2**20}


def gradient_bytes(vocab_size, embed_dim, dtype, ids):
    touched = len(np.unique(np.asarray(ids)))
    return {
        "dense": vocab_size * embed_dim * BYTES_PER_FLOAT32,
        "row_sparse": touched * (embed_dim * BYTES_PER_FLOAT32 + 8),
    }


def adam_state_bytes(num_params, dtype):
    return {"bytes": 3 * num_params * BYTES_PER_FLOAT32}  # params + first moment + second moment
