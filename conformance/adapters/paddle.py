"""``paddle`` / ``paddle:functional``: PaddlePaddle's ``nn.Embedding`` or ``F.embedding`` (CPU), with autograd.

What is PaddlePaddle's and what is the adapter's:

- ``paddle`` builds ``paddle.nn.Embedding(V, D, padding_idx=..., max_norm=..., norm_type=...,
  scale_grad_by_freq=..., sparse=..., _weight=table)``; ``paddle:functional`` calls
  ``paddle.nn.functional.embedding(ids, table, ...)`` with the same options on a trainable tensor.
  The module zeroes the padding row of its stored weight when it is built; the function does not.
  Gradients are ``output.backward(grad_output)`` read from the table's ``.grad``.
- No id check is added. PaddlePaddle's own range checks (``ValueError: (InvalidArgument) ...
  expected >= 0 and < V`` of the lookup and its backward, and of the ``index_select`` its max_norm
  path runs first) are mapped to ``index_out_of_range``; its ``padding_idx must be within
  [-V, V)`` to ``invalid_config``; autograd's ``Tensor shape not match`` for an upstream gradient of
  the wrong shape to ``shape_mismatch``. Everything else stays an untyped error. Measured on 3.3.1:
  id -1 is not range-checked on CPU (it reads memory before the table), a padding_idx below -V is
  accepted and ignored, and the forward returns a zero row for padding_idx (documented).
- ``sparse=True`` gives an uncoalesced SelectedRows gradient; PaddlePaddle's own
  ``merge_selected_rows`` coalesces it into sorted unique rows (EMB-BWD-5's form). For empty ids it
  has no rows and no value tensor to read: the adapter returns its empty rows as a (0, D) array.
- ``max_norm`` renormalises the referenced rows of the table in place; that table is ``weight_after``.
  PaddlePaddle treats a ``max_norm`` of 0 as "off" and accepts a negative one; the adapter's glue
  rejects one that is not > 0 (EMB-NRM-4), marked ``decided_by: glue`` as for PyTorch.
- Declared dtypes: float64, float16 and bfloat16 tables (bfloat16 crosses as its bit patterns), int32
  ids. Float ids raise PaddlePaddle's ``NotImplementedError``, so ``float_ids`` is not declared.
- PaddlePaddle has no learned-position or sinusoid module for this; none is composed here.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from embconf.adapters.convert import from_numpy, to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, glue_checks, import_framework
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.reference.errors import EmbeddingError
from embconf.reference.options import check_renorm_args

EXTRA = "paddle"
# PaddlePaddle documents the zero padding row (EMB-PAD-1 asks for the row as stored).
PADDING_ZERO_ROW = DocumentedChoice(
    "https://www.paddlepaddle.org.cn/documentation/docs/en/api/paddle/nn/Embedding_en.html",
    "PaddlePaddle's padding_idx: an id equal to it outputs all-zero padding data, whatever the stored row holds.",
    cases=("options.padding.forward_row_as_stored", "options.padding.forward_negative"),
)
TARGETS = {"": "nn.Embedding", "functional": "F.embedding"}
# its range checks of ids: the lookup's (forward and backward) and the index_select its max_norm path runs first
OUT_OF_RANGE = re.compile(
    r"of OP\((?:paddle\.nn\.functional\.)?(?:embedding|index_select)\) expected >= -?\d+ and < \d+"
)
PADDING_RANGE = "padding_idx must be within"
GRAD_SHAPE = "Tensor shape not match"
OPERATIONS = frozenset(
    {"embedding_forward", "embedding_backward", "embedding_backward_sparse", "embedding_forward_max_norm"}
)
FEATURES = frozenset(
    {"float64", "int32_ids", "float16", "bfloat16", "padding_idx", "max_norm", "scale_grad_by_freq", "row_sparse_grad"}
)


class PaddleAdapter(FrameworkAdapter):
    kind = "paddle"
    targets = tuple(TARGETS)

    def __init__(self, target: str = "") -> None:
        self.paddle = import_framework("paddle", EXTRA)
        self.paddle.set_device("cpu")
        self.functional = target == "functional"
        self.display_name = f"PaddlePaddle {TARGETS[target]}"
        caps = Capabilities(
            OPERATIONS, FEATURES, notes=(f"{TARGETS[target]} on the CPU",), documented=(PADDING_ZERO_ROW,)
        )
        super().__init__(f"paddle:{target}" if target else "paddle", self.paddle, caps)

    # ----- conversions -----------------------------------------------------------------

    def _tensor(self, array: np.ndarray, trainable: bool = False) -> Any:
        tensor = from_numpy(array, self.paddle.to_tensor, lambda t: t.view(self.paddle.bfloat16))
        tensor.stop_gradient = not trainable
        return tensor

    def _lookup(self, weight: np.ndarray, ids: np.ndarray, **options: Any) -> tuple[Any, Any]:
        """(the table tensor the lookup reads, its output): the module's weight or the function's argument."""
        table = self._tensor(weight, trainable=True)
        with paddle_errors():
            if self.functional:
                return table, self.paddle.nn.functional.embedding(self._tensor(ids), table, **options)
            rows, dim = weight.shape
            module = self.paddle.nn.Embedding(rows, dim, _weight=table, **options)
            return module.weight, module(self._tensor(ids))

    def _backward(self, output: Any, grad_output: np.ndarray) -> None:
        with paddle_errors():
            output.backward(self._tensor(grad_output))

    # ----- operations (named and called as the spec's) -----------------------------------

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray, **options: Any) -> Any:
        return to_numpy(self._lookup(weight, ids, **options)[1])

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray, **options: Any) -> Any:
        """``options``: padding_idx and scale_grad_by_freq, PaddlePaddle's own arguments."""
        table, output = self._lookup(weight, ids, **options)
        self._backward(output, grad_output)
        return to_numpy(table.grad)

    def embedding_backward_sparse(
        self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray
    ) -> tuple[Any, Any]:
        table, output = self._lookup(weight, ids, sparse=True)
        self._backward(output, grad_output)
        merged = self.paddle._C_ops.merge_selected_rows(table.grad)  # PaddlePaddle's own coalescing
        rows = np.asarray(merged.rows(), dtype=np.int64)
        if not rows.size:  # no rows: PaddlePaddle allocates no value tensor to read (SystemError)
            return rows, np.zeros((0, weight.shape[1]), weight.dtype)
        return rows, to_numpy(merged._get_tensor_from_selected_rows())

    def embedding_forward_max_norm(
        self, weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float
    ) -> tuple[Any, Any]:
        """The table is renormalised in place by the lookup: after the call it is weight_after."""
        with glue_checks():  # PaddlePaddle takes 0 as "off" and any negative max_norm
            check_renorm_args(max_norm, norm_type)
        table, output = self._lookup(weight.copy(), ids, max_norm=max_norm, norm_type=norm_type)  # EMB-GEN-1
        return to_numpy(output), to_numpy(table)


@contextmanager
def paddle_errors() -> Iterator[None]:
    """PaddlePaddle's own checks as the spec's kinds (ids, padding_idx, the upstream gradient's shape)."""
    try:
        yield
    except ValueError as exc:
        if OUT_OF_RANGE.search(str(exc)):
            raise EmbeddingError("index_out_of_range", f"ValueError: {first_line(exc)}") from exc
        if str(exc).startswith(PADDING_RANGE):
            raise EmbeddingError("invalid_config", f"ValueError: {exc}") from exc
        raise
    except AssertionError as exc:
        if str(exc).startswith(GRAD_SHAPE):
            raise EmbeddingError("shape_mismatch", f"AssertionError: {exc}") from exc
        raise


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else ""
