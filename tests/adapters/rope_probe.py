"""``python rope_probe.py IMPL``: what one rotary-position adapter computes, measured against a float64 formula,
printed as one JSON object for tests/adapters/test_rope_adapters.py.

Run in a fresh interpreter per implementation (JAX and TensorFlow start threads, one Keras backend per process).
Each measurement is the largest error against the formula over the error allowed (<= 1 conforms), or what the
adapter raised: ``declined`` or the error kind with ``decided_by``.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

import numpy as np

from embconf.adapters import create_adapter
from embconf.model.dtypes import numpy_dtype
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError

PAIRED = {"half_split": "interleaved", "interleaved": "half_split"}
DEFAULT = {"rope_type": "default"}
YARN = {
    "rope_type": "yarn",
    "factor": 8.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
}


def rotated(x: np.ndarray, positions: np.ndarray, rotary_dim: int, base: float, pairing: str, factor: float = 1.0):
    """The spec's rotation in float64 (default or linear scaling), the features past rotary_dim unchanged."""
    half = rotary_dim // 2
    angle = (positions.astype(np.float64) / factor)[:, None] * base ** (-2.0 * np.arange(half) / rotary_dim)
    first = np.arange(half) if pairing == "half_split" else 2 * np.arange(half)
    second = first + half if pairing == "half_split" else first + 1
    x, out = x.astype(np.float64), x.astype(np.float64)
    out[..., first] = x[..., first] * np.cos(angle) - x[..., second] * np.sin(angle)
    out[..., second] = x[..., second] * np.cos(angle) + x[..., first] * np.sin(angle)
    return out


def yarn_tables(positions: np.ndarray, rotary_dim: int, base: float) -> tuple[np.ndarray, np.ndarray]:
    """YaRN's tables (transformers' formula, truncated correction range, default attention factor) in float64."""
    factor, original, fast, slow = (
        YARN[key] for key in ("factor", "original_max_position_embeddings", "beta_fast", "beta_slow")
    )
    extrapolated = base ** (-np.arange(0, rotary_dim, 2) / rotary_dim)

    def correction(rotations: float) -> float:
        return rotary_dim * np.log(original / (rotations * 2 * np.pi)) / (2 * np.log(base))

    low, high = max(np.floor(correction(fast)), 0), min(np.ceil(correction(slow)), rotary_dim - 1)
    ramp = np.clip((np.arange(rotary_dim // 2) - low) / (high - low), 0, 1)
    inverse = extrapolated / factor * ramp + extrapolated * (1 - ramp)
    angle, attention = positions[:, None] * inverse, 0.1 * np.log(factor) + 1
    return attention * np.cos(angle), attention * np.sin(angle)


def allowed(positions: np.ndarray, x: np.ndarray) -> float:
    """float32 angles and products: a few float32 ulps of the largest angle times the largest value."""
    return 8 * 2.0**-24 * (1 + float(np.max(np.abs(positions)))) * 2 * float(np.max(np.abs(x))) + 1e-6


def attempt(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except Decline as exc:
        return {"declined": exc.reason}
    except EmbeddingError as exc:
        return {"kind": exc.kind, "decided_by": getattr(exc, "decided_by", "")}


def ratio(got: Any, want: np.ndarray, limit: float) -> Any:
    return got if isinstance(got, dict) else float(np.abs(np.asarray(got, dtype=np.float64) - want).max() / limit)


def measure(impl: str) -> dict[str, Any]:
    adapter = create_adapter(impl)
    ops, features = adapter.handlers, adapter.capabilities().features
    rng = np.random.default_rng(22)
    x = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
    wide = rng.standard_normal((2, 5, 10)).astype(np.float32)
    grad = rng.standard_normal(x.shape).astype(np.float32)
    scattered = np.array([0, 7, 3, 4100, 4100])
    positions = scattered if "rope-positions" in features else np.arange(4093, 4098)
    limit, out = allowed(positions, x), {"features": sorted(features)}
    main = "half_split" if "rope-half_split" in features else "interleaved"  # the pairing of the other checks

    def forward(pairing: str, against: str) -> Any:
        got = attempt(lambda: ops["rope_forward"](x, positions, 8, 10000.0, DEFAULT, pairing))
        return ratio(got, rotated(x, positions, 8, 10000.0, against), limit)

    out["forward"] = {p: [forward(p, p), forward(p, PAIRED[p])] for p in PAIRED if f"rope-{p}" in features}
    factor = 4.0 if "rope-linear" in features else 1.0
    linear = {"rope_type": "linear", "factor": factor} if factor != 1.0 else DEFAULT
    got = attempt(lambda: ops["rope_backward"](x, positions, 8, 500000.0, linear, main, grad))
    out["backward"] = [
        ratio(got, rotated(grad, sign * positions, 8, 500000.0, main, factor), limit) for sign in (-1, 1)
    ]
    at = np.arange(131068, 131072) if "rope-positions" not in features else np.array([5, 0, 131071, 2])
    tables = attempt(lambda: ops["rope_tables"](at, 6, 10000.0, DEFAULT, "float32"))
    angle = at[:, None] * 10000.0 ** (-2.0 * np.arange(3) / 6)
    out["tables"] = (
        tables
        if isinstance(tables, dict)
        else {
            "shape": list(tables[0].shape),
            "dtype": str(tables[0].dtype),
            "error": max(ratio(t, f(angle), allowed(at, np.ones(1))) for t, f in zip(tables, (np.cos, np.sin))),
        }
    )
    got = attempt(lambda: ops["rope_forward"](wide, positions, 4, 10000.0, DEFAULT, main))
    out["partial"] = (
        got
        if isinstance(got, dict)
        else [
            ratio(got, rotated(wide, positions, 4, 10000.0, main), limit),
            bool(np.array_equal(got[..., 4:], wide[..., 4:])),
        ]
    )
    out["scattered"] = attempt(lambda: ops["rope_forward"](x, scattered, 8, 10000.0, DEFAULT, main) is not None)
    out["rank2"] = attempt(lambda: list(ops["rope_forward"](x[0, 0], positions, 8, 10000.0, DEFAULT, main).shape))
    out["unknown_pairing"] = attempt(lambda: ops["rope_forward"](x, positions, 8, 10000.0, DEFAULT, "diagonal"))
    out["unknown_rope_type"] = attempt(
        lambda: ops["rope_forward"](x, positions, 8, 10000.0, {"rope_type": "ntk"}, main) is not None
    )
    for dtype in ("float16", "bfloat16"):
        if dtype in features:
            got = attempt(
                lambda dtype=dtype: ops["rope_forward"](
                    x.astype(numpy_dtype(dtype)), positions, 8, 10000.0, DEFAULT, main
                )
            )
            out[dtype] = (
                got
                if isinstance(got, dict)
                else [
                    str(got.dtype),
                    float(np.abs(got.astype(np.float64) - rotated(x, positions, 8, 10000.0, main)).max()),
                ]
            )
    if "rope-yarn" in features:
        yarn_at = np.array([0, 5, 32768, 40000])
        got = attempt(lambda: ops["rope_tables"](yarn_at, 64, 10000.0, YARN, "float32"))
        want = yarn_tables(yarn_at, 64, 10000.0)
        limit = allowed(yarn_at, np.ones(1)) * 1.21
        out["yarn_tables"] = got if isinstance(got, dict) else max(ratio(t, w, limit) for t, w in zip(got, want))
        wide64 = rng.standard_normal((5, 64)).astype(np.float32)
        out["yarn_attention_factor"] = attempt(
            lambda: (
                ops["rope_forward"](wide64, yarn_at[[0, 1, 1, 1, 1]], 64, 1e4, {**YARN, "attention_factor": 1.0}, main)
                is not None
            )
        )
    return out


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1])))
