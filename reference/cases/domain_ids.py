"""Domains several families share: token ids (their count, rank, dtype and range against V), a padding index, a
start position against a table's length, and the integer sizes of the memory arithmetic (spec section 10: counts
of unbounded width, so past 2^53 and 2^63)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

import numpy as np

from embconf.reference.cases.domain_kinds import ABSENT, Boundary, Domain, Inputs, array, set_value, value_of
from embconf.reference.cases.domain_shapes import sized

Vocab = Callable[[Mapping[str, Any]], int]  # V of a case, from its inputs (the weight's rows, a config's vocab_size)


def rows_of(name: str) -> Vocab:
    return lambda inputs: int(np.asarray(inputs[name]).shape[0])


def ids_domains(name: str, vocab: Vocab, ranks: tuple[str, ...] = ("0d", "1d", "2d", "3d"),
                dtypes: tuple[str, ...] = ("int64", "int32", "float_ids"), rank_errors: Mapping[str, str] = {},
                negative_unless: tuple[str, ...] = ()) -> tuple[Domain, ...]:
    """The ids of a lookup: how many, of which rank and dtype, and where in [0, V) (or outside it: the errors;
    a negative id none under a convention of ``negative_unless``)."""

    def make(inputs: Inputs, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` ids of the rank and dtype the ids have (a 0-D id stays one)."""
        given = array(inputs, name)
        ndim, dtype = (given.ndim, given.dtype) if given is not None else (1, np.dtype(np.int64))
        shape = () if ndim == 0 and n == 1 else (n,) + (1,) * (max(ndim, 1) - 1)
        return rng.integers(0, max(vocab(inputs), 1), size=shape).astype(dtype)

    shapes = {"0d": (), "1d": (5,), "2d": (2, 3), "3d": (2, 2, 2)}

    def rank(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = array(inputs, name)
        found = None if given is None else f"{min(given.ndim, 3)}d"
        return found if found in ranks else None

    def put_rank(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        set_value(inputs, name, rng.integers(0, max(vocab(inputs), 1), size=shapes[boundary]).astype(np.int64))

    def dtype(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = array(inputs, name)
        if given is None:
            return None
        return "float_ids" if given.dtype.kind == "f" else str(given.dtype) if str(given.dtype) in dtypes else None

    def put_dtype(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        given = array(inputs, name)
        if given is not None:
            set_value(inputs, name, given.astype(np.float32 if boundary == "float_ids" else boundary))

    value_notes = {"inside": "every id in [0, V-1)", "last_row": "the largest valid id, V-1",
                   "equal_v": "an id equal to V", "negative": "a negative id", "non_integral": "an id 0.5 in a float container"}
    errors = {"equal_v": "index_out_of_range", "negative": "index_out_of_range", "non_integral": "invalid_index"}
    values = tuple(b for b in value_notes if b != "non_integral" or "float_ids" in dtypes)

    def where(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = array(inputs, name)
        if given is None or given.size == 0:
            return None
        v = vocab(inputs)
        if given.dtype.kind == "f" and not np.all(np.isfinite(given) & (given == np.floor(given))):
            return "non_integral"
        return "negative" if given.min() < 0 else "equal_v" if given.max() >= v else \
            "last_row" if given.max() == v - 1 else "inside"

    def put_where(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        given, v = array(inputs, name), vocab(inputs)
        assert given is not None
        ids = np.array(given % (max(v - 1, 1) if boundary == "inside" else v))  # an array, also for a 0-D id
        if ids.size:
            ids.flat[-1] = {"last_row": v - 1, "equal_v": v}.get(boundary, ids.flat[-1])
            ids.flat[0] = -1 if boundary == "negative" else ids.flat[0]
        if boundary == "non_integral":
            ids = ids.astype(np.float32)
            ids.flat[0] = 0.5
        set_value(inputs, name, ids)

    return (
        Domain(name, tuple(Boundary(r, f"{r} ids", rank_errors.get(r)) for r in ranks), rank, put_rank, "rank"),
        sized(name, make),
        Domain(name, tuple(Boundary(d, f"ids of {d}") for d in dtypes), dtype, put_dtype, "dtype"),
        Domain(name, tuple(Boundary(b, value_notes[b], errors.get(b), unless=negative_unless if b == "negative" else ())
                           for b in values), where, put_where, "range"),
    )


def padding(name: str, vocab: Vocab) -> Domain:
    """An optional padding index: absent, 0, a positive row, a negative one (counted from the end), or outside
    [-V, V) (invalid_config)."""
    notes = {"absent": "no padding row", "zero": "padding_idx 0", "positive": "a positive row",
             "negative": "-1: row V-1", "out_of_range": "padding_idx V"}

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given, v = value_of(inputs, name), vocab(inputs)
        if given is ABSENT:
            return "absent"
        if not isinstance(given, (int, np.integer)) or isinstance(given, bool) or not -v <= given < v:
            return "out_of_range"
        return "zero" if given == 0 else "negative" if given < 0 else "positive"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        v = vocab(inputs)
        chosen = {"absent": ABSENT, "zero": 0, "positive": max(v - 2, 1), "negative": -1, "out_of_range": v}[boundary]
        set_value(inputs, name, chosen)

    errors = {"out_of_range": "invalid_config"}
    return Domain(name, tuple(Boundary(b, n, errors.get(b)) for b, n in notes.items()), classify, put)


def start_position(name: str, length: Callable[[Mapping[str, Any]], Optional[int]],
                   seq_len: Callable[[Mapping[str, Any]], int]) -> Domain:
    """A start position against a table of ``length`` rows: 0, inside, the last that fits, past the end
    (sequence_too_long), negative or not an integer (invalid_start_pos)."""
    notes = {"zero": "start at 0", "inside": "a start inside the table", "last_fit": "start + T = L, the last that fits",
             "past_end": "start + T > L", "negative": "start -1", "non_integer": "start 0.5"}
    errors = {"past_end": "sequence_too_long", "negative": "invalid_start_pos", "non_integer": "invalid_start_pos"}

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given, total = value_of(inputs, name), length(inputs)
        if given is ABSENT:
            return None
        if not isinstance(given, (int, np.integer)) or isinstance(given, bool):
            return "non_integer"
        if given < 0:
            return "negative"
        end = given + seq_len(inputs)
        if total is not None and end > total:
            return "past_end"
        return "zero" if given == 0 else "last_fit" if end == total else "inside"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        total, t = length(inputs) or 8, seq_len(inputs)
        fits = max(total - t, 0)
        chosen = {"zero": 0, "inside": max(fits // 2, 1) if fits > 1 else 0, "last_fit": fits, "past_end": fits + 1,
                  "negative": -1, "non_integer": 0.5}[boundary]
        set_value(inputs, name, chosen)

    return Domain(name, tuple(Boundary(b, n, errors.get(b)) for b, n in notes.items()), classify, put)


SIZES = {"zero": 0, "one": 1, "many": 768, "past_2_53": 2**53 + 1, "past_2_63": 2**63 + 1}
SIZE_NOTES = {"zero": "0", "one": "1", "many": "an ordinary size", "past_2_53": "2^53 + 1: no longer exact in a float64",
              "past_2_63": "2^63 + 1: past every fixed-width integer"}


def integer(name: str, sizes: tuple[str, ...] = ("one", "many", "past_2_53", "past_2_63")) -> Domain:
    """An integer size of the memory arithmetic, up to the widths where floats and int64 break."""

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = value_of(inputs, name)
        if not isinstance(given, (int, np.integer)) or isinstance(given, bool):
            return None
        found = "past_2_63" if given > 2**63 else "past_2_53" if given > 2**53 else "zero" if given == 0 else \
            "one" if given == 1 else "many"
        return found if found in sizes else None

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        set_value(inputs, name, SIZES[boundary])

    return Domain(name, tuple(Boundary(s, SIZE_NOTES[s]) for s in sizes), classify, put)
