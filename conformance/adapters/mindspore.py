"""``mindspore``: MindSpore's ``nn.Embedding`` on its CPU device (PyNative mode), with its own autodiff.

MindSpore 2.10 needs NumPy < 2, so it runs in an environment of its own (from a checkout
``pip install -e '.[mindspore]'``), not beside the other frameworks.
What is MindSpore's and what is the adapter's:

- The lookup is ``nn.Embedding(V, D, embedding_table=table, padding_idx=...)``; the gradient is
  ``ops.GradOperation(get_by_list=True, sens_param=True)`` of the module in its table, with the
  upstream gradient as ``sens``. No id, shape or dtype check is added. Measured on 2.10.0: a
  negative id wraps once in the forward (-1 is the last row) while the backward drops its gradient;
  an int64 id is narrowed to 32 bits (2^32 reads row 0); empty ids fail in the backward.
- MindSpore's own refusals, mapped where the meaning is exactly the kind: ``For 'Gather', the
  'input_indices' should be in the range [0, V)`` -> ``index_out_of_range``; ``For 'Embedding', the
  'padding_idx' must be in range of [0, V)`` -> ``invalid_config`` (it refuses every negative
  padding_idx, which the spec counts from the end); the autodiff's ``The shape should be ...``
  for a ``sens`` of the wrong shape -> ``shape_mismatch``. Everything else stays an untyped error.
- ``padding_idx`` zeroes the padding row of the table when the module is built; its gradient row is
  not zeroed (both judged as they are). MindSpore's embedding has no ``max_norm``,
  ``scale_grad_by_freq`` or sparse gradient, and its CPU ``Gather`` has no bfloat16 kernel: none is
  declared. It rejects float ids (``Unsupported data type``): ``float_ids`` is not declared.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.model.contract import Capabilities
from embconf.reference.errors import EmbeddingError

EXTRA = "mindspore"
NEEDS = " (in an environment of its own: MindSpore needs NumPy < 2)"  # the extra's line names numpy<2 itself
OUT_OF_RANGE = re.compile(r"For 'Gather', the 'input_indices' should be in the range \[0, \d+\)")
PADDING_RANGE = re.compile(r"For 'Embedding', the 'padding_idx' must be in range of")
SENS_SHAPE = re.compile(r"^The shape should be .*sens gradient", re.S)


class MindSporeAdapter(FrameworkAdapter):
    kind = "mindspore"
    display_name = "MindSpore nn.Embedding"

    def __init__(self, target: str = "") -> None:
        self.ms = import_framework("mindspore", EXTRA, NEEDS)
        self.ms.set_device("CPU")
        caps = Capabilities(
            frozenset({"embedding_forward", "embedding_backward"}),
            frozenset({"float64", "float16", "int32_ids", "padding_idx"}),
            notes=("CPU, PyNative mode",),
        )
        super().__init__("mindspore", self.ms, caps)

    def _embedding(self, weight: np.ndarray, **options: Any) -> Any:
        rows, dim = weight.shape
        with mindspore_errors():
            return self.ms.nn.Embedding(rows, dim, embedding_table=self.ms.Tensor(weight), **options)

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray, **options: Any) -> Any:
        """``options``: padding_idx, MindSpore's own argument."""
        embedding = self._embedding(weight, **options)
        with mindspore_errors():
            return embedding(self.ms.Tensor(ids)).asnumpy()

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray, **options: Any) -> Any:
        embedding = self._embedding(weight, **options)
        grad = self.ms.ops.GradOperation(get_by_list=True, sens_param=True)(
            embedding, self.ms.ParameterTuple(embedding.trainable_params())
        )
        with mindspore_errors():
            (grad_table,) = grad(self.ms.Tensor(ids), self.ms.Tensor(grad_output))
            return grad_table.asnumpy()


@contextmanager
def mindspore_errors() -> Iterator[None]:
    """MindSpore's own checks as the spec's kinds (ids, padding_idx, the upstream gradient's shape)."""
    try:
        yield
    except RuntimeError as exc:
        if OUT_OF_RANGE.search(str(exc)):
            raise EmbeddingError("index_out_of_range", f"RuntimeError: {str(exc).splitlines()[0]}") from exc
        raise
    except ValueError as exc:
        if PADDING_RANGE.search(str(exc)):
            raise EmbeddingError("invalid_config", f"ValueError: {exc}") from exc
        if SENS_SHAPE.search(str(exc)):
            raise EmbeddingError("shape_mismatch", f"ValueError: {str(exc).splitlines()[0][:200]}") from exc
        raise
