"""Mistakes of rotary modules that keep state between calls on one instance (spec section 15, EMB-STA-2, 3).

Each is a module whose forward and backward share what it keeps: the length its dynamic NTK frequencies were
grown for, or cos/sin cached by length. A fresh module is built for every instance (``Mutant.fresh``) and for
every call made on no instance, so each passes every case of one call, as the code it mimics does when an
adapter builds it per case: only a case of calls on one instance shows it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from embconf.mutants.base import Mutant, Operation, register
from embconf.mutants.rope import BWD, FWD, Slip, rotate, tables
from embconf.reference import OPERATIONS

Tables = Callable[[Any, int, float, Any, str], tuple[np.ndarray, np.ndarray]]


class DynamicKept:
    """transformers' dynamic NTK module: it grows its frequencies for a call longer than any before and keeps them
    for shorter calls; with ``reset_below_original`` it goes back to the original ones only for a call shorter
    than the original length (transformers 5.x ``dynamic_rope_update``), else never (before #25306's fix)."""

    def __init__(self, reset_below_original: bool) -> None:
        self.reset_below_original = reset_below_original
        self.cached = 0  # the length its frequencies are grown for; 0 until the first dynamic call

    def tables(self, position_ids: Any, rotary_dim: int, base: float, scaling: Any, dtype: str) -> Any:
        original = int(scaling.get("original_max_position_embeddings", 1)) if _dynamic(scaling) else 0
        length = int(np.max(position_ids, initial=0)) + 1
        if not original:
            return tables(Slip(), position_ids, rotary_dim, base, scaling, dtype)
        cached = max(self.cached, original)
        if length > cached:
            cached = length
        elif self.reset_below_original and length < original:
            cached = original
        self.cached = cached
        return tables(replace(Slip(), largest=cached - 1), position_ids, rotary_dim, base, scaling, dtype)


class CachedByLength:
    """rotary-embedding-torch before #11's fix: cos/sin cached under the sequence length (and configuration), so a
    later call of the same length at another offset gets the first call's positions."""

    def __init__(self) -> None:
        self.first: dict[str, np.ndarray] = {}  # key -> the positions of the first call with it

    def tables(self, position_ids: Any, rotary_dim: int, base: float, scaling: Any, dtype: str) -> Any:
        positions = np.asarray(position_ids, dtype=np.int64)
        key = json.dumps([positions.size, rotary_dim, float(base), dict(scaling or {}), dtype], sort_keys=True)
        cached = self.first.setdefault(key, positions)
        return tables(Slip(), cached, rotary_dim, base, scaling, dtype)


def _dynamic(scaling: Any) -> bool:
    return isinstance(scaling, Mapping) and scaling.get("rope_type") == "dynamic"


def module(held: Tables) -> dict[str, Operation]:
    """rope_forward and rope_backward of one module whose tables come from ``held`` (its state)."""

    def rope_forward(x: np.ndarray, position_ids: Any, rotary_dim: int, base: float, scaling: Any, pairing: str) -> Any:
        OPERATIONS[FWD](x, position_ids, rotary_dim, base, scaling, pairing)  # the spec's checks, and errors
        cos, sin = held(position_ids, rotary_dim, base, scaling, np.dtype(x.dtype).name)
        return rotate(x, cos, sin, rotary_dim, pairing)

    def rope_backward(
        x: np.ndarray, position_ids: Any, rotary_dim: int, base: float, scaling: Any, pairing: str, grad_output: Any
    ) -> Any:
        OPERATIONS[BWD](x, position_ids, rotary_dim, base, scaling, pairing, grad_output)
        cos, sin = held(position_ids, rotary_dim, base, scaling, np.dtype(x.dtype).name)
        return rotate(grad_output, cos, -sin, rotary_dim, pairing)

    return {FWD: rope_forward, BWD: rope_backward}


def stateful(mutant_id: str, description: str, hint: str, build: Callable[[], Tables], source: str) -> None:
    """Register a mutant whose module state is ``build()``, new for each instance."""

    def fresh() -> dict[str, Operation]:
        return module(build())

    register(Mutant(mutant_id, description, hint, fresh(), source=source, fresh=fresh))


FIX_DYNAMIC = (
    "compute each call's frequencies from its own max(position_ids) + 1 (EMB-ROPE-8): grow them for a long call, "
    "and compute them again, not keep them, for every later call"
)
stateful(
    "rope.state.dynamic_never_shrinks",
    "dynamic NTK: frequencies grown for a long call are kept for every later, shorter call",
    FIX_DYNAMIC,
    lambda: DynamicKept(reset_below_original=False).tables,
    "transformers #25306",
)
stateful(
    "rope.state.dynamic_reset_below_original",
    "dynamic NTK: grown frequencies kept for a later shorter call unless it is shorter than the original length",
    FIX_DYNAMIC,
    lambda: DynamicKept(reset_below_original=True).tables,
    "transformers #46624 (dynamic_rope_update in transformers 5.x)",
)
stateful(
    "rope.state.cache_by_length",
    "cos/sin cached by sequence length: a later call of the same length at another offset gets the first's positions",
    "key a cache of cos/sin by the positions (or compute the tables for the largest position and index them by "
    "position_ids), never by the length alone (EMB-STA-3)",
    lambda: CachedByLength().tables,
    "rotary-embedding-torch #11",
)
