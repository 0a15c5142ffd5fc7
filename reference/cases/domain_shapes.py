"""The few shapes of domain every family's table is made of (:mod:`embconf.reference.cases.domains`): a named
value among a few (:func:`choice`), the size of an array (:func:`sized`), the dtype of arrays that share it
(:func:`dtyped`), a declared convention (:func:`convention`), a derived input's shape (:func:`shape_of`), and a
domain whose setter makes the inputs that depend on it follow (:func:`following`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

import numpy as np

from embconf.model.dtypes import round_once
from embconf.reference.cases.domain_kinds import ABSENT, Boundary, Domain, Inputs, array, same, set_value, value_of


def with_grad(make: Callable[[np.random.Generator], Inputs]) -> Callable[[np.random.Generator], Inputs]:
    """A backward's starting inputs: the forward's and a gradient, which the finish gives its shape."""
    return lambda rng: {**make(rng), "grad_output": None}


def following(domain: Domain, follow: Callable[[Inputs, str], None]) -> Domain:
    """``domain`` whose setter then makes the inputs that depend on it follow (ids within a table set smaller)."""

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        domain.put(inputs, boundary, rng)
        follow(inputs, boundary)

    return Domain(domain.input, domain.boundaries, domain.classify, put, domain.aspect)


def within(ids: str, vocab: Callable[[Mapping[str, Any]], int]) -> Callable[[Inputs, str], None]:
    """A follower that keeps the ids ``ids`` inside [0, V) once V is set."""

    def follow(inputs: Inputs, boundary: str) -> None:
        given = array(inputs, ids)
        if given is not None and given.dtype.kind in "iu":
            set_value(inputs, ids, given % max(vocab(inputs), 1))

    return follow


def choice(name: str, values: Mapping[str, Any], notes: Mapping[str, str], errors: Mapping[str, str] = {},
           other: Optional[str] = None, test: Optional[Callable[[Any], Optional[str]]] = None,
           requirements: Mapping[str, tuple[str, ...]] = {}) -> Domain:
    """An input (or config key) at one of a few named values (:data:`ABSENT` for not given); ``errors``: the error
    kind of the boundaries that are errors; ``other``: the boundary of any value not listed (an unknown mode);
    ``test``: a classifier of the value to use instead of equality (for ranges of numbers); ``requirements``: the
    requirement ids a case at a boundary exercises (a bag mode's own rule)."""
    boundaries = tuple(Boundary(b, notes[b], errors.get(b), requirements=requirements.get(b, ())) for b in values)

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = value_of(inputs, name)
        if test is not None and given is not ABSENT:
            return test(given)
        found = next((b for b, v in values.items() if same(v, given)), None)
        return found if found is not None or given is ABSENT else other

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        set_value(inputs, name, values[boundary])

    return Domain(name, boundaries, classify, put)


COUNTS = {"empty": 0, "one": 1, "many": 6}
COUNT_NOTES = {"empty": "no elements at all", "one": "a single element", "many": "several elements"}


def sized(name: str, make: Callable[[Inputs, int, np.random.Generator], Any], aspect: str = "count",
          measure: Callable[[np.ndarray], int] = np.size) -> Domain:
    """How many elements (or rows: ``measure``) an array input holds: empty, one, many. ``make`` builds the input
    with that many."""

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = array(inputs, name)
        if given is None:
            return None
        n = measure(given)
        return "empty" if n == 0 else "one" if n == 1 else "many"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        set_value(inputs, name, make(inputs, COUNTS[boundary], rng))

    return Domain(name, tuple(Boundary(b, COUNT_NOTES[b]) for b in COUNTS), classify, put, aspect)


FLOATS = ("float32", "float64", "float16", "bfloat16")
DTYPE_NOTES = {"float32": "the default", "float64": "double precision", "float16": "half precision",
               "bfloat16": "brain float", "int64": "int64 ids", "int32": "int32 ids",
               "float_ids": "integer-valued floats (TinyTorch's ids)", "int8": "one byte an element"}


def dtyped(names: tuple[str, ...], dtypes: tuple[str, ...] = FLOATS) -> Domain:
    """The float dtype of one or more array inputs that share it (a table and the gradient of its output): the
    first names it; setting it rounds each once."""

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given = array(inputs, names[0])
        return None if given is None or str(given.dtype) not in dtypes else str(given.dtype)

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        for name in names:
            given = array(inputs, name)
            if given is not None:
                set_value(inputs, name, round_once(given.astype(np.float64), boundary))

    return Domain(names[0], tuple(Boundary(d, DTYPE_NOTES[d]) for d in dtypes), classify, put, "dtype")


def convention(area: str) -> Domain:
    """The declared convention a case is answered under, read from its features: ``canonical`` (none declared, or
    the canonical marker), or each convention of the family's kind (:mod:`embconf.model.convention`)."""
    from embconf.model.convention import kind_of_area

    kind = kind_of_area(area)
    assert kind is not None, area
    from embconf.model.sinusoid import FAMILY_FEATURE  # a point of the family: computed by the run, never frozen

    named = {f.split("-", 1)[1]: f for f in sorted(kind.features - kind.markers - {FAMILY_FEATURE})}
    boundaries = (Boundary("canonical", "the canonical answer, no convention declared"),) + tuple(
        Boundary(b, f"answered under the declared {kind.name} convention {b}", features=(f,)) for b, f in named.items())

    def classify(inputs: Mapping[str, Any], found: frozenset[str]) -> Optional[str]:
        return next((b for b, f in named.items() if f in found), "canonical")

    return Domain("convention", boundaries, classify, lambda inputs, boundary, rng: None)


def shape_of(name: str, expected: Callable[[Mapping[str, Any]], Optional[tuple[int, ...]]],
             error: str = "shape_mismatch") -> Domain:
    """Whether a derived input (a gradient) has the shape the others give it: ``matching``, or ``mismatched``,
    the error the spec names."""

    def classify(inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        given, want = array(inputs, name), expected(inputs)
        if given is None or want is None:
            return None
        return "matching" if given.shape == want else "mismatched"

    def put(inputs: Inputs, boundary: str, rng: np.random.Generator) -> None:
        given = array(inputs, name)
        if boundary == "mismatched" and given is not None:
            set_value(inputs, name, np.concatenate([given.reshape(-1), given.reshape(-1)[:1]]).astype(given.dtype))

    boundaries = (Boundary("matching", "the shape the other inputs give it"),
                  Boundary("mismatched", "any other shape", error))
    return Domain(name, boundaries, classify, put, "shape")
