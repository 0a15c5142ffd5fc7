"""How much of the rope tolerance (spec 8.8, EMB-ROPE-11) correct float32 code uses, and how far past it code
with angles in bfloat16 lands, measured side by side against the float64 reference.

    python benchmarks/bench_rope_precision.py

For every width, base, scaling, pairing, dtype and window of positions (p0 near 0, 4096, 32768, 131072) it
prints the largest ratio |error| / bound over the elements, where the bound is the case rule's
a*M*(4*u32*A + 4u) + 2u|expected|: below 1 passes. The float32 implementation is tests/impls/rope_float32.py
(Hugging Face's float32 frequency formula); the bfloat16 one casts positions and frequencies to bfloat16.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "impls"))
import rope_float32  # noqa: E402

from embconf.model.dtypes import numpy_dtype  # noqa: E402
from embconf.reference import rope as reference  # noqa: E402
from embconf.reference.tolerance import rope  # noqa: E402

SCALINGS = [
    {"rope_type": "default"},
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 4096},
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "original_max_position_embeddings": 8192,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    },
]
WINDOWS = (0, 4093, 32764, 131068)


def worst_ratio(angle_dtype: str, dtype: str, p0: int) -> float:
    rope_float32.ANGLE_DTYPE = angle_dtype
    rng, worst = np.random.default_rng(0), 0.0
    for base in (10000.0, 500000.0):
        for width in (2, 4, 6, 64, 128, 130):
            for scaling in SCALINGS:
                if scaling["rope_type"] == "dynamic" and width == 2:
                    continue
                for pairing in ("half_split", "interleaved"):
                    x = rng.standard_normal((2, 8, width)).astype(numpy_dtype(dtype))
                    ids = np.arange(p0, p0 + 8)
                    expected = reference.rope_forward(x, ids, width, base, scaling, pairing).astype(np.float64)
                    got = rope_float32.rope_forward(x, ids, width, base, scaling, pairing).astype(np.float64)
                    inv_freq, attention = reference.inverse_frequencies(width, base, scaling, int(ids.max()))
                    i, j = reference.pair_columns(width, pairing)
                    magnitude = float(
                        (np.abs(x[..., i].astype(np.float64)) + np.abs(x[..., j].astype(np.float64))).max()
                    )
                    tol = rope(attention, magnitude, float(ids.max() * inv_freq.max()), dtype)
                    bound = tol["atol"] + tol["rtol"] * np.abs(expected)
                    worst = max(worst, float(np.max(np.abs(got - expected) / bound)))
    return worst


def main() -> None:
    print("largest |error| / bound (below 1 passes), over widths, bases, scalings and pairings")
    print(f"{'x dtype':<10}{'window p0':>10}{'float32 angles':>16}{'bfloat16 angles':>17}")
    for dtype in ("float32", "float16", "bfloat16"):
        for p0 in WINDOWS:
            print(
                f"{dtype:<10}{p0:>10}{worst_ratio('float32', dtype, p0):>16.3f}{worst_ratio('bfloat16', dtype, p0):>17.1f}"
            )


if __name__ == "__main__":
    main()
