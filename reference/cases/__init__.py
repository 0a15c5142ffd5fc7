"""The test plan: every golden case, declared by hand with a stable id.

Each area module lists :class:`CaseSpec` objects: inputs plus what the case pins
(requirement ids, optional features, the expected error kind if any). The
generator computes the expected values with the reference; nothing here states
an expected output by hand, except the error kind, which the generator checks
against the reference.

Areas, one fixture file each: ``token_lookup``, ``lookup_options``, ``learned_positions``, ``sinusoidal``,
``embedding_layer``, ``half_precision``, ``memory``, ``rope`` (its 2.0.0 scaling families and fused rotation in
``rope_families``, its declared conventions in ``rope_conventions`` (2.2.0), written to the same fixture file),
``stateful`` (cases of calls on one instance), ``bags`` (reduced lookups, since 2.1.0), ``quantized`` (since 2.3.0,
with ``quantized_tables``, the tables of its cases, and ``quantized_cover``, its pairwise cases), and after each
other area's own cases its pairwise covering rows (``covering``, since 2.3.0); ``catalogue`` keys each area's builder
by its area, in file order. ``domains`` declares every operation's input domains (their boundaries,
the errors and the pairs the spec names), one module a family (``domains_lookup``, ``domains_layer``,
``domains_rope``, ``domains_bags``, ``domains_quantized``) built of ``domain_kinds`` (the records), ``domain_shapes`` and ``domain_ids``
(the shapes of domain); a builder may write a case at named boundaries with its ``case_at``."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np

from embconf.model.dtypes import round_once  # bfloat16 rounded once, whatever ml_dtypes does (spec section 13)


@dataclass(frozen=True)
class CaseSpec:
    id: str
    description: str
    requirements: tuple[str, ...]
    operation: str
    inputs: dict[str, Any]
    features: tuple[str, ...] = ()
    error: Optional[str] = None
    sample_rows: dict[str, list[int]] = field(default_factory=dict)
    calls: tuple[CaseSpec, ...] = ()  # a case of calls on one instance (spec section 9.7): each call's spec


def sequence(case_id: str, description: str, requirements: tuple[str, ...], calls: list[CaseSpec]) -> CaseSpec:
    """A case of ``calls`` made in order on one instance: its features are theirs and ``stateful``; each call's golden
    is the reference's answer to it alone (the reference keeps nothing between calls: what a fresh instance gives)."""
    features = tuple(dict.fromkeys(f for call in calls for f in call.features)) + ("stateful",)
    return CaseSpec(case_id, description, requirements, calls[0].operation, {}, features, calls=tuple(calls))


def rng_for(case_id: str) -> np.random.Generator:
    """A generator seeded from the case id alone, so one case never shifts another's data."""
    return np.random.default_rng(int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "little"))


def table(case_id: str, rows: int, cols: int, dtype: str = "float32", salt: str = "") -> np.ndarray:
    return round_once(rng_for(case_id + "/" + salt).standard_normal((rows, cols)), dtype)


def values(case_id: str, shape: tuple[int, ...], dtype: str = "float32", salt: str = "") -> np.ndarray:
    return round_once(rng_for(case_id + "/" + salt).standard_normal(shape), dtype)


def token_ids(case_id: str, vocab_size: int, shape: tuple[int, ...], dtype: str = "int64") -> np.ndarray:
    return rng_for(case_id + "/ids").integers(0, vocab_size, size=shape).astype(dtype)


def all_cases() -> list[tuple[str, list[CaseSpec]]]:
    """(area, cases) in file order; an area is one fixture file (``catalogue.BUILDERS``, keyed by area)."""
    from embconf.reference.cases.catalogue import BUILDERS

    return [(area, [tag_canonical_table(spec) for spec in build()]) for area, build in BUILDERS.items()]


CANONICAL_TABLE = "sinusoid-interleaved"


def tag_canonical_table(spec: CaseSpec) -> CaseSpec:
    """A case whose expected values are rows of the canonical sinusoid table (a table, or a sinusoidal layer's
    forward) and of no declared profile carries ``sinusoid-interleaved`` (1.2.0): an implementation that
    declares another profile is checked against that profile's cases instead (the precedent: 1.1.0's
    ``sinusoid_stored``, implied unless the other is declared, so no outcome changes)."""
    sinusoid_layer = spec.operation == "embedding_layer_forward" and spec.inputs["config"].get("pos_encoding") == "sinusoidal"
    table_values = spec.error is None and (spec.operation == "sinusoidal_table" or sinusoid_layer)
    if not table_values or any(f.startswith("sinusoid-") for f in spec.features):
        return spec
    return replace(spec, features=spec.features + (CANONICAL_TABLE,))
