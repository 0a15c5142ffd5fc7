"""``tinygrad``: tinygrad's ``tinygrad.nn.Embedding`` on its CPU device, forward and backward, against the spec.

What is tinygrad's and what is the adapter's:

- The lookup is ``nn.Embedding`` with the fixture's table as its ``weight`` (a CPU ``Tensor`` of
  the table's dtype); the gradient is ``output.backward(grad_output)`` read from ``weight.grad``.
  No id, shape or dtype check is added.
- tinygrad refuses float ids (``TypeError: Expected integer dtype``), so ``float_ids`` is not
  declared. Its backward reports an upstream gradient of the wrong shape as a broadcasting
  ``ValueError``, which names no kind and is left unmapped.
- The CPU device compiles kernels with a C compiler (``clang``) found on PATH. The adapter looks for
  it when it starts, so a missing compiler is one line (exit 2), not an error per case (tinygrad's
  kernel cache would otherwise hide it until the first new kernel).
- tinygrad has no module for positions or the layer; none is composed here.
"""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np

from embconf.adapters import ImplementationError
from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.model.contract import Capabilities

EXTRA = "tinygrad"
DEVICE = "CPU"
NEEDS_CLANG = (
    "tinygrad's CPU device compiles its kernels with clang, which is not on PATH; install it (apt-get install clang)"
)


class TinygradAdapter(FrameworkAdapter):
    kind = "tinygrad"
    display_name = "tinygrad nn.Embedding"

    def __init__(self, target: str = "") -> None:
        tinygrad = import_framework("tinygrad", EXTRA)
        self.Tensor, self.Embedding = tinygrad.Tensor, import_framework("tinygrad.nn", EXTRA).Embedding
        _check_compiler()
        caps = Capabilities(
            frozenset({"embedding_forward", "embedding_backward"}),
            frozenset({"float64", "int32_ids"}),
            notes=(f"device {DEVICE}",),
        )
        super().__init__("tinygrad", tinygrad, caps)
        self._version = _version()

    def _embed(self, weight: np.ndarray) -> Any:
        rows, dim = weight.shape
        embedding = self.Embedding(rows, dim)
        embedding.weight = self.Tensor(_c(weight), device=DEVICE)
        return embedding

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        return to_numpy(self._embed(weight)(self.Tensor(_c(ids), device=DEVICE)))

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        embedding = self._embed(weight)
        output = embedding(self.Tensor(_c(ids), device=DEVICE))
        output.backward(self.Tensor(_c(grad_output), device=DEVICE))
        return to_numpy(embedding.weight.grad)


def _check_compiler() -> None:
    """tinygrad's CPU device runs ``clang`` to compile each new kernel (FileNotFoundError without it)."""
    if shutil.which("clang") is None:
        raise ImplementationError(NEEDS_CLANG)


def _c(array: np.ndarray) -> np.ndarray:
    """C-contiguous, keeping a 0-d array 0-d (np.ascontiguousarray would make it 1-d)."""
    return np.asarray(array, order="C")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tinygrad")
    except PackageNotFoundError:
        return ""
