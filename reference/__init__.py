"""The NumPy reference implementation of the spec: a second, executable statement of it.

Each operation of ``spec/vocabulary.json`` is a plain function here, named as
the spec names it; it computes in float64 and rounds once to the case's dtype.

Rooms: the operations by area, ``lookup`` (with ``ids``), ``positions``, ``sinusoid``, ``layer``, ``options``,
``memory``, ``rope`` with ``rope_apply`` (the fused rotation, tables given), ``bag`` (reduced lookups, 2.1.0),
``quantized`` (lookups, bytes and bags of quantized tables, 2.3.0) with ``quantized_codec`` (their bytes) and
``quantize`` (the formats' quantizers), each
family's functions and tolerance rules in one table keyed by area (``families``); ``errors`` (the typed error taxonomy);
``arithmetic`` (float64, or exact for the goldens); ``tolerance`` (spec section 8 resolved per case) with
``bag_tolerance`` (its section 8.9, bags) and ``quantized_tolerance`` (8.10); the goldens
made from the catalogue ``cases`` by ``generate`` and written by ``emit``; ``serve`` (where the reference protocol
peer was, kept for ``python -m``)."""

from __future__ import annotations

from typing import Any

from embconf.reference.errors import ERROR_KINDS, EmbeddingError
from embconf.reference.families import OPERATIONS

__all__ = ["ERROR_KINDS", "EmbeddingError", "OPERATIONS", *OPERATIONS]


def __getattr__(name: str) -> Any:
    """Each operation by its spec name (``embconf.reference.embedding_forward``), from the families' table."""
    if name in OPERATIONS:
        return OPERATIONS[name]
    raise AttributeError(f"module 'embconf.reference' has no attribute {name!r}")
