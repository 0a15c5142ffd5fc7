"""What the rotary-position adapters (``transformers:MODEL``, ``keras`` with keras_hub, ``mlx``) share.

- The names of the spec's rope features (:func:`rope_features`), so each adapter declares its pairing, partial
  rotary, arbitrary positions and scaling families from one place.
- :func:`contiguous_start`: the first position of a contiguous run ``p0, p0+1, ...`` (what an ``offset`` or
  ``start_index`` can express), or None; :func:`require_contiguous` declines the call otherwise.
- :func:`probe` and :func:`tables_of`: the tables of a framework that exposes no tables API, read off its
  own rotation. A row whose first element of every pair is 1 and second is 0 rotates into ``(cos, sin)``
  exactly (``1*cos - 0*sin`` and ``0*cos + 1*sin`` round to nothing), so the tables are the framework's own.
- :func:`check_pairing`: an unknown ``pairing`` rejected by the adapter (invalid_config, decided by glue)
  for a framework that has no pairing argument to pass it to; :func:`check_offset_length`: ``position_ids`` of
  another length than x's sequence axis rejected by an adapter that passes the framework their start only;
  :func:`check_rank`: an x without a sequence axis rejected by an adapter that adds a batch axis to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable, Optional

import numpy as np

from embconf.adapters.frameworks import glue_checks
from embconf.model.dtypes import numpy_dtype
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError
from embconf.reference.rope import TABLE_DTYPES

PAIRINGS = ("half_split", "interleaved")
SCALINGS = ("linear", "dynamic", "yarn", "llama3")  # the rope_types with a feature of their own; "default" needs none


def rope_features(
    pairings: Iterable[str], scalings: Iterable[str] = (), partial: bool = False, positions: bool = False
) -> frozenset[str]:
    """The rope features of an implementation with these pairings and scaling families, partial rotary
    (``rotary_dim < d``) and arbitrary ``position_ids`` (not only one contiguous run)."""
    features = {f"rope-{pairing}" for pairing in pairings} | {f"rope-{kind}" for kind in scalings}
    features |= {"rope-partial"} if partial else set()
    features |= {"rope-positions"} if positions else set()
    return frozenset(features)


def rope_type(scaling: Optional[Mapping[str, Any]]) -> str:
    """The scaling family a case names (``default`` when the mapping names none)."""
    return str((scaling or {}).get("rope_type", "default"))


def contiguous_start(position_ids: np.ndarray) -> Optional[int]:
    """``p0`` when ``position_ids`` is the run ``p0, p0+1, ..., p0+T-1``; None otherwise."""
    positions = np.asarray(position_ids).reshape(-1)
    if positions.size == 0:
        return 0
    start = int(positions[0])
    return start if np.array_equal(positions, np.arange(start, start + positions.size)) else None


def require_contiguous(position_ids: np.ndarray, api: str) -> int:
    """The first position of a contiguous run; Decline (not_applicable) for any other position_ids."""
    start = contiguous_start(position_ids)
    if start is None:
        raise Decline(f"{api} takes one contiguous run of positions (a start offset), not these position_ids")
    return start


def check_pairing(pairing: str, supported: Iterable[str]) -> None:
    """An unknown pairing is invalid_config, decided by the adapter (the framework has no pairing argument);
    a known pairing the framework does not implement is declined."""
    supported = tuple(supported)
    if pairing not in PAIRINGS:
        with glue_checks():
            raise EmbeddingError("invalid_config", f"unknown pairing {pairing!r}; one of {', '.join(PAIRINGS)}")
    if pairing not in supported:
        raise Decline(f"it rotates {' or '.join(supported)} pairs only, not {pairing}")


def probe(length: int, rotary_dim: int, pairing: str, dtype: str) -> np.ndarray:
    """A (length, rotary_dim) input whose rotation is the tables: 1 in the first element of every pair, 0 in
    the second (pairs (k, k+h) for half_split, (2k, 2k+1) for interleaved)."""
    rows = np.zeros((length, rotary_dim), dtype=numpy_dtype(dtype))
    half = rotary_dim // 2
    rows[:, slice(0, half) if pairing == "half_split" else slice(0, None, 2)] = 1
    return rows


def tables_of(rotated: np.ndarray, pairing: str) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)``: the rotation of :func:`probe` split into its pairs' first and second elements."""
    half = rotated.shape[-1] // 2
    if pairing == "half_split":
        return rotated[..., :half], rotated[..., half:]
    return rotated[..., 0::2], rotated[..., 1::2]


def check_rank(x: Any) -> None:
    """shape_mismatch (decided by glue) for an x of rank < 2: an adapter that views x as (batch, ..., T, d) for
    its framework cannot view one without a sequence axis."""
    if np.ndim(x) < 2:
        with glue_checks():
            raise EmbeddingError("shape_mismatch", f"x of rank {np.ndim(x)} has no sequence axis")


def batches(x: Any) -> int:
    """How many (T, d) matrices x holds: the product of its leading axes, spelled out for a reshape, where a -1
    is ambiguous as soon as T or d is 0 (an empty sequence)."""
    return int(np.prod(np.shape(x)[:-2], dtype=np.int64))


def rotary_fraction(rotary_dim: int, width: int) -> float:
    """The share of a head of ``width`` features that is rotated, as a framework's config takes it; a head of no
    features (the tables' probe for rotary_dim 0) is rotated whole, so the framework, not a division in the glue,
    answers a rotary width of 0."""
    return rotary_dim / width if width else 1.0


def check_table_dtype(dtype: str) -> None:
    """invalid_config (decided by glue) for a table dtype the spec does not name: the adapter turns the name into
    its framework's dtype, so the framework never sees a name it could refuse."""
    if dtype not in TABLE_DTYPES:
        with glue_checks():
            raise EmbeddingError("invalid_config", f"unknown dtype {dtype!r} (known: {', '.join(TABLE_DTYPES)})")


def check_offset_length(x: np.ndarray, position_ids: np.ndarray) -> None:
    """shape_mismatch (decided by glue) when ``position_ids`` does not have one id per row of x: a framework
    that takes a start offset never sees their length."""
    rows = np.shape(x)[-2] if np.ndim(x) >= 2 else None
    if rows is not None and len(position_ids) != rows:
        with glue_checks():
            raise EmbeddingError("shape_mismatch", f"{len(position_ids)} position ids for {rows} rows")
