"""What the PyTorch rotary-embedding libraries (``torchtune``, ``x_transformers``, ``megatron``) share: the spec's
three rope operations over one rotation of theirs.

An adapter supplies a :data:`Rotation`, ``(x, position_ids, rotary_dim, base, scaling, pairing) -> tensor``: the
library's own call on a torch tensor. :class:`TorchRope` turns it into the operations:

- ``rope_forward``: the rotation under ``torch.no_grad()``, as NumPy;
- ``rope_backward``: torch autograd through the same rotation
  (:func:`embconf.adapters.transformers_rope.autograd_backward`);
- ``rope_tables``: read off the rotation of a probe (:func:`embconf.adapters.rope.probe`) in the case's dtype,
  since none of these libraries returns its tables through a public call.

An unknown pairing is rejected (decided by glue) and a known one the library does not implement declined
(:func:`embconf.adapters.rope.check_pairing`); torch's refusals of tables or a grad_output of another shape are
shape_mismatch. Everything else is the library's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable

import numpy as np

from embconf.adapters.pytorch import to_numpy
from embconf.adapters.rope import check_pairing, probe, tables_of
from embconf.adapters.transformers_rope import autograd_backward, torch_shape_errors

Rotation = Callable[[Any, np.ndarray, int, float, Mapping[str, Any], str], Any]


def torch_tensor(torch: Any, array: np.ndarray) -> Any:
    """A NumPy array as a fresh torch tensor of its dtype (ml_dtypes' bfloat16 through its bit patterns)."""
    array = np.asarray(array, order="C")
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view(np.uint16).copy()).view(torch.bfloat16)
    return torch.from_numpy(array.copy())


class TorchRope:
    """The three rope operations on one library's rotation, for the pairings it implements."""

    def __init__(self, torch: Any, rotation: Rotation, pairings: tuple[str, ...]) -> None:
        self.torch, self.rotation, self.pairings = torch, rotation, pairings

    def handlers(self) -> dict[str, Callable[..., Any]]:
        return {"rope_tables": self.rope_tables, "rope_forward": self.rope_forward, "rope_backward": self.rope_backward}

    def rope_tables(
        self, position_ids: np.ndarray, rotary_dim: int, base: float, scaling: Mapping[str, Any], dtype: str
    ) -> tuple[Any, Any]:
        pairing = self.pairings[0]
        rows = torch_tensor(self.torch, probe(len(position_ids), rotary_dim, pairing, dtype))
        with self.torch.no_grad():
            rotated = self.rotation(rows, position_ids, rotary_dim, base, scaling, pairing)
        return tables_of(to_numpy(rotated), pairing)

    def rope_forward(
        self,
        x: np.ndarray,
        position_ids: np.ndarray,
        rotary_dim: int,
        base: float,
        scaling: Mapping[str, Any],
        pairing: str,
    ) -> Any:
        check_pairing(pairing, self.pairings)
        with self.torch.no_grad(), torch_shape_errors():
            return to_numpy(
                self.rotation(torch_tensor(self.torch, x), position_ids, rotary_dim, base, scaling, pairing)
            )

    def rope_backward(
        self,
        x: np.ndarray,
        position_ids: np.ndarray,
        rotary_dim: int,
        base: float,
        scaling: Mapping[str, Any],
        pairing: str,
        grad_output: np.ndarray,
    ) -> Any:
        check_pairing(pairing, self.pairings)

        def rotate(xt: Any) -> Any:
            return self.rotation(xt, position_ids, rotary_dim, base, scaling, pairing)

        return autograd_backward(rotate, torch_tensor(self.torch, x), lambda: torch_tensor(self.torch, grad_output))


def package_version(distribution: str) -> str:
    """The installed version of a distribution ('' when it has none)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return ""
