"""The rope operations written once: ``rope_tables``, ``rope_forward`` and ``rope_backward`` over one framework's
rotation, for every rotary adapter (transformers, rotary-embedding-torch, keras_hub, MLX, and the next).

A framework's part subclasses :class:`RopeOperations`, declares what it rotates (``pairings``, ``scalings``,
``partial``, ``positions``: :meth:`RopeOperations.features`) and supplies two methods over a :class:`RopeCall`
(the case's parameters in one value):

- ``rotated(x, rotation)``: x rotated by the framework, as NumPy (no gradient taken);
- ``gradient(x, rotation, grad_output)``: the gradient of that rotation at x for ``grad_output``, as NumPy.

The base checks the pairing first (:func:`~embconf.adapters.rope.check_pairing`: an unknown one is
invalid_config decided by glue, a known one it does not rotate is declined) and reads ``rope_tables`` off the
rotation of a probe (:func:`~embconf.adapters.rope.probe`, the first pairing declared); a framework with a tables
API of its own overrides :meth:`RopeOperations.rope_tables`. The adapter lists the part in its ``parts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from embconf.adapters.rope import check_pairing, check_table_dtype, probe, rope_features, rope_type, tables_of
from embconf.model.arrays import Array, Scaling
from embconf.model.rope import SECTION, TABLE_OPERATIONS


@dataclass(frozen=True)
class RopeCall:
    """One rope call's parameters: the positions, the rotary width, the base, the scaling mapping, the pairing."""

    position_ids: np.ndarray
    rotary_dim: int
    base: float
    scaling: Mapping[str, Any]
    pairing: str

    @property
    def rope_type(self) -> str:
        """The scaling family the case names (``default`` when none)."""
        return rope_type(self.scaling)


class RopeOperations:
    """The three rope operations, named and called as the spec's, over :meth:`rotated` and :meth:`gradient`."""

    operations = frozenset(TABLE_OPERATIONS)
    pairings: tuple[str, ...] = ("half_split",)  # the pairs it rotates; the first is the one its tables are read in
    scalings: tuple[str, ...] = ()  # the scaling families with a feature of their own it implements
    partial = False  # rotary_dim < d: the rest of the features left as they are
    positions = False  # arbitrary position_ids, not only one contiguous run

    def features(self) -> frozenset[str]:
        """The rope features it declares."""
        return rope_features(self.pairings, self.scalings, partial=self.partial, positions=self.positions)

    def rope_tables(
        self, position_ids: Array, rotary_dim: int, base: float, scaling: Scaling, dtype: str
    ) -> tuple[Any, Any]:
        check_table_dtype(dtype)
        pairing = self.pairings[0]
        shape = np.shape(position_ids)  # (T,), or (B, T) per batch row: one probe row per position
        shape = shape[1:] if SECTION in scaling else shape  # M-RoPE: (3, T) or (3, B, T), one row per token
        rows = np.ascontiguousarray(np.broadcast_to(probe(shape[-1], rotary_dim, pairing, dtype), (*shape, rotary_dim)))
        return tables_of(self.rotated(rows, RopeCall(position_ids, rotary_dim, base, scaling, pairing)), pairing)

    def rope_forward(
        self, x: Array, position_ids: Array, rotary_dim: int, base: float, scaling: Scaling, pairing: str
    ) -> Any:
        check_pairing(pairing, self.pairings)
        return self.rotated(x, RopeCall(position_ids, rotary_dim, base, scaling, pairing))

    def rope_backward(
        self,
        x: Array,
        position_ids: Array,
        rotary_dim: int,
        base: float,
        scaling: Scaling,
        pairing: str,
        grad_output: Array,
    ) -> Any:
        check_pairing(pairing, self.pairings)
        return self.gradient(x, RopeCall(position_ids, rotary_dim, base, scaling, pairing), grad_output)

    # ----- the framework's part ---------------------------------------------------------------

    def rotated(self, x: np.ndarray, rotation: RopeCall) -> Any:
        """x rotated by the framework, as NumPy."""
        raise NotImplementedError

    def gradient(self, x: np.ndarray, rotation: RopeCall, grad_output: np.ndarray) -> Any:
        """The gradient of the rotation at x for ``grad_output``, as NumPy."""
        raise NotImplementedError
