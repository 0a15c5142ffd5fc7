"""``torch``: PyTorch's ``nn.Embedding`` (``F.embedding``) with autograd, against the spec.

What is PyTorch's and what is glue:

- Token lookup, its dense and row-sparse (``sparse=True``) gradients, float64
  tables and int32 ids are PyTorch's own behaviour, unaided. Its only id check
  is the ``IndexError: index out of range`` it raises for ids outside
  [0, V), mapped here to ``index_out_of_range``, and autograd's
  ``RuntimeError: Mismatch in shape`` for an upstream gradient of the wrong
  shape, mapped to ``shape_mismatch``. Float ids are refused by PyTorch
  altogether, so ``float_ids`` is not declared.
- Learned positions and the embedding layer are not PyTorch modules. The
  adapter composes them from PyTorch parts the way a user's own module would
  (a table parameter sliced ``table[s:s+T]`` and added to ``x``; an
  ``nn.Embedding`` for tokens, times sqrt(D) when scaling, plus a learned
  ``nn.Embedding`` table). That glue carries the checks such a module needs
  and PyTorch cannot make for it: the rank and width of ``x`` and of the tokens,
  ``start_pos`` (an integer >= 0) and the fit ``start_pos + T <= max_seq_len``,
  and the constructor's ``pos_encoding``. They raise the spec's typed errors, so
  those cases test this glue, not PyTorch, and each such verdict is marked
  ``decided_by: glue`` in the report (:func:`~embconf.adapters.frameworks.glue_checks`);
  everything numeric is PyTorch's.
- PyTorch has no sinusoidal table: ``sinusoidal_table`` is not declared, and
  layer and parameter-count cases configured ``pos_encoding='sinusoidal'`` are
  skipped (not applicable), never failed.
- Parameter counts build the layer on ``torch.device('meta')``, so model-size
  tables (``large_tables``) are counted without allocating them. A table PyTorch
  cannot describe even there (a size, or its size in bytes, past int64) is declined
  with PyTorch's own refusal: the count is not PyTorch's to give.
- Byte arithmetic (table_bytes, gradient_bytes, adam_state_bytes) is no PyTorch API.
- Spec 1.1 options go to ``nn.Embedding``'s own arguments: ``padding_idx`` (PyTorch's
  ``AssertionError`` for one outside [-V, V) is mapped to ``invalid_config``),
  ``scale_grad_by_freq``, and ``max_norm``/``norm_type``, whose in-place renormalisation
  of the module's weight (a copy of the input table) is reported as ``weight_after``.
  PyTorch accepts any ``max_norm``; the glue rejects one that is not > 0 (EMB-NRM-4).
- float16 and bfloat16 (spec section 13) in two accumulation modes. ``--impl torch``
  (native): the tensors are in the half dtype, and PyTorch's CPU backward accumulates
  repeated ids in that dtype (``index_add_``), which EMB-HLF-3 admits only for few
  repeats. ``--impl torch:float32-master``: half inputs become float32 tensors (exact)
  and every result is rounded once to the half dtype, as mixed-precision training with
  float32 master weights does; PyTorch computes, the adapter converts.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterator, Optional

import numpy as np

from embconf.adapters import ImplementationError
from embconf.adapters.common import InProcessAdapter, layer_kwargs
from embconf.adapters.convert import to_numpy, torch_tensor
from embconf.adapters.frameworks import glue_checks, refusals
from embconf.adapters.loading import describe_exception
from embconf.model.arrays import Array, Config, Table
from embconf.model.contract import Capabilities, Reply
from embconf.model.dtypes import HALF_DTYPES
from embconf.model.errors import Decline
from embconf.reference.errors import EmbeddingError
from embconf.reference.options import check_renorm_args  # EMB-NRM-4: PyTorch takes any max_norm
from embconf.reference.positions import (
    check_start_pos,
)  # the spec's start_pos rules (EMB-POS-6/7), as a user's module would check them

INSTALL_HINT = (
    "torch is not installed; pip install torch --index-url https://download.pytorch.org/whl/cpu (its CPU build)"
)
NO_SINUSOID = "PyTorch provides no sinusoidal table"
NOT_A_FLAG = "argument 'scale_grad_by_freq' (position 4) must be bool"  # F.embedding's TypeError: invalid_config
OPERATIONS = (
    "embedding_forward",
    "embedding_backward",
    "embedding_backward_sparse",
    "embedding_forward_max_norm",
    "learned_positions_forward",
    "learned_positions_backward",
    "embedding_layer_forward",
    "embedding_layer_backward",
    "parameter_count",
)
LAYER_OPERATIONS = frozenset({"embedding_layer_forward", "embedding_layer_backward", "parameter_count"})
FEATURES = frozenset(
    {
        "float64",
        "int32_ids",
        "row_sparse_grad",
        "large_tables",
        "padding_idx",
        "max_norm",
        "scale_grad_by_freq",
        "float16",
        "bfloat16",
    }
)
MODES = ("", "float32-master")  # native half precision, or float32 master copies rounded once (see above)
POS_ENCODINGS = ("learned", "sinusoidal", None)
INT64_MAX = 2**63 - 1  # a tensor's sizes and its storage size in bytes are int64 in PyTorch, on every device


def import_torch() -> ModuleType:
    """``torch``, imported on first use; ImplementationError with the install hint when it is missing."""
    try:
        import torch
    except ModuleNotFoundError as exc:
        if exc.name == "torch":
            raise ImplementationError(INSTALL_HINT) from None
        raise ImplementationError(f"torch does not import: {describe_exception(exc)}") from None
    except Exception as exc:  # a broken installation
        raise ImplementationError(f"torch does not import: {describe_exception(exc)}") from None
    return torch


class TorchAdapter(InProcessAdapter):
    kind = "torch"
    targets = MODES

    def __init__(self, target: str = "") -> None:
        self.master = target == "float32-master"
        self.torch = import_torch()
        caps = Capabilities(
            frozenset(OPERATIONS),
            FEATURES,
            notes=("positions and the layer are thin glue over nn.Embedding; the glue raises the spec's errors",),
        )
        super().__init__("torch", caps, str(self.torch.__version__))

    def describe(self) -> dict[str, Any]:
        return {
            "name": "PyTorch" + (" (float32 master)" if self.master else ""),
            "version": str(self.torch.__version__),
            "language": "python",
        }

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        """In float32-master mode, half inputs run as float32 and array results are rounded once back."""
        half = {v.dtype for v in inputs.values() if isinstance(v, np.ndarray) and v.dtype.name in HALF_DTYPES}
        if not (self.master and half):
            return super().call(operation, inputs)
        widened = {
            k: (v.astype(np.float32) if isinstance(v, np.ndarray) and v.dtype in half else v) for k, v in inputs.items()
        }
        reply = super().call(operation, widened)
        dtype = half.pop()
        reply.outputs = {
            k: (v.astype(dtype) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v)
            for k, v in reply.outputs.items()
        }
        return reply

    def skip_reason(self, operation: str, inputs: Mapping[str, Any]) -> Optional[str]:
        if operation in LAYER_OPERATIONS and inputs["config"].get("pos_encoding") == "sinusoidal":
            return NO_SINUSOID
        return None

    # ----- conversions -----------------------------------------------------------------

    def _tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        return torch_tensor(self.torch, array).requires_grad_(requires_grad)

    def _embedding(self, weight: np.ndarray, sparse: bool = False, **options: Any) -> Any:
        """nn.Embedding holding the fixture's table as its (trainable) weight; ``options`` are its own arguments."""
        rows, dim = weight.shape
        with padding_errors():
            return self.torch.nn.Embedding(rows, dim, sparse=sparse, _weight=self._tensor(weight), **options)

    def _lookup(self, weight: np.ndarray, ids: np.ndarray, sparse: bool = False, **options: Any) -> tuple[Any, Any]:
        embedding = self._embedding(weight, sparse, **options)
        with pytorch_errors(), refusals(TypeError, (NOT_A_FLAG, "invalid_config")):  # a scale_grad_by_freq of 1
            return embedding, embedding(self._tensor(ids))

    def _backward(self, output: Any, grad_output: np.ndarray) -> None:
        with pytorch_errors():
            output.backward(self._tensor(grad_output))

    # ----- operations (named and called as the spec's) -----------------------------------

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray, **options: Any) -> Any:
        return to_numpy(self._lookup(weight, ids, **options)[1])

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray, **options: Any) -> Any:
        """``options``: padding_idx and scale_grad_by_freq, passed to nn.Embedding as they are."""
        embedding, output = self._lookup(weight, ids, **options)
        self._backward(output, grad_output)
        return to_numpy(embedding.weight.grad)

    def embedding_forward_max_norm(
        self, weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float
    ) -> tuple[Any, Any]:
        """nn.Embedding(max_norm=..., norm_type=...) renormalises its own weight in place: that weight is weight_after."""
        with glue_checks():  # PyTorch takes any max_norm: rejecting one that is not > 0 is the glue's verdict
            check_renorm_args(max_norm, norm_type)
        embedding, output = self._lookup(
            weight.copy(), ids, max_norm=max_norm, norm_type=norm_type
        )  # a copy: EMB-GEN-1
        return to_numpy(output), to_numpy(embedding.weight)

    def embedding_backward_sparse(
        self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray
    ) -> tuple[Any, Any]:
        """PyTorch's sparse COO gradient, coalesced: sorted unique ids and their summed rows."""
        embedding, output = self._lookup(weight, ids, sparse=True)
        self._backward(output, grad_output)
        grad = embedding.weight.grad.coalesce()
        return to_numpy(grad.indices()[0]), to_numpy(grad.values())

    def learned_positions_forward(self, table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> Any:
        return to_numpy(self._positions(table, x, start_pos)[2])

    def learned_positions_backward(
        self, table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
    ) -> tuple[Any, Any]:
        table_t, x_t, output = self._positions(table, x, start_pos)
        self._backward(output, grad_output)
        return to_numpy(x_t.grad), to_numpy(table_t.grad)

    def _positions(self, table: np.ndarray, x: np.ndarray, start_pos: Any) -> tuple[Any, Any, Any]:
        table_t = self.torch.nn.Parameter(self._tensor(table))
        x_t = self._tensor(x, requires_grad=True)
        return table_t, x_t, add_positions(x_t, table_t, start_pos)

    def embedding_layer_forward(
        self, config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
    ) -> Any:
        layer = self._layer(config, token_weight, position_table)
        return to_numpy(layer.forward(self._tensor(tokens), start_pos))

    def embedding_layer_backward(
        self,
        config: Config,
        token_weight: Array,
        position_table: Table,
        tokens: Array,
        start_pos: Any,
        grad_output: Array,
    ) -> tuple[Any, Any]:
        layer = self._layer(config, token_weight, position_table)
        self._backward(layer.forward(self._tensor(tokens), start_pos), grad_output)
        positions = layer.positions.weight.grad if layer.positions is not None else None
        return to_numpy(layer.tokens.weight.grad), to_numpy(positions)

    def _layer(self, config: Config, token_weight: Array, position_table: Table) -> "GlueLayer":
        tables = {"token_weight": self._tensor(token_weight)}
        if position_table is not None:
            tables["position_table"] = self._tensor(position_table)
        return build_layer(self.torch, **layer_kwargs(config), **tables)

    def parameter_count(self, config: Mapping[str, Any]) -> dict[str, int]:
        """numel of the layer's parameters, built on the meta device (nothing is allocated); a table PyTorch
        refuses to describe there because it is past int64 (:func:`past_int64`) is declined with its refusal."""
        kwargs = layer_kwargs(config)
        try:
            layer = build_layer(self.torch, **kwargs, device=self.torch.device("meta"))
        except (TypeError, RuntimeError) as exc:
            table = past_int64(kwargs, self.torch.get_default_dtype().itemsize)
            if table is None:
                raise
            raise Decline(
                f"torch cannot hold a {table[0]} x {table[1]} table, not even on the meta device: a tensor's "
                f"sizes and its size in bytes are int64 (it raised {type(exc).__name__})"
            ) from exc
        return {"trainable": sum(int(p.numel()) for p in layer.parameters()), "non_trainable": 0}


# ----- the glue: what a user's own module around nn.Embedding does ------------------------


@dataclass
class GlueLayer:
    """Token nn.Embedding (times sqrt(D) when scaling) plus an optional learned nn.Embedding table."""

    tokens: Any
    positions: Optional[Any]
    scale: float
    max_seq_len: int

    def parameters(self) -> list[Any]:
        modules = [self.tokens] + ([self.positions] if self.positions is not None else [])
        return [p for module in modules for p in module.parameters()]

    def forward(self, tokens: Any, start_pos: Any = 0) -> Any:
        """tokens (T,) or (B, T) -> (T, D) or (B, T, D)."""
        with glue_checks():
            if tokens.dim() not in (1, 2):
                raise EmbeddingError("shape_mismatch", f"tokens must be 1-D or 2-D, got shape {tuple(tokens.shape)}")
            seq_len = tokens.shape[-1]
            limit = self.max_seq_len if self.positions is not None else math.inf
            start = check_start_pos(start_pos, seq_len, limit)
        with pytorch_errors():
            out = self.tokens(tokens)
        if self.scale != 1.0:
            out = out * self.scale
        if self.positions is not None:
            out = out + self.positions.weight[start : start + seq_len]
        return out


def build_layer(
    torch: ModuleType,
    vocab_size: int,
    embed_dim: int,
    max_seq_len: int = 512,
    pos_encoding: Optional[str] = "learned",
    scale_embeddings: bool = False,
    padding_idx: Optional[int] = None,
    *,
    token_weight: Any = None,
    position_table: Any = None,
    device: Any = None,
) -> GlueLayer:
    """The layer, with the TinyTorch constructor's signature and defaults; tables given are used as weights."""
    if pos_encoding not in POS_ENCODINGS:
        with glue_checks():
            raise EmbeddingError(
                "invalid_config", f"pos_encoding must be 'learned', 'sinusoidal' or None, got {pos_encoding!r}"
            )
    if pos_encoding == "sinusoidal":
        raise NotImplementedError(NO_SINUSOID)
    nn = torch.nn
    with padding_errors():
        tokens = nn.Embedding(vocab_size, embed_dim, padding_idx=padding_idx, _weight=token_weight, device=device)
    positions = (
        nn.Embedding(max_seq_len, embed_dim, _weight=position_table, device=device)
        if pos_encoding == "learned"
        else None
    )
    return GlueLayer(tokens, positions, math.sqrt(embed_dim) if scale_embeddings else 1.0, max_seq_len)


def past_int64(kwargs: Mapping[str, Any], itemsize: int) -> Optional[tuple[int, int]]:
    """The first table (rows, width) of the layer these constructor keywords build (its defaults applied) whose
    sizes or size in bytes at ``itemsize`` bytes an element are past int64; None when every table fits."""
    given = inspect.signature(build_layer).bind(None, **kwargs)
    given.apply_defaults()
    layer = given.arguments
    tables = [(layer["vocab_size"], layer["embed_dim"])]
    tables += [(layer["max_seq_len"], layer["embed_dim"])] if layer["pos_encoding"] == "learned" else []
    return next((t for t in tables if max(t) > INT64_MAX or t[0] * t[1] * itemsize > INT64_MAX), None)


def add_positions(x: Any, table: Any, start_pos: Any) -> Any:
    """x (B, T, D) + table[start_pos:start_pos+T], after the checks a careful user module makes."""
    with glue_checks():
        if x.dim() != 3:
            raise EmbeddingError("shape_mismatch", f"x must be (batch, seq, embed_dim), got shape {tuple(x.shape)}")
        if x.shape[2] != table.shape[1]:
            raise EmbeddingError("shape_mismatch", f"x has embed_dim {x.shape[2]}, the table has {table.shape[1]}")
        start = check_start_pos(start_pos, x.shape[1], table.shape[0])
    return x + table[start : start + x.shape[1]]


@contextmanager
def pytorch_errors() -> Iterator[None]:
    """PyTorch's own checks as the spec's kinds: ids out of range, an upstream gradient of the wrong shape (a flag
    that is not a bool is read where the lookup runs: ``NOT_A_FLAG``)."""
    try:
        yield
    except IndexError as exc:
        if "out of range" in str(exc):
            raise EmbeddingError("index_out_of_range", f"IndexError: {exc}") from exc
        raise
    except RuntimeError as exc:
        if str(exc).startswith("Mismatch in shape"):  # autograd: grad_output does not match the output
            raise EmbeddingError("shape_mismatch", f"RuntimeError: {exc}") from exc
        raise


def padding_errors() -> AbstractContextManager[None]:
    """nn.Embedding's own check of padding_idx (an AssertionError) as the spec's invalid_config (EMB-PAD-4)."""
    return refusals(AssertionError, ("Padding_idx must be within", "invalid_config"))
