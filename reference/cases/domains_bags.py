"""The input domains of the bags (spec section 16): the table, the ids, the offsets (how many bags, an empty one,
each way of being invalid), the mode, per-sample weights, padding, include_last_offset, each declared bag
convention, and a sharded table's memory."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import numpy as np

from embconf.model.bag import MODES
from embconf.model.bag_conventions import BagConvention
from embconf.model.dtypes import round_once
from embconf.reference.cases.domain_ids import ids_domains, integer, padding, rows_of
from embconf.reference.cases.domain_kinds import ABSENT, Base, Boundary, Domain, Excluded, Inputs, array, value_of
from embconf.reference.cases.domain_shapes import (
    FLOATS,
    choice,
    convention,
    dtyped,
    following,
    shape_of,
    with_grad,
    within,
)
from embconf.reference.cases.domains_lookup import normal, table_extent

DROP_NEGATIVE_IDS = BagConvention.DROP_NEGATIVE_IDS  # answers a negative id (EMB-BAG-V1)
OFFSETS = {"absent": "null (2-D ids)", "no_bags": "[]: no bag at all", "one_bag": "one bag", "many_bags": "several bags",
           "empty_bag": "a bag with no ids (a repeated offset, or the last at N)", "not_from_zero": "the first is not 0",
           "decreasing": "an offset below the one before", "past_end": "an offset past N",
           "last_not_n": "include_last_offset and the last offset is not N"}
OFFSET_ERRORS = {b: "invalid_offsets" for b in ("not_from_zero", "decreasing", "past_end", "last_not_n")}


def _last(inputs: Mapping[str, Any]) -> bool:
    return value_of(inputs, "include_last_offset") is True


def _offsets(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    offsets, ids = array(inputs, "offsets"), array(inputs, "ids")
    if offsets is None:
        return "absent"
    points, n = [int(v) for v in offsets.reshape(-1)], (0 if ids is None else ids.size)
    if not points:
        return "no_bags"
    if points[0] != 0:
        return "not_from_zero"
    if any(b < a for a, b in zip(points, points[1:])):
        return "decreasing"
    if points[-1] > n:
        return "past_end"
    if _last(inputs) and points[-1] != n:
        return "last_not_n"
    ends = points[1:] + ([] if _last(inputs) else [n])
    if any(b == a for a, b in zip(points, ends)):
        return "empty_bag"
    return "one_bag" if len(ends) == 1 else "many_bags"


def _put_offsets(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    ids = array(inputs, "ids")
    n = 0 if ids is None else ids.size
    half = n // 2
    if boundary == "absent" and ids is not None and ids.ndim == 1:  # fixed-length bags: 2-D ids
        inputs["ids"] = ids.reshape(-1, 1)
    points = {"absent": None, "no_bags": [], "one_bag": [0], "many_bags": [0, max(half, 1)] if n > 1 else [0, 0],
              "empty_bag": [0, 0, half], "not_from_zero": [1], "decreasing": [0, 2, 1], "past_end": [0, n + 1],
              "last_not_n": [0]}[boundary]
    if points is not None and _last(inputs) and boundary not in ("last_not_n", "no_bags"):
        points = points + [n]
    if boundary == "last_not_n":
        inputs["include_last_offset"] = True
        points = [0, max(n - 1, 0)] if n else [0, 1]
    inputs["offsets"] = None if points is None else np.array(points, dtype=np.int64)


def _weights(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    given, ids = array(inputs, "per_sample_weights"), array(inputs, "ids")
    if given is None:
        return "absent"
    if ids is not None and given.shape != ids.shape:
        return "wrong_shape"
    return "positive" if np.all(given.astype(np.float64) > 0) else "nonpositive"


def _put_weights(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    ids = array(inputs, "ids")
    shape = (0,) if ids is None else ids.shape
    if boundary == "absent":
        inputs.pop("per_sample_weights", None)
        return
    if boundary == "wrong_shape":  # one weight more than ids
        shape = shape[:-1] + (shape[-1] + 1,)
    weight = array(inputs, "weight")
    found = np.abs(rng.standard_normal(shape)) + 0.5  # every weight > 0
    if boundary == "nonpositive" and found.size:
        found.flat[0] = 0
        found.flat[-1] = -found.flat[-1]
    inputs["per_sample_weights"] = round_once(found, "float32" if weight is None else str(weight.dtype))  # the table's dtype


def _valid_offsets(inputs: Inputs, boundary: str) -> None:
    """Offsets that fit the ids as they now are: two bags over 1-D ids (the last offset N with include_last_offset),
    none over 2-D ids."""
    ids = np.asarray(inputs["ids"])
    points = [0, ids.size // 2] + ([ids.size] if _last(inputs) else [])
    inputs["offsets"] = None if ids.ndim == 2 else np.array(points, dtype=np.int64)


FORWARD_MODES = {"sum": ("EMB-BAG-2",), "mean": ("EMB-BAG-3",), "max": ("EMB-BAG-4",), "sqrtn": ("EMB-BAG-5",)}
BACKWARD_MODES = {m: ("EMB-BAG-11" if m == "max" else "EMB-BAG-10",) + FORWARD_MODES[m] for m in FORWARD_MODES}


def _bags(large: bool, modes: Mapping[str, tuple[str, ...]], weighted: tuple[str, ...]) -> tuple[Domain, ...]:
    """The bag's domains; ``large``: with a table of 2^16 + 1 rows (the forward's only, as ``domains_lookup`` says);
    ``modes``: the requirements of each mode's own rule (its reduction, and in the backward its gradient);
    ``weighted``: those of a case with per-sample weights."""
    rank, count, dtype, where = ids_domains("ids", rows_of("weight"), ("1d", "2d"), ("int64", "int32"),
                                            negative_unless=(DROP_NEGATIVE_IDS.feature,))
    weights = Domain("per_sample_weights", (
        Boundary("absent", "no weights"), Boundary("positive", "every weight > 0", requirements=weighted),
        Boundary("nonpositive", "a weight 0 and a negative one", requirements=weighted),
        Boundary("wrong_shape", "not the shape of the ids", "shape_mismatch")), _weights, _put_weights)
    return (
        following(table_extent("weight", 0, large=large, large_width=1), within("ids", rows_of("weight"))),
        dtyped(("weight", "grad_output", "per_sample_weights")),
        following(rank, _valid_offsets), following(count, _valid_offsets), dtype, where,
        following(choice("include_last_offset", {"absent": ABSENT, "false": False, "true": True, "not_boolean": 1},
               {"absent": "the default, False", "false": "False", "true": "the last offset is N, not a bag",
                "not_boolean": "1, not a boolean"}, {"not_boolean": "invalid_config"}, other="not_boolean"), _valid_offsets),
        Domain("offsets", tuple(Boundary(b, n, OFFSET_ERRORS.get(b)) for b, n in OFFSETS.items()), _offsets, _put_offsets),
        choice("mode", {**{m: m for m in MODES}, "unknown": "median"},
               {**{m: f"mode {m}" for m in MODES}, "unknown": "a mode not in the spec"}, {"unknown": "invalid_config"},
               other="unknown", requirements=modes),
        padding("padding_idx", rows_of("weight")),
        weights,
        convention("bags"),
    )


def _shards(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
    given, vocab = value_of(inputs, "shards"), value_of(inputs, "vocab_size")
    if not isinstance(given, int) or isinstance(given, bool):
        return None
    return "zero" if given < 1 else "one" if given == 1 else "past_rows" if isinstance(vocab, int) and given > vocab else "many"


def _put_shards(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
    vocab = value_of(inputs, "vocab_size")
    inputs["shards"] = {"zero": 0, "one": 1, "many": 4, "past_rows": (vocab if isinstance(vocab, int) else 3) + 1}[boundary]


def _sharding() -> tuple[Domain, ...]:
    shards = Domain("shards", (Boundary("one", "one shard"), Boundary("many", "four shards"),
                               Boundary("past_rows", "more shards than rows: some empty"),
                               Boundary("zero", "no shard", "invalid_config")), _shards, _put_shards)
    dtype = choice("dtype", {**{d: d for d in FLOATS}, "unknown": "float8"},
                   {**{d: f"{d} elements" for d in FLOATS}, "unknown": "not a dtype of the spec"},
                   {"unknown": "invalid_config"}, other="unknown")
    sharding = choice("sharding", {"row_wise": "row_wise", "column_wise": "column_wise", "unknown": "table_wise"},
                      {"row_wise": "blocks of rows", "column_wise": "blocks of columns", "unknown": "not a sharding"},
                      {"unknown": "invalid_config"}, other="unknown")
    # the answer is an int64 array (spec section 16): no width past 2^53 for its sizes yet
    return integer("vocab_size", ("one", "many")), integer("embed_dim", ("one", "many")), dtype, shards, sharding


def _bag_base(rng: np.random.Generator) -> Inputs:
    return {"weight": normal(None, (8, 4), rng), "ids": rng.integers(0, 8, size=(6,)).astype(np.int64),
            "offsets": np.array([0, 2, 5], np.int64), "mode": "sum"}


def _bag_grad_shape(inputs: Mapping[str, Any]) -> Optional[tuple[int, ...]]:
    """(B, D) of a well-formed backward, None otherwise."""
    if "grad_output" not in inputs:
        return None
    ids, offsets = np.asarray(inputs["ids"]), inputs.get("offsets")
    if (ids.ndim == 2) != (offsets is None) or ids.ndim not in (1, 2):
        return None
    count = ids.shape[0] if offsets is None else max(len(offsets) - int(_last(inputs)), 0)
    return count, int(np.shape(inputs["weight"])[1])


def _bag_finish(inputs: Inputs, rng: np.random.Generator) -> None:
    """2-D ids take no offsets; the gradient is (B, D)."""
    ids = np.asarray(inputs["ids"])
    if ids.ndim == 2 and inputs.get("offsets") is not None and np.size(inputs["offsets"]) and np.asarray(inputs["offsets"])[0] == 0:
        inputs["offsets"] = None
    shape = _bag_grad_shape(inputs)
    if shape is not None:
        inputs["grad_output"] = normal(array(inputs, "weight"), shape, rng)


DOMAINS: dict[str, dict[str, tuple[Domain, ...]]] = {"bags": {
    "embedding_bag_forward": _bags(True, FORWARD_MODES, ("EMB-BAG-9",)),
    "embedding_bag_backward": _bags(False, BACKWARD_MODES, ("EMB-BAG-9", "EMB-BAG-12"))
    + (shape_of("grad_output", _bag_grad_shape),),
    "sharded_table_bytes": _sharding(),
}}
BASES: dict[str, Base] = {
    "embedding_bag_forward": Base(_bag_base, _bag_finish),
    "embedding_bag_backward": Base(with_grad(_bag_base), _bag_finish),
    "sharded_table_bytes": Base(lambda rng: {"vocab_size": 10, "embed_dim": 8, "dtype": "float32", "shards": 4,
                                             "sharding": "row_wise"}),
}

_OFFSETS_GIVEN = tuple(b for b in OFFSETS if b != "absent")
EXCLUDED: dict[str, tuple[Excluded, ...]] = {"bags": (
    *(Excluded(("mode", "max"), ("per_sample_weights", b), "per-sample weights are not defined for mode max (EMB-BAG-4)",
               "invalid_config") for b in ("positive", "nonpositive")),
    *(Excluded(("ids.rank", "2d"), ("offsets", b), "2-D ids are fixed-length bags: offsets must be null (EMB-BAG-1)",
               "shape_mismatch") for b in _OFFSETS_GIVEN),
    Excluded(("ids.rank", "1d"), ("offsets", "absent"), "1-D ids need offsets (EMB-BAG-1)", "shape_mismatch"),
    Excluded(("weight.rows", "one"), ("ids.range", "inside"), "V = 1: the only valid id is V-1"),
    Excluded(("weight.rows", "one"), ("padding_idx", "positive"), "V = 1: no positive row"),
    Excluded(("include_last_offset", "true"), ("offsets", "no_bags"), "include_last_offset needs the last offset N", "invalid_offsets"),
    Excluded(("ids.count", "empty"), ("offsets", "many_bags"), "no ids: every bag is empty"),
    Excluded(("ids.count", "empty"), ("offsets", "one_bag"), "no ids: the bag is empty"),
    Excluded(("ids.count", "one"), ("offsets", "many_bags"), "one id: all bags but one are empty"),
    Excluded(("ids.count", "empty"), ("per_sample_weights", "nonpositive"), "no ids: no weight to be <= 0"),
    Excluded(("vocab_size", "one"), ("shards", "many"), "one row: more than one shard is more shards than rows"),
)}
