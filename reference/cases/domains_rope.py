"""The input domains of the rotary family (spec section 14): positions (how many, of which rank, within or past
the original context), the rotated width, the base, each scaling, the pairing, the dtype, and each declared rotary
convention (EMB-ROPE-V*)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.model.dtypes import round_once
from embconf.model.rope import SECTION, RopeScaling, RopeType
from embconf.reference.cases.domain_kinds import Base, Boundary, Domain, Excluded, Inputs, array, value_of
from embconf.reference.cases.domain_shapes import FLOATS, choice, convention, dtyped, shape_of, sized, with_grad
from embconf.reference.cases.domains_lookup import normal
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import check_call
from embconf.reference.rope_apply import check_apply

ORIGINAL = 16  # the original context of the scalings that have one, in the domains' own cases
SCALINGS: dict[str, dict[str, Any]] = {
    "default": {"rope_type": "default"},
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 2.0, "original_max_position_embeddings": ORIGINAL},
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": ORIGINAL},
    "llama3": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": ORIGINAL,
               "low_freq_factor": 1.0, "high_freq_factor": 4.0},
    "longrope": {"rope_type": "longrope", "short_factor": [], "long_factor": [], "original_max_position_embeddings": ORIGINAL},
    "mrope": {"rope_type": "default", SECTION: []},
    "unknown": {"rope_type": "ntk"},
    "malformed": {"rope_type": "yarn", "factor": 4.0},  # no original_max_position_embeddings
}
assert set(SCALINGS) - {"mrope", "unknown", "malformed"} == {t.value for t in RopeType}  # every rope_type of the spec


def _scaling(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    given = value_of(inputs, "scaling")
    if not isinstance(given, Mapping):
        return None
    kind = "mrope" if SECTION in given else given.get("rope_type")
    if kind not in SCALINGS or kind in ("unknown", "malformed"):
        return "unknown"
    try:
        typed = RopeScaling.of(given)
    except ValueError:
        return "malformed"
    r = value_of(inputs, "rotary_dim")
    if isinstance(r, int) and r >= 2 and not r % 2:  # per-frequency lists and sections follow r / 2
        counts = [len(f) for f in (typed.short_factor, typed.long_factor) if f is not None]
        counts += [sum(typed.mrope_section)] if typed.mrope_section is not None else []
        if any(count != r // 2 for count in counts):
            return "malformed"
    return kind


def _put_scaling(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    inputs["scaling"] = dict(SCALINGS[boundary])


def _rotary(inputs: Mapping[str, Any]) -> int:
    given = value_of(inputs, "rotary_dim")
    return int(given) if isinstance(given, int) and given >= 2 else 2


def _span(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    ids, scaling = array(inputs, "position_ids"), value_of(inputs, "scaling")
    if ids is None or ids.size == 0 or not isinstance(scaling, Mapping):
        return None
    original = scaling.get("original_max_position_embeddings")
    if not isinstance(original, int):
        return None
    return "past_original" if ids.max() >= original else "within_original"


def _put_span(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    ids = array(inputs, "position_ids")
    assert ids is not None
    inputs["position_ids"] = ids % ORIGINAL + (ORIGINAL if boundary == "past_original" else 0)
    if not isinstance(inputs["scaling"], Mapping) or "original_max_position_embeddings" not in inputs["scaling"]:
        inputs["scaling"] = dict(SCALINGS["yarn"])  # a scaling with an original context


def _positions_rank(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    ids = array(inputs, "position_ids")
    return None if ids is None else f"{ids.ndim}d" if ids.ndim in (1, 2, 3) else None


def _put_positions_rank(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    ids = array(inputs, "position_ids")
    t = ids.shape[-1] if ids is not None else 4
    inputs["position_ids"] = np.broadcast_to(np.arange(t, dtype=np.int64), {"1d": (t,), "2d": (2, t), "3d": (3, 2, t)}[boundary]).copy()
    if boundary == "3d":  # only M-RoPE's positions have three axes
        inputs["scaling"] = dict(SCALINGS["mrope"])


def _width(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    given, x = value_of(inputs, "rotary_dim"), array(inputs, "x")
    if not isinstance(given, int) or isinstance(given, bool):
        return None
    if given < 2 or given % 2:
        return "odd" if given % 2 else "zero"
    if x is not None and given > x.shape[-1]:
        return "past_width"
    return "two" if given == 2 else "full" if x is None or given == x.shape[-1] else "partial"


def _put_width(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    x = array(inputs, "x")
    d = x.shape[-1] if x is not None else 8
    inputs["rotary_dim"] = {"two": 2, "partial": max(d // 2 - (d // 2) % 2, 2), "full": d, "odd": 5, "zero": 0,
                            "past_width": d + 2}[boundary]


_WIDTH_NOTES = {"two": "r = 2: one frequency", "partial": "r < d: the rest passes through", "full": "r = d",
                "odd": "r odd", "zero": "r = 0", "past_width": "r > d"}


def _rotary_width(with_x: bool) -> Domain:
    names = ("two", "partial", "full", "odd", "zero", "past_width") if with_x else ("two", "full", "odd", "zero")
    errors = {"odd": "invalid_config", "zero": "invalid_config", "past_width": "invalid_config"}
    return Domain("rotary_dim", tuple(Boundary(b, _WIDTH_NOTES[b], errors.get(b)) for b in names), _width, _put_width)


def _x_rank(name: str, ranks: dict[str, tuple[int, ...]]) -> Domain:
    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        x = array(inputs, name)
        return None if x is None else f"{min(x.ndim, 4)}d"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        x = array(inputs, name)
        assert x is not None
        inputs[name] = normal(x, ranks[boundary] + x.shape[-2:] if boundary != "1d" else x.shape[-1:], rng)

    boundaries = tuple(Boundary(r, f"{r} {name}", "shape_mismatch" if r == "1d" else None) for r in ("1d", *ranks))
    return Domain(name, boundaries, classify, put, "rank")


def checked(name: str, check: Any, names: tuple[str, ...]) -> Domain:
    """Whether the shapes of a rotation's inputs agree, as the reference checks them: ``matching``, or
    ``mismatched`` (shape_mismatch)."""

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        try:
            check(*(value_of(inputs, n) for n in names))
        except EmbeddingError as exc:
            return "mismatched" if exc.kind == "shape_mismatch" else None
        except Exception:  # an input the check cannot read: at no boundary
            return None
        return "matching"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        if boundary == "mismatched":
            x = np.asarray(inputs["x"])
            inputs["x"] = normal(x, x.shape[:-2] + (x.shape[-2] + 1, x.shape[-1]), rng)

    return Domain(name, (Boundary("matching", "the shapes agree"), Boundary("mismatched", "T or a width disagrees",
                                                                          "shape_mismatch")), classify, put, "shape")


def _rope() -> dict[str, tuple[Domain, ...]]:
    positions = (_positions_rank_domain(), sized("position_ids", _n_positions, measure=_length), Domain(
        "position_ids", (Boundary("within_original", "every position below the original context"),
                         Boundary("past_original", "positions past the original context")), _span, _put_span, "span"))
    base = choice("base", {"ordinary": 10000.0, "large": 500000.0, "nonpositive": -10000.0},
                  {"ordinary": "10000", "large": "500000 (Llama 3)", "nonpositive": "<= 0"}, {"nonpositive": "invalid_config"},
                  test=lambda v: "nonpositive" if v <= 0 else "large" if v > 10000 else "ordinary")
    scaling = Domain("scaling", tuple(Boundary(b, f"rope_type {b}" if b != "mrope" else "M-RoPE sections",
                                                "invalid_config" if b in ("unknown", "malformed") else None)
                                       for b in SCALINGS),
                     _scaling, _put_scaling)
    pairing = choice("pairing", {"half_split": "half_split", "interleaved": "interleaved", "unknown": "reversed"},
                     {"half_split": "(k, k + r/2)", "interleaved": "(2k, 2k + 1)", "unknown": "not a pairing"},
                     {"unknown": "invalid_config"}, other="unknown")
    dtype = choice("dtype", {**{d: d for d in FLOATS}, "unknown": "float8"},
                   {**{d: f"tables in {d}" for d in FLOATS}, "unknown": "not a dtype of the spec"},
                   {"unknown": "invalid_config"}, other="unknown")
    x = (_x_rank("x", {"2d": (), "3d": (2,), "4d": (1, 2)}), dtyped(("x", "grad_output", "cos", "sin")))
    grad = (shape_of("grad_output", lambda inputs: np.shape(inputs["x"]) if "grad_output" in inputs else None),)
    tables = (_x_rank("cos", {"2d": (), "3d": (2,)}), checked("cos", check_apply, ("x", "cos", "sin", "pairing")),
              shape_of("sin", lambda inputs: np.shape(inputs["cos"]) if "cos" in inputs else None))
    rotation = x + positions + (_rotary_width(True), base, scaling, pairing, convention("rope"),
                                checked("position_ids", check_call, ("x", "position_ids", "rotary_dim", "base", "scaling", "pairing")))
    return {
        "rope_tables": positions + (_rotary_width(False), base, scaling, dtype, convention("rope")),
        "rope_forward": rotation,
        "rope_backward": rotation + grad,
        "rope_apply": x + tables + (pairing,),
        "rope_apply_backward": x + tables + (pairing,) + grad,
    }


def _positions_rank_domain() -> Domain:
    return Domain("position_ids", (Boundary("1d", "(T,)"), Boundary("2d", "(B, T), or M-RoPE's (3, T)"),
                                   Boundary("3d", "M-RoPE's (3, B, T)")), _positions_rank, _put_positions_rank, "rank")


def _length(ids: np.ndarray) -> int:
    """T: the last axis of the positions."""
    return int(ids.shape[-1]) if ids.ndim else 1


def _n_positions(inputs: Inputs, n: int, rng: np.random.Generator) -> np.ndarray:
    ids = array(inputs, "position_ids")
    lead = ids.shape[:-1] if ids is not None else ()
    return np.broadcast_to(np.arange(n, dtype=np.int64), lead + (n,)).copy()


def _rotation_finish(inputs: Inputs, rng: np.random.Generator) -> None:
    """M-RoPE's sections and LongRoPE's factors follow r; positions follow M-RoPE; x follows the positions."""
    r = _rotary(inputs)
    scaling = inputs.get("scaling")
    ids = np.asarray(inputs["position_ids"])
    if isinstance(scaling, Mapping) and SECTION in scaling:
        h = max(r // 2, 3)
        inputs["scaling"] = {**scaling, SECTION: [h - 2 * (h // 3), h // 3, h // 3]}
        inputs["rotary_dim"] = 2 * h if isinstance(value_of(inputs, "rotary_dim"), int) else inputs["rotary_dim"]
        if ids.ndim == 1 or ids.shape[0] != 3:
            inputs["position_ids"] = np.broadcast_to(ids.reshape(-1)[: ids.shape[-1]], (3, ids.shape[-1])).copy()
    if isinstance(scaling, Mapping) and scaling.get("rope_type") == "longrope":
        h = r // 2
        inputs["scaling"] = {**scaling, "short_factor": [1.0 + k / h for k in range(h)],
                             "long_factor": [1.0 + 4 * k / h for k in range(h)]}
    x = array(inputs, "x")
    if x is not None:
        positions = np.asarray(inputs["position_ids"])
        mrope = isinstance(inputs.get("scaling"), Mapping) and SECTION in inputs["scaling"]
        per_batch = positions.ndim - (1 if mrope else 0) == 2  # (B, T): x is (B, ..., T, d) (EMB-ROPE-15)
        lead = (positions.shape[-2],) + x.shape[1:-2] if per_batch and x.ndim >= 3 else x.shape[:-2]
        width = max(x.shape[-1], int(value_of(inputs, "rotary_dim")) if mrope else 0)
        if x.ndim >= 2 and x.shape != lead + (positions.shape[-1], width):
            inputs["x"] = normal(x, lead + (positions.shape[-1], width), rng)
    if "grad_output" in inputs:
        inputs["grad_output"] = normal(array(inputs, "x"), np.shape(inputs["x"]), rng)


def _apply_finish(inputs: Inputs, rng: np.random.Generator) -> None:
    """The tables follow x (their rank as set, T and r = d); the gradient follows x."""
    x, cos = array(inputs, "x"), array(inputs, "cos")
    assert x is not None and cos is not None
    lead = x.shape[:-2][-1:] if cos.ndim == 3 else ()
    shape = (x.shape[-1],) if cos.ndim == 1 or x.ndim < 2 else lead + x.shape[-2:]
    angles = rng.uniform(-3, 3, size=shape)
    inputs["cos"], inputs["sin"] = (round_once(f(angles), str(x.dtype)) for f in (np.cos, np.sin))
    if "grad_output" in inputs:
        inputs["grad_output"] = normal(x, x.shape, rng)


def _rotation_base(rng: np.random.Generator) -> Inputs:
    return {"x": normal(None, (2, 4, 8), rng), "position_ids": np.arange(4, dtype=np.int64), "rotary_dim": 8,
            "base": 10000.0, "scaling": {"rope_type": "default"}, "pairing": "half_split"}


def _apply_base(rng: np.random.Generator) -> Inputs:
    return {"x": normal(None, (2, 4, 8), rng), "cos": np.zeros((4, 8), np.float32), "sin": np.zeros((4, 8), np.float32),
            "pairing": "half_split"}


def _tables_base(rng: np.random.Generator) -> Inputs:
    found = _rotation_base(rng)
    return {**{k: found[k] for k in ("position_ids", "rotary_dim", "base", "scaling")}, "dtype": "float32"}


DOMAINS: dict[str, dict[str, tuple[Domain, ...]]] = {"rope": _rope()}
BASES: dict[str, Base] = {
    "rope_tables": Base(_tables_base, _rotation_finish),
    "rope_forward": Base(_rotation_base, _rotation_finish),
    "rope_backward": Base(with_grad(_rotation_base), _rotation_finish),
    "rope_apply": Base(_apply_base, _apply_finish),
    "rope_apply_backward": Base(with_grad(_apply_base), _apply_finish),
}

_NO_ORIGINAL = ("default", "linear", "mrope", "unknown", "malformed")  # no original context: no span
EXCLUDED: dict[str, tuple[Excluded, ...]] = {"rope": (
    *(Excluded(("scaling", s), ("position_ids.span", b), "this scaling has no original context")
      for s in _NO_ORIGINAL for b in ("within_original", "past_original")),
    Excluded(("scaling", "mrope"), ("position_ids.rank", "1d"), "M-RoPE positions are (3, T) or (3, B, T) (EMB-ROPE-14)", "shape_mismatch"),
    *(Excluded(("scaling", s), ("position_ids.rank", "3d"), "positions are (T,) or (B, T) (EMB-ROPE-15)", "shape_mismatch")
      for s in SCALINGS if s not in ("mrope", "unknown")),
    Excluded(("scaling", "dynamic"), ("rotary_dim", "two"), "dynamic scaling needs r >= 4 (its exponent is r / (r - 2))", "invalid_config"),
    Excluded(("position_ids.rank", "2d"), ("x.rank", "2d"),
             "per-batch positions need x (B, ..., T, d) (EMB-ROPE-15); only M-RoPE's (3, T) rotate a 2-D x"),
    *(Excluded(point, ("rotary_dim", "two"), "M-RoPE's three sections need r/2 >= 3")
      for point in (("scaling", "mrope"), ("position_ids.rank", "3d"))),
    *(Excluded(("position_ids.rank", "3d"), ("position_ids.span", b), "(3, B, T) positions are M-RoPE's, which has no "
               "original context (EMB-ROPE-14, EMB-ROPE-15)", "shape_mismatch") for b in ("within_original", "past_original")),
    Excluded(("position_ids.rank", "3d"), ("x.rank", "2d"), "M-RoPE's (3, B, T) positions need x (B, ..., T, d) (EMB-ROPE-15)",
             "shape_mismatch"),
    Excluded(("cos.rank", "3d"), ("x.rank", "2d"), "per-batch tables need x (B, ..., T, d) (EMB-ROPE-16)", "shape_mismatch"),
)}
