"""``tinytorch:MODULE_OR_FILE``: a TinyTorch module 11 (Embeddings) submission, on its own Tensor.

The adapter drives the student's public API (``Embedding``, ``PositionalEncoding``,
``_compute_sinusoidal_table`` / ``create_sinusoidal_embeddings``, ``EmbeddingLayer``) the way the module's
own tests do: it builds fresh objects for every case, replaces their tables with the fixture's (as the
student's ``Tensor`` with ``requires_grad=True``; only ``embedding_layer_own_backward``, EMB-LAY-12, keeps the
tables the student's constructor built, to see that they receive gradients, and reuses one layer for the calls
on one instance, EMB-STA-4), runs ``forward``, calls ``backward`` on the output with the fixture's upstream
gradient (a float32 ndarray, as TinyTorch's autograd takes it) and reads ``.grad``. Outputs are the student's
arrays as produced (a float64 result is judged wrong, not cast); a missing ``.grad`` is None, judged wrong.

TinyTorch rejects bad input with ``ValueError`` whatever the reason, so error kinds are coarse: a ValueError
where the spec wants an error passes, any other exception is an ``error`` outcome. Storage is float32 only (no
``float64`` feature); token ids become float32 Tensors, so float and int32 ids are supported.
Byte arithmetic (table_bytes, gradient_bytes, adam_state_bytes) is not part of the module's API and is not
applicable. The older published API, whose ``PositionalEncoding.forward(x)`` and ``EmbeddingLayer.forward(tokens)``
take no ``start_pos``, is driven too: its start_pos = 0 cases run, the others are not applicable, saying so.

RoPE is an optional extension (spec 1.3.0, EMB-LAY-10): the adapter claims ``rope-layer`` only when
``EmbeddingLayer(..., pos_encoding='rope')`` builds (a ValueError, the module's answer to an unknown encoding,
means no claim), with the pairing its output on a probe input matches (half_split unless it is interleaved).
The config's ``rope_pairing`` is not handed to the student: its layer has one pairing, and cases of the other
are not applicable. Bags are another (spec 2.1.0, section 16): an ``EmbeddingBag`` class, :mod:`.tinytorch_bags`;
quantized tables a third (spec 2.3.0, section 17): a ``QuantizedEmbedding`` class, :mod:`.tinytorch_quantized`.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any, Optional

import numpy as np

from embconf.adapters import ImplementationError
from embconf.adapters import tinytorch_layouts as layouts
from embconf.adapters.common import InProcessAdapter, layer_kwargs, module_version
from embconf.adapters.convert import as_numpy
from embconf.adapters.guard import describe_change
from embconf.adapters.instances import CallsOnInstances, Instances
from embconf.adapters.loading import load_module
from embconf.adapters.tinytorch_bags import REQUIRES as BAG_REQUIRES
from embconf.adapters.tinytorch_bags import TinyTorchBags, bag_claim
from embconf.adapters.tinytorch_quantized import REQUIRES as QUANTIZED_REQUIRES
from embconf.adapters.tinytorch_quantized import TinyTorchQuantized, quantized_claim
from embconf.model.arrays import Array, Config, Table
from embconf.model.contract import STATEFUL, Capabilities, Reply
from embconf.model.rope import LAYER_FEATURE, Pairing
from embconf.reference.layer import embedding_layer_forward

DEFAULT_TARGET = "tinytorch.core.embeddings"
FEATURES = frozenset({"float_ids", "int32_ids", STATEFUL})  # stateful: its own layers step by step (EMB-STA-4)

# operation -> the module names it needs (any one of them)
REQUIRES: dict[str, tuple[str, ...]] = {
    "embedding_forward": ("Embedding",),
    "embedding_backward": ("Embedding",),
    "sinusoidal_table": ("_compute_sinusoidal_table", "create_sinusoidal_embeddings"),
    "learned_positions_forward": ("PositionalEncoding",),
    "learned_positions_backward": ("PositionalEncoding",),
    "embedding_layer_forward": ("EmbeddingLayer",),
    "embedding_layer_backward": ("EmbeddingLayer",),
    "parameter_count": ("EmbeddingLayer",),
    "embedding_layer_own_backward": ("EmbeddingLayer",),
    **BAG_REQUIRES,
    **QUANTIZED_REQUIRES,
}
# operation -> the class whose forward(x) / forward(tokens) has no start_pos in the older published API
OLDER_API = {
    "learned_positions_forward": "PositionalEncoding",
    "learned_positions_backward": "PositionalEncoding",
    "embedding_layer_forward": "EmbeddingLayer",
    "embedding_layer_backward": "EmbeddingLayer",
    "embedding_layer_own_backward": "EmbeddingLayer",
}
CONSTANT_MARKED_TRAINABLE = "requires_grad=True on the sinusoidal table (a constant)"


class ApiMismatch(Exception):
    """The student's objects lack an attribute the TinyTorch API promises (an ``error`` outcome)."""


class TinyTorchAdapter(CallsOnInstances, InProcessAdapter):
    kind = "tinytorch"

    def __init__(self, target: str = DEFAULT_TARGET) -> None:
        try:
            target = layouts.module_target(target, [*sys.path, os.getcwd()])
        except layouts.LayoutProblem as exc:
            raise ImplementationError(f"{target!r}: {exc}") from None
        self.module = load_module(target)
        self.Tensor = student_tensor(self.module, target)
        enable_autograd(self.module, self.Tensor)
        caps = Capabilities(
            self._provided_operations(target),
            FEATURES | rope_claim(self.module, self.Tensor) | bag_claim(self.module) | quantized_claim(self.module),
            error_detail="coarse",
            notes=("TinyTorch signals every rejection with ValueError: error kinds are not checked",),
        )
        bags = TinyTorchBags(self.module, self.Tensor, self._param, self._hand)
        quantized = TinyTorchQuantized(self.module, self.Tensor, self._hand)
        super().__init__(target, caps, module_version(self.module), parts=(bags, quantized))
        self._handed: list[tuple[str, Any, Any]] = []  # (input name, the student's Tensor, its data when handed)
        # own layers, kept for the calls on one instance (section 9.7): its calls of embedding_layer_own_backward
        # are steps of one layer (EMB-STA-4)
        self.instances: Instances[Any] = Instances()

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        """As every in-process adapter, and then EMB-GEN-1 on the student's own Tensors: the Tensors the
        adapter built from the inputs must hold what they were given after forward and backward."""
        self._handed = []
        reply = super().call(operation, inputs)
        reply.violations = [*reply.violations, *self._modified_tensors()]
        self._handed = []
        return reply

    def _hand(self, name: str, tensor: Any) -> Any:
        """``tensor`` (built from the input ``name``), remembered with a copy of its data as handed over."""
        data = as_numpy(tensor)
        self._handed.append((name, tensor, np.array(data, copy=True) if isinstance(data, np.ndarray) else None))
        return tensor

    def _modified_tensors(self) -> list[str]:
        """One message per handed Tensor whose data changed (in place or replaced)."""
        found = []
        for name, tensor, before in self._handed:
            change = "" if before is None else describe_change(before, as_numpy(tensor))
            if change:
                found.append(
                    f"the implementation modified its input '{name}' (the {type(tensor).__name__} it was given: "
                    f"{change}); inputs must be left untouched"
                )
        return found

    def _provided_operations(self, target: str) -> frozenset[str]:
        ops = frozenset(op for op, names in REQUIRES.items() if any(hasattr(self.module, n) for n in names))
        if not ops:
            wanted = sorted({n for names in REQUIRES.values() for n in names})
            raise ImplementationError(f"{target!r} has none of the TinyTorch embeddings API ({', '.join(wanted)})")
        return ops

    def is_coarse_rejection(self, exc: BaseException) -> bool:
        return isinstance(exc, ValueError)

    def skip_reason(self, operation: str, inputs: Mapping[str, Any]) -> Optional[str]:
        if operation == "sinusoidal_table" and inputs.get("dtype", "float32") != "float32":
            return "TinyTorch tables are float32 only"
        pairing = dict(inputs.get("config") or {}).get("rope_pairing")
        claimed = {p.value for p in Pairing if p.feature in self._capabilities.features}
        if pairing is not None and pairing not in claimed:
            return f"the module's rope layer has one pairing ({', '.join(sorted(claimed)) or 'none'}); the config names {pairing!r}"
        owner = OLDER_API.get(operation)
        start = inputs.get("start_pos", 0)
        if owner and not (type(start) is int and start == 0) and not takes_start_pos(getattr(self.module, owner, None)):
            return (
                f"the module's {owner}.forward takes no start_pos (the older TinyTorch API): only start_pos = 0 can run"
            )
        return None

    # ----- building blocks ---------------------------------------------------------------

    def _param(self, name: str, array: np.ndarray) -> Any:
        """A fixture array (the input ``name``) as a fresh trainable student Tensor."""
        return self._hand(name, self.Tensor(array, requires_grad=True))

    def _api(self, name: str) -> Any:
        return getattr(self.module, name)

    def _lookup(self, weight: np.ndarray, ids: np.ndarray) -> tuple[Any, Any]:
        """(injected table, output) of Embedding(V, D) with the fixture's table, on Tensor(ids)."""
        embedding = self._api("Embedding")(weight.shape[0], weight.shape[1])
        table = self._param("weight", weight)
        embedding.weight = table
        return table, embedding.forward(self._hand("ids", self.Tensor(ids)))

    def _positions(self, table: np.ndarray, x: np.ndarray, start_pos: Any) -> tuple[Any, Any, Any]:
        """(injected table, x Tensor, output) of PositionalEncoding(L, D).forward(x, start_pos)."""
        encoding = self._api("PositionalEncoding")(table.shape[0], table.shape[1])
        table_t = self._param("table", table)
        encoding.position_embeddings = table_t
        x_t = self._param("x", x)
        return table_t, x_t, _forward(encoding, x_t, start_pos)

    def _layer(
        self, config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any
    ) -> tuple[Any, Any, Any, Any]:
        """(layer, injected token table, injected position table or None, output)."""
        layer = self._api("EmbeddingLayer")(**student_kwargs(config))
        weight = self._param("token_weight", token_weight)
        _set(layer, "token_embedding", "weight", weight)
        table = None
        if position_table is not None:
            table = self._param("position_table", position_table)
            _set(layer, "pos_encoding", "position_embeddings", table)
        return layer, weight, table, _forward(layer, self._hand("tokens", self.Tensor(tokens)), start_pos)

    @staticmethod
    def _backward(output: Any, grad_output: np.ndarray) -> None:
        """Drive the student's own autograd from ``output`` with the fixture's upstream gradient."""
        output.backward(np.asarray(grad_output, dtype=np.float32))

    def _constant_grad(self, layer: Any) -> Any:
        """What a stored constant position table (sinusoidal) got: its .grad, a marker if trainable, else None."""
        stored = getattr(layer, "pos_encoding", None)
        if not isinstance(stored, self.Tensor):
            return None
        grad = grad_of(stored)
        if grad is None and getattr(stored, "requires_grad", False):
            return CONSTANT_MARKED_TRAINABLE
        return grad

    # ----- operations (named and called as the spec's) -----------------------------------

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        return as_numpy(self._lookup(weight, ids)[1])

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        table, output = self._lookup(weight, ids)
        self._backward(output, grad_output)
        return grad_of(table)

    def sinusoidal_table(self, max_len: int, embed_dim: int, dtype: str = "float32") -> Any:
        if hasattr(self.module, "_compute_sinusoidal_table"):
            return as_numpy(self._api("_compute_sinusoidal_table")(max_len, embed_dim))
        return as_numpy(self._api("create_sinusoidal_embeddings")(max_len, embed_dim))

    def learned_positions_forward(self, table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> Any:
        return as_numpy(self._positions(table, x, start_pos)[2])

    def learned_positions_backward(
        self, table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
    ) -> tuple[Any, Any]:
        table_t, x_t, output = self._positions(table, x, start_pos)
        self._backward(output, grad_output)
        return grad_of(x_t), grad_of(table_t)

    def embedding_layer_forward(
        self, config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
    ) -> Any:
        return as_numpy(self._layer(config, token_weight, position_table, tokens, start_pos)[3])

    def embedding_layer_backward(
        self,
        config: Config,
        token_weight: Array,
        position_table: Table,
        tokens: Array,
        start_pos: Any,
        grad_output: Array,
    ) -> tuple[Any, Any]:
        layer, weight, table, output = self._layer(config, token_weight, position_table, tokens, start_pos)
        self._backward(output, grad_output)
        return grad_of(weight), (grad_of(table) if table is not None else self._constant_grad(layer))

    def embedding_layer_own_backward(
        self, config: Mapping[str, Any], tokens: np.ndarray, start_pos: Any, grad_output: np.ndarray
    ) -> tuple[Any, Any]:
        """EMB-LAY-12: the layer as the student's constructor builds it (its own tables, none replaced), its own
        forward and backward, and what its own token table and learned position table received."""
        layer = self._own_layer(config)
        output = _forward(layer, self._hand("tokens", self.Tensor(tokens)), start_pos)
        if getattr(output, "requires_grad", True) is not False:  # else no backward can reach its tables: None
            self._backward(output, grad_output)
        weight = grad_of(_get(layer, "token_embedding", "weight"))
        if dict(config).get("pos_encoding", "learned") != "learned":
            return weight, self._constant_grad(layer)
        return weight, grad_of(_get(layer, "pos_encoding", "position_embeddings"))

    def _own_layer(self, config: Mapping[str, Any]) -> Any:
        """A fresh layer; on an instance, the layer of its first call, its gradients cleared as a training loop
        clears them between steps (``grad = None`` on each of ``parameters()``: TinyTorch accumulates until then)."""
        layer, fresh = self.instances.get(lambda: self._api("EmbeddingLayer")(**student_kwargs(config)))
        for parameter in [] if fresh else layer.parameters():
            parameter.grad = None
        return layer

    def parameter_count(self, config: Mapping[str, Any]) -> dict[str, int]:
        """Sizes of parameters(), and of a stored position table that is not among them."""
        layer = self._api("EmbeddingLayer")(**student_kwargs(config))
        params = list(layer.parameters())
        stored = getattr(layer, "pos_encoding", None)
        constant = isinstance(stored, self.Tensor) and not any(p is stored for p in params)
        return {"trainable": sum(_size(p) for p in params), "non_trainable": _size(stored) if constant else 0}


def student_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor keywords of a fixture's layer config, without ``rope_pairing`` (the student's layer
    has the one pairing it claims)."""
    return {k: v for k, v in layer_kwargs(config).items() if k != "rope_pairing"}


ROPE_PROBE = np.arange(1.0, 9.0, dtype=np.float32).reshape(2, 4)  # a 2 x 4 table; tokens [0, 1, 0] from 1


def rope_claim(module: ModuleType, tensor: type) -> frozenset[str]:
    """``rope-layer`` and the pairing of the student's rope layer, or nothing when building
    ``EmbeddingLayer(pos_encoding='rope')`` raises (a ValueError: TinyTorch's refusal; or no such class).
    The pairing is interleaved when the layer's output on a probe is the interleaved rotation, else half_split
    (also when the probe raises: the rope cases then show what goes wrong)."""
    config = {"vocab_size": 2, "embed_dim": 4, "max_seq_len": 8, "pos_encoding": "rope"}
    try:
        layer = module.EmbeddingLayer(**config)
    except Exception:  # the student's code may raise anything here: each means no rope layer
        return frozenset()
    interleaved = Pairing.INTERLEAVED
    return frozenset(
        {LAYER_FEATURE, (interleaved if _rotates_interleaved(layer, tensor) else Pairing.HALF_SPLIT).feature}
    )


def _rotates_interleaved(layer: Any, tensor: type) -> bool:
    """Whether the rope layer rotates pairs (2k, 2k + 1): its output on tokens [0, 1, 0] from position 1."""
    tokens = np.array([0, 1, 0], dtype=np.float32)
    config = {"vocab_size": 2, "embed_dim": 4, "pos_encoding": "rope", "rope_pairing": Pairing.INTERLEAVED.value}
    try:
        _set(layer, "token_embedding", "weight", tensor(ROPE_PROBE.copy(), requires_grad=True))
        output = as_numpy(_forward(layer, tensor(tokens), 1))
    except Exception:  # a broken rope layer: its cases will say how
        return False
    expected = embedding_layer_forward(config, ROPE_PROBE, None, tokens.astype(np.int64), 1, rope_layer=True)
    return isinstance(output, np.ndarray) and output.shape == expected.shape and bool(np.allclose(output, expected))


def takes_start_pos(cls: Any) -> bool:
    """Whether ``cls.forward`` accepts a start_pos (the current API) or only its input (the older one)."""
    try:
        params = inspect.signature(cls.forward).parameters.values()
    except (TypeError, ValueError, AttributeError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return any(p.kind == p.VAR_POSITIONAL or p.name == "start_pos" for p in params) or len(positional) > 2


def _forward(owner: Any, value: Any, start_pos: Any) -> Any:
    """``owner.forward(value, start_pos)``, or ``owner.forward(value)`` for the older API (start_pos is 0 there)."""
    return owner.forward(value, start_pos) if takes_start_pos(type(owner)) else owner.forward(value)


def student_tensor(module: ModuleType, target: str) -> type:
    """The ``Tensor`` class the module imported into its namespace."""
    tensor = getattr(module, "Tensor", None)
    if not isinstance(tensor, type):
        raise ImplementationError(
            f"{target!r} has no Tensor class in its namespace (TinyTorch modules import it: "
            "from tinytorch.core.tensor import Tensor)"
        )
    return tensor


def enable_autograd(module: ModuleType, tensor: type) -> None:
    """Import the package's ``autograd`` module (importing it switches autograd on), where there is one."""
    for package in _packages(module, tensor):
        name = f"{package}.autograd"
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            load_module(name)
            return


def _packages(module: ModuleType, tensor: type) -> list[str]:
    """The packages of the module and of its Tensor, nearest first, without repeats."""
    candidates = [module.__package__ or "", tensor.__module__.rpartition(".")[0]]
    return [p for i, p in enumerate(candidates) if p and p not in candidates[:i]]


def grad_of(tensor: Any) -> Any:
    """``tensor.grad`` as an ndarray (None stays None: no gradient arrived)."""
    return as_numpy(getattr(tensor, "grad", None))


def _size(value: Any) -> int:
    return int(np.size(as_numpy(value)))


def _child(owner: Any, child: str, attribute: str, purpose: str = "") -> Any:
    """``owner.child``, with a clear message when the API's ``child.attribute`` is missing."""
    target = getattr(owner, child, None)
    if target is None or not hasattr(target, attribute):
        raise ApiMismatch(f"{type(owner).__name__} has no {child}.{attribute}{purpose}")
    return target


def _get(owner: Any, child: str, attribute: str) -> Any:
    """``owner.child.attribute``, with a clear message when the API's attribute is missing."""
    return getattr(_child(owner, child, attribute), attribute)


def _set(owner: Any, child: str, attribute: str, value: Any) -> None:
    """``owner.child.attribute = value``, with a clear message when the API's attribute is missing."""
    setattr(_child(owner, child, attribute, " to load the fixture's table into"), attribute, value)
