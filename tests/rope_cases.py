"""Rotary cases built from the reference for the mutant and diagnosis tests (not goldens): each a
:class:`Case` as the corpus loads one, with the tolerance of the spec's precision ruling (a float32 angle
term c * u_float32 * max|angle| times the pair's size, plus the output dtype's rounding), so that a
correct float32 computation passes at every position and a bfloat16 one fails at long positions."""

from __future__ import annotations

from typing import Any, Optional

import ml_dtypes
import numpy as np

from embconf.corpus.fixtures import Case
from embconf.model.vocabulary import named_outputs
from embconf.reference import OPERATIONS
from embconf.reference.errors import EmbeddingError
from embconf.reference.generate import _encode_value
from embconf.reference.rope import inverse_frequencies

DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}
ANGLE_ULPS = 8.0


# scalings the rope mutant and diagnosis tests build cases with
LLAMA3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "original_max_position_embeddings": 8192,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
}
YARN = {
    "rope_type": "yarn",
    "factor": 4.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
}


def tolerance(operation: str, inputs: dict[str, Any], outputs: dict[str, Any]) -> dict[str, Any]:
    """The tolerance model's rope rule when the reference has one, else the precision ruling's bound."""
    from embconf.reference.families import for_case

    try:
        return for_case(operation, inputs, outputs)
    except KeyError:
        pass
    ids = np.asarray(inputs["position_ids"])
    theta, a = inverse_frequencies(inputs["rotary_dim"], inputs["base"], inputs.get("scaling"), int(ids.max()))
    angle = float(np.max(ids)) * float(np.max(theta))
    out: dict[str, Any] = {}
    for name, value in outputs.items():
        eps = 2.0**-8 if value.dtype.name == "bfloat16" else float(np.finfo(value.dtype).eps) / 2
        source = inputs.get("grad_output", inputs.get("x"))
        size = 2.0 * float(np.max(np.abs(source.astype(np.float64)))) if source is not None else 1.0
        atol = a * size * (ANGLE_ULPS * 2.0**-24 * angle + 4 * eps) + 1e-30
        out[name] = {"kind": "close", "atol": atol, "rtol": 2 * eps}
    return out


def case(
    case_id: str,
    operation: str,
    features: tuple[str, ...] = (),
    *,
    positions: Any = None,
    d: int = 8,
    rotary_dim: Optional[int] = None,
    base: float = 10000.0,
    scaling: Optional[dict[str, Any]] = None,
    pairing: str = "half_split",
    dtype: str = "float32",
    lead: tuple[int, ...] = (2,),
) -> Case:
    """A case of ``operation`` at ``positions`` (default 0..7) with random x (and grad_output)."""
    ids = np.arange(8, dtype=np.int64) if positions is None else np.asarray(positions, dtype=np.int64)
    rng = np.random.default_rng(abs(hash(case_id)) % 2**32)
    r = d if rotary_dim is None else rotary_dim
    inputs: dict[str, Any] = {
        "position_ids": ids,
        "rotary_dim": r,
        "base": base,
        "scaling": scaling or {"rope_type": "default"},
    }
    if operation == "rope_tables":
        inputs["dtype"] = dtype
    else:
        shape = lead + (ids.size, d)
        inputs["x"] = rng.standard_normal(shape).astype(DTYPES[dtype])
        inputs["pairing"] = pairing
        if operation == "rope_backward":
            inputs["grad_output"] = rng.standard_normal(shape).astype(DTYPES[dtype])
    copies = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
    feature = () if operation == "rope_tables" else (f"rope-{pairing}",)
    try:
        outputs = named_outputs(operation, OPERATIONS[operation](**copies))
    except EmbeddingError as exc:  # an error case: the kind the spec raises
        return Case(
            case_id,
            f"built for the tests: {operation} raises {exc.kind}",
            ("EMB-ROPE-12",),
            tuple(dict.fromkeys(feature + features)),
            operation,
            {name: _encode_value(value) for name, value in inputs.items()},
            {"error": exc.kind},
            {},
        )
    return Case(
        case_id,
        f"built for the tests: {operation} at positions {int(ids.min())}..{int(ids.max())}",
        ("EMB-ROPE-2",),
        tuple(dict.fromkeys(feature + features)),
        operation,
        {name: _encode_value(value) for name, value in inputs.items()},
        {"outputs": {name: _encode_value(value) for name, value in outputs.items()}},
        tolerance(operation, inputs, outputs),
    )


def window(p0: int, length: int = 8) -> np.ndarray:
    return np.arange(p0, p0 + length, dtype=np.int64)


def float32_operations(tables_in: Optional[str] = None, factor_multiplied: bool = False) -> dict[str, Any]:
    """A correct rotary implementation computed the way frameworks do it, in float32 throughout (inv_freq,
    positions, their product, cos/sin, the rotation): the precision ruling says it conforms at every position.
    Two mistakes on request: cos and sin rounded to ``tables_in`` (a half cache), linear scaling's factor
    multiplied into inv_freq instead of dividing it."""
    from embconf.reference.rope import pair_columns

    def tables32(position_ids: Any, rotary_dim: int, base: float, scaling: Any) -> tuple[np.ndarray, np.ndarray]:
        theta, a = inverse_frequencies(rotary_dim, base, scaling, int(np.max(position_ids)))
        if factor_multiplied and (scaling or {}).get("rope_type") == "linear":
            theta = theta * float(scaling["factor"]) ** 2
        angles = np.asarray(position_ids).astype(np.float32)[:, None] * theta.astype(np.float32)
        cos, sin = np.float32(a) * np.cos(angles), np.float32(a) * np.sin(angles)
        if tables_in is not None:
            cos, sin = (
                cos.astype(DTYPES[tables_in]).astype(np.float32),
                sin.astype(DTYPES[tables_in]).astype(np.float32),
            )
        return cos, sin

    def rotate32(v: np.ndarray, cos: np.ndarray, sin: np.ndarray, r: int, pairing: str) -> np.ndarray:
        i, j = pair_columns(r, pairing)
        wide = v.astype(np.float32)
        out = wide.copy()
        out[..., i] = wide[..., i] * cos - wide[..., j] * sin
        out[..., j] = wide[..., j] * cos + wide[..., i] * sin
        return out.astype(v.dtype)

    def rope_tables(position_ids, rotary_dim, base, scaling, dtype="float32"):  # type: ignore[no-untyped-def]
        cos, sin = tables32(position_ids, rotary_dim, base, scaling)
        return cos.astype(DTYPES[dtype]), sin.astype(DTYPES[dtype])

    def rope_forward(x, position_ids, rotary_dim, base, scaling, pairing):  # type: ignore[no-untyped-def]
        return rotate32(x, *tables32(position_ids, rotary_dim, base, scaling), rotary_dim, pairing)

    def rope_backward(x, position_ids, rotary_dim, base, scaling, pairing, grad_output):  # type: ignore[no-untyped-def]
        cos, sin = tables32(position_ids, rotary_dim, base, scaling)
        return rotate32(grad_output, cos, -sin, rotary_dim, pairing)

    return {"rope_tables": rope_tables, "rope_forward": rope_forward, "rope_backward": rope_backward}
