"""The records of the input domains (:mod:`embconf.reference.cases.domains`): a :class:`Domain` is one input of
an operation (its spec name) or a named aspect of it (``ids.count``): its boundaries, a classifier (a case's decoded
inputs and features to the boundary it is at, or None), and a setter that puts a case's inputs at a boundary (what
:func:`~embconf.reference.cases.domains.inputs_at` composes). A :class:`Boundary` where the spec names an error
carries that error kind; an :class:`Excluded` pair is one the spec does not allow together; a :class:`Base` is how
an operation's inputs start. The shapes of domain every family's table is made of are in
:mod:`embconf.reference.cases.domain_shapes`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

Inputs = dict[str, Any]
Classify = Callable[[Mapping[str, Any], frozenset[str]], Optional[str]]
Put = Callable[[Inputs, str, np.random.Generator], None]
ABSENT = object()  # the value of an optional input that is not given


@dataclass(frozen=True)
class Boundary:
    """One boundary value of a domain; ``error``: the error kind the spec names for a case at it."""

    name: str
    note: str
    error: Optional[str] = None
    features: tuple[str, ...] = ()  # what a case at it carries (a declared convention's feature)
    unless: tuple[str, ...] = ()  # features under which the spec names no error here (a declared convention's)
    requirements: tuple[str, ...] = ()  # the requirement ids a case at it exercises, where the table names them

    def error_under(self, features: frozenset[str]) -> Optional[str]:
        """The error a case at it is, with ``features``: none under a convention that answers it."""
        return None if features & set(self.unless) else self.error


@dataclass(frozen=True)
class Domain:
    """One input (or a named aspect of it) of an operation, with its boundaries."""

    input: str  # the spec's name of the input (``config.padding_idx`` for a key of the layer's config)
    boundaries: tuple[Boundary, ...]
    classify: Classify
    put: Put
    aspect: str = ""  # "count", "dtype", ... ("" for the input's value itself)

    @property
    def name(self) -> str:
        return f"{self.input}.{self.aspect}" if self.aspect else self.input

    def boundary(self, name: str) -> Boundary:
        """The boundary called ``name``; KeyError naming the known ones otherwise."""
        for boundary in self.boundaries:
            if boundary.name == name:
                return boundary
        raise KeyError(f"{self.name} has no boundary {name!r}; known: {', '.join(b.name for b in self.boundaries)}")

    def at(self, inputs: Mapping[str, Any], features: frozenset[str]) -> Optional[str]:
        """The boundary a case's inputs are at, or None."""
        found = self.classify(inputs, features)
        if found is not None:
            self.boundary(found)  # a classifier names only declared boundaries
        return found


@dataclass(frozen=True)
class Excluded:
    """A pair of boundaries the spec does not allow together in a case with outputs: ``error`` is the error kind it
    names for the pair, None when the two cannot be built together at all."""

    first: tuple[str, str]  # (domain name, boundary name)
    second: tuple[str, str]
    reason: str
    error: Optional[str] = None

    def holds(self, a: tuple[str, str], b: tuple[str, str]) -> bool:
        return {a, b} == {self.first, self.second}


@dataclass(frozen=True)
class Base:
    """How a case of one operation starts (:func:`make`, from a seeded generator) and how its derived inputs follow
    the others once they are set (:func:`finish`: a gradient's shape from the output's, weights from the ids)."""

    make: Callable[[np.random.Generator], Inputs]
    finish: Callable[[Inputs, np.random.Generator], None] = lambda inputs, rng: None


def value_of(inputs: Mapping[str, Any], name: str) -> Any:
    """An input, or for ``config.KEY`` a key of the config; :data:`ABSENT` when not given (or None)."""
    if name.startswith("config."):
        config = inputs.get("config") or {}
        value = config.get(name.split(".", 1)[1], ABSENT)
    else:
        value = inputs.get(name, ABSENT)
    return ABSENT if value is None else value


def set_value(inputs: Inputs, name: str, value: Any) -> None:
    """Set (or, with :data:`ABSENT`, remove) an input or a key of the config."""
    holder, key = (inputs.setdefault("config", {}), name.split(".", 1)[1]) if name.startswith("config.") else (inputs, name)
    if holder is inputs and name.startswith("config."):
        holder = inputs["config"] = dict(holder)
    if value is ABSENT:
        holder.pop(key, None)
    else:
        holder[key] = value


def same(a: Any, b: Any) -> bool:
    """Equal and of one kind (True is not 1, 1.0 is not 1)."""
    if isinstance(a, (bool, np.bool_)) or isinstance(b, (bool, np.bool_)):
        return isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)) and bool(a) == bool(b)
    if isinstance(a, str) or isinstance(b, str) or a is ABSENT or b is ABSENT:
        return a is b or (isinstance(a, str) and isinstance(b, str) and a == b)
    return type(a) is type(b) and a == b


def array(inputs: Mapping[str, Any], name: str) -> Optional[np.ndarray]:
    given = value_of(inputs, name)
    return None if given is ABSENT or isinstance(given, (str, Mapping)) else np.asarray(given)
