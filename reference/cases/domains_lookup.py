"""The input domains of the token lookups (``token_lookup``), the learned positions and the sinusoid table, with
each operation's starting inputs and the pairs of boundaries the spec does not allow together."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.model.dtypes import round_once
from embconf.reference.cases.domain_ids import ids_domains, padding, rows_of, start_position
from embconf.reference.cases.domain_kinds import ABSENT, Base, Boundary, Domain, Excluded, Inputs, array, value_of
from embconf.reference.cases.domain_shapes import FLOATS, choice, convention, dtyped, following, shape_of, sized, within


def normal(like: Optional[np.ndarray], shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Standard normal values of ``shape`` in the dtype of ``like`` (float32 without one), rounded once."""
    dtype = "float32" if like is None else str(like.dtype)
    return round_once(rng.standard_normal(shape), dtype)


LARGE_ROWS = 2**16 + 1  # past every 16-bit index
# A table of 2^16 + 1 rows (``large``) is a boundary of the forward lookups only (the token lookup's and the bag's),
# where an id narrowed to 16 bits reads the wrong row: each golden at it holds the whole table, twice (the YAML and
# its JSON form), and covering its pairs in every lookup operation too would add about 30 MB to the corpus and a
# third of a second to every run's start (measured for 2.3.0).


def table_extent(name: str, axis: int, large: bool = False, large_width: Optional[int] = None) -> Domain:
    """The rows (axis 0) or the width (axis 1) of a table: one, many, and with ``large`` past 2^16 rows
    (``large_width`` columns wide, when given: a table whose width is no domain of its own kept small)."""
    sizes = {"one": 1, "many": 6, **({"large": LARGE_ROWS} if large else {})}
    notes = {"one": "a single one", "many": "several", "large": "2^16 + 1: past every 16-bit index"}

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = array(inputs, name)
        if given is None or given.ndim != 2 or given.shape[axis] == 0:
            return None
        n = given.shape[axis]
        return "one" if n == 1 else "large" if large and n >= LARGE_ROWS else "many"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        given = array(inputs, name)
        assert given is not None
        n = sizes[boundary]
        width = large_width if boundary == "large" and large_width is not None else given.shape[1]
        inputs[name] = normal(given, (n, width) if axis == 0 else (given.shape[0], n), rng)

    boundaries = tuple(Boundary(b, notes[b]) for b in sizes)
    return Domain(name, boundaries, classify, put, "rows" if axis == 0 else "width")


def upstream(names: tuple[str, str], shape: Any) -> Any:
    """A finish that gives ``names[0]`` (a gradient) the shape ``shape(inputs)`` in the dtype of ``names[1]``."""

    def finish(inputs: Inputs, rng: np.random.Generator) -> None:
        inputs[names[0]] = normal(array(inputs, names[1]), shape(inputs), rng)

    return finish


def _lookup_shape(inputs: Mapping[str, Any]) -> tuple[int, ...]:
    return tuple(np.shape(inputs["ids"])) + tuple(np.shape(inputs["weight"])[1:])


def _max_norm() -> Domain:
    """max_norm against the p-norms of the rows the ids reference: below all of them (every row renormed), between,
    above all (none); 0 or negative is invalid_config. An infinite max_norm (invalid_config too) is at no boundary:
    a golden cannot hold it (the fixture format writes a non-finite value only inside an array, section 9.5)."""
    notes = {"below_all": "every referenced row is renormed", "between": "some rows are renormed",
             "above_all": "no row is renormed", "zero": "0", "negative": "-1"}
    errors = {"zero": "invalid_config", "negative": "invalid_config"}

    def norms(inputs: Mapping[str, Any]) -> np.ndarray:
        ids, weight = array(inputs, "ids"), array(inputs, "weight")
        p = value_of(inputs, "norm_type")
        if ids is None or weight is None or ids.size == 0 or not isinstance(p, (int, float)) or p <= 0:
            return np.zeros(0)
        rows = weight[np.unique(ids).astype(np.int64) % weight.shape[0]].astype(np.float64)
        return np.sum(np.abs(rows) ** p, axis=1) ** (1.0 / p)

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = value_of(inputs, "max_norm")
        if given is ABSENT or isinstance(given, bool):
            return None
        if not np.isfinite(given):
            return None
        if given <= 0:
            return "zero" if given == 0 else "negative"
        found = norms(inputs)
        if found.size == 0:
            return None
        return "below_all" if given < found.min() else "above_all" if given >= found.max() else "between"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        found = np.unique(norms(inputs))
        low, high = (float(found.min()), float(found.max())) if found.size else (1.0, 1.0)
        gap = int(np.argmax(np.diff(found))) if found.size > 1 else 0  # between: amid the widest gap of the norms
        middle = float(found[gap] + found[gap + 1]) / 2 if found.size > 1 else low
        chosen = {"below_all": low / 2, "between": middle, "above_all": high * 2, "zero": 0.0, "negative": -1.0}[boundary]
        inputs["max_norm"] = chosen

    return Domain("max_norm", tuple(Boundary(b, n, errors.get(b)) for b, n in notes.items()), classify, put)


MAX_NORM = _max_norm()


def _max_norm_finish(inputs: Inputs, rng: np.random.Generator) -> None:
    """max_norm placed again among the norms of the rows as they finally are, never within a rounding of one."""
    at = MAX_NORM.at(inputs, frozenset())
    if at in ("below_all", "between", "above_all"):
        MAX_NORM.put(inputs, at, rng)


def _norm_type(value: Any) -> Optional[str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return "nonpositive" if value <= 0 else "one" if value == 1 else "two" if value == 2 else "other"


def _lookups() -> dict[str, tuple[Domain, ...]]:
    def weight(large: bool) -> tuple[Domain, ...]:
        return (following(table_extent("weight", 0, large=large), within("ids", rows_of("weight"))),
                table_extent("weight", 1), dtyped(("weight", "grad_output")))

    ids = ids_domains("ids", rows_of("weight"))
    options = (padding("padding_idx", rows_of("weight")),
               choice("scale_grad_by_freq", {"absent": ABSENT, "false": False, "true": True, "not_boolean": 1},
                      {"absent": "not given", "false": "False", "true": "each row's gradient divided by its count",
                       "not_boolean": "1, not a boolean"}, {"not_boolean": "invalid_config"}, other="not_boolean"))
    grad = (shape_of("grad_output", lambda inputs: _lookup_shape(inputs) if "grad_output" in inputs else None),)
    norm = choice("norm_type", {"one": 1.0, "two": 2.0, "other": 3.0, "nonpositive": 0.0},
                  {"one": "the 1-norm", "two": "the 2-norm", "other": "a p-norm, p = 3", "nonpositive": "p <= 0"},
                  {"nonpositive": "invalid_config"}, test=_norm_type)
    return {
        "embedding_forward": weight(True) + ids + options,
        "embedding_backward": weight(False) + ids + options + grad,
        "embedding_backward_sparse": weight(False) + ids + grad,
        "embedding_forward_max_norm": weight(False) + ids + (norm, MAX_NORM),
    }


def _shorter(inputs: Inputs, boundary: str) -> None:
    """x no longer than the table."""
    x, rows = array(inputs, "x"), int(np.shape(inputs["table"])[0])
    if x is not None and x.ndim >= 2 and x.shape[-2] > rows:
        inputs["x"] = x[..., :rows, :]


def _width(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    x, table = array(inputs, "x"), array(inputs, "table")
    if x is None or table is None or x.ndim < 1 or table.ndim != 2:
        return None
    return "matching" if x.shape[-1] == table.shape[1] else "mismatched"


def _put_width(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    x, table = array(inputs, "x"), array(inputs, "table")
    assert x is not None and table is not None
    width = table.shape[1] + (1 if boundary == "mismatched" else 0)
    inputs["x"] = normal(x, x.shape[:-1] + (width,), rng)


def _positions() -> dict[str, tuple[Domain, ...]]:
    def seq(inputs: Inputs, n: int, rng: np.random.Generator) -> np.ndarray:
        x = array(inputs, "x")
        assert x is not None
        return normal(x, x.shape[:-2] + (n, x.shape[-1]), rng)

    def rank(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        x = array(inputs, "x")
        return None if x is None else {2: "2d", 3: "3d"}.get(x.ndim, "4d")

    def put_rank(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        x = array(inputs, "x")
        assert x is not None
        inputs["x"] = normal(x, {"2d": (), "3d": (2,), "4d": (1, 2)}[boundary] + x.shape[-2:], rng)

    ranks = Domain("x", (Boundary("3d", "(B, T, D)"), Boundary("2d", "(T, D)", "shape_mismatch"),
                         Boundary("4d", "(1, B, T, D)", "shape_mismatch")), rank, put_rank, "rank")
    table = (following(table_extent("table", 0), _shorter), dtyped(("table", "x", "grad_output")))
    x = (ranks, sized("x", seq, "length", lambda a: int(a.shape[-2]) if a.ndim >= 2 else 1),
         Domain("x", (Boundary("matching", "x's D is the table's"), Boundary("mismatched", "another D", "shape_mismatch")),
                _width, _put_width, "width"))
    start = (start_position("start_pos", rows_of("table"), lambda inputs: int(np.shape(inputs["x"])[-2])),)
    grad = shape_of("grad_output", lambda inputs: np.shape(inputs["x"]) if "grad_output" in inputs else None)
    return {"learned_positions_forward": table + x + start, "learned_positions_backward": table + x + start + (grad,)}


def _dimension(value: Any) -> Optional[str]:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return "one" if value == 1 else "two" if value == 2 else "odd" if value % 2 else "even"


def widths(name: str) -> Domain:
    """A width D: 1, 2, odd, even (the sinusoids' odd-D rules, a rope layer's even D)."""
    return choice(name, {"one": 1, "two": 2, "odd": 7, "even": 8},
                  {"one": "D = 1", "two": "D = 2", "odd": "an odd D > 1", "even": "an even D > 2"}, test=_dimension)


def _length(value: Any) -> Optional[str]:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return "one" if value == 1 else "long" if value > 4096 else "many"


def _sinusoid() -> dict[str, tuple[Domain, ...]]:
    length = choice("max_len", {"one": 1, "many": 16, "long": 8192},
                    {"one": "a single position", "many": "a few positions", "long": "past 4096: float32 error grows"},
                    test=_length)
    dim = widths("embed_dim")
    dtype = choice("dtype", {d: d for d in FLOATS}, {d: f"rounded once to {d}" for d in FLOATS})
    return {"sinusoidal_table": (length, dim, dtype, convention("sinusoidal"))}


def _lookup_base(rng: np.random.Generator) -> Inputs:
    return {"weight": normal(None, (6, 3), rng), "ids": rng.integers(0, 6, size=(5,)).astype(np.int64)}


def _max_norm_base(rng: np.random.Generator) -> Inputs:
    return {**_lookup_base(rng), "norm_type": 2.0, "max_norm": 1.0}


def _positions_base(rng: np.random.Generator) -> Inputs:
    return {"table": normal(None, (8, 4), rng), "x": normal(None, (2, 3, 4), rng), "start_pos": 0}


DOMAINS: dict[str, dict[str, tuple[Domain, ...]]] = {
    "token_lookup": _lookups(),
    "learned_positions": _positions(),
    "sinusoidal": _sinusoid(),
}

_lookup_grad = upstream(("grad_output", "weight"), _lookup_shape)
_positions_grad = upstream(("grad_output", "x"), lambda inputs: np.shape(inputs["x"]))
BASES: dict[str, Base] = {
    "embedding_forward": Base(_lookup_base),
    "embedding_backward": Base(_lookup_base, _lookup_grad),
    "embedding_backward_sparse": Base(_lookup_base, _lookup_grad),
    "embedding_forward_max_norm": Base(_max_norm_base, _max_norm_finish),
    "learned_positions_forward": Base(_positions_base),
    "learned_positions_backward": Base(_positions_base, _positions_grad),
    "sinusoidal_table": Base(lambda rng: {"max_len": 16, "embed_dim": 8, "dtype": "float32"}),
}

_IMPOSSIBLE = "an array of that rank cannot hold that many elements"
EXCLUDED: dict[str, tuple[Excluded, ...]] = {
    "token_lookup": (
        Excluded(("ids.rank", "0d"), ("ids.count", "empty"), _IMPOSSIBLE),
        Excluded(("ids.rank", "0d"), ("ids.count", "many"), _IMPOSSIBLE),
        Excluded(("weight.rows", "one"), ("ids.range", "inside"), "V = 1: the only valid id is V-1"),
        Excluded(("weight.rows", "one"), ("padding_idx", "positive"), "V = 1: no positive row"),
        *(Excluded(point, ("max_norm", "between"), "one referenced row: no norm between two")
          for point in (("weight.rows", "one"), ("ids.count", "one"), ("ids.rank", "0d"))),
        *(Excluded(("ids.count", "empty"), ("max_norm", b), "no referenced row: no norm to compare")
          for b in ("below_all", "between", "above_all")),
    ),
    "learned_positions": tuple(Excluded(("table.rows", "one"), ("start_pos", b), "L = 1: the only start that fits is 0")
                               for b in ("inside", "last_fit")) + (
        Excluded(("table.rows", "one"), ("x.length", "many"), "L = 1: several positions do not fit", "sequence_too_long"),),
    "sinusoidal": tuple(
        Excluded(("embed_dim", d), ("convention", "mlx"), "MLX's profile refuses an odd D (EMB-SIN-6)", "invalid_config")
        for d in ("one", "odd")),
}
