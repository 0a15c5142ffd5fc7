"""``keras`` / ``keras:BACKEND``: ``keras.layers.Embedding`` and keras_hub's position layers, against the spec.

The backend is Keras's own choice (``KERAS_BACKEND`` or ``~/.keras/keras.json``; TensorFlow by
default) or the one named (``keras:jax``, ``keras:torch``, ``keras:tensorflow``, set before Keras is
imported); the report names it. What is Keras's and what is the adapter's:

- ``embedding_forward`` / ``embedding_backward``: ``keras.layers.Embedding`` holding the fixture's
  table (dtype = the table's). Keras casts ids that are not int32/int64 to int32, so it accepts float
  ids: ``float_ids`` is declared, and what the cast does to 0.5 or NaN is what is judged.
- With keras_hub installed, each of its layers is declared for exactly what it provides:
  ``SinePositionEncoding`` -> ``sinusoidal_table`` (called on zeros of shape (1, max_len, D));
  ``PositionEmbedding`` -> ``learned_positions_*`` (its output, the table rows for the window, is
  added to ``x`` with ``keras.ops.add``, as ``TokenAndPositionEmbedding`` does; that addition is
  the only glue); ``TokenAndPositionEmbedding`` -> the layer operations and ``parameter_count`` for
  learned positions, no scaling and an explicit ``max_seq_len`` (it has no default). Other
  configurations, including unknown ``pos_encoding`` values it has no way to reject, are declined.
  ``RotaryEmbedding`` -> the rope operations (half_split, arbitrary positions, linear and yarn scaling):
  :mod:`embconf.adapters.keras_rope`.
- Gradients are the backend's own: ``tf.GradientTape``, ``jax.vjp`` over ``stateless_call``, or
  torch autograd. No id, shape, start_pos or length check is added. The only error mapped is the
  backend's own range error (TensorFlow's ``indices[i] = n is not in [0, V)``; torch's
  ``IndexError: index out of range``) to ``index_out_of_range``.
- float64 is declared except on the jax backend with x64 mode off (JAX would narrow it).
- On the jax backend ``Embedding``'s ``ops.take`` is ``jnp.take``: its out-of-range and negative ids are
  cited as JAX's documented indexing (``JAX_INDEXING``), and still fail.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from embconf.adapters import ImplementationError
from embconf.adapters.convert import to_numpy
from embconf.adapters.frameworks import FrameworkAdapter, import_framework
from embconf.adapters.jaxcommon import JAX_INDEXING
from embconf.adapters.keras_rope import KERAS_YARN_ORIGINAL, KerasRope
from embconf.model.arrays import Array, Config, Table
from embconf.model.contract import Capabilities, DocumentedChoice
from embconf.reference.errors import EmbeddingError

EXTRA = "keras"
BACKENDS = ("tensorflow", "jax", "torch")
LAYER_OPERATIONS = ("embedding_layer_forward", "embedding_layer_backward", "parameter_count")
HUB_OPERATIONS = frozenset(
    {"sinusoidal_table", "learned_positions_forward", "learned_positions_backward", *LAYER_OPERATIONS}
)
_TF_RANGE = re.compile(r"indices\[[\d,]*\] = -?\d+ is not in \[0, \d+\)")


class KerasAdapter(FrameworkAdapter):
    kind = "keras"
    targets = ("", *BACKENDS)

    def __init__(self, target: str = "") -> None:
        self.keras = _import_keras(target)
        self.backend = self.keras.backend.backend()
        self.ops = self.keras.ops
        self.hub = _import_optional("keras_hub")
        rope = KerasRope(self.hub, self.ops, self._gradients) if self.hub is not None else None
        operations = {"embedding_forward", "embedding_backward"}
        operations |= HUB_OPERATIONS | rope.operations if rope is not None else set()
        features = {"int32_ids", "float_ids"} | ({"float64"} if self._float64() else set())
        features |= rope.features() if rope is not None else set()
        hub = f"keras_hub {self.hub.__version__}" if self.hub is not None else "keras_hub not installed"
        documented: tuple[DocumentedChoice, ...] = JAX_INDEXING if self.backend == "jax" else ()  # jnp.take there
        documented += (KERAS_YARN_ORIGINAL,) if self.hub is not None else ()
        caps = Capabilities(
            frozenset(operations), frozenset(features), notes=(f"backend {self.backend}", hub), documented=documented
        )
        super().__init__(
            f"keras:{target}" if target else "keras",
            self.keras,
            caps,
            f"Keras ({self.backend})" + (" + keras_hub" if self.hub is not None else ""),
            (rope,) if rope is not None else (),
        )

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "backend": self.backend,
            "keras_hub": getattr(self.hub, "__version__", "") if self.hub is not None else "",
        }

    def _float64(self) -> bool:
        if self.backend != "jax":
            return True
        from embconf.adapters.jaxcommon import x64_enabled

        return x64_enabled(import_framework("jax", EXTRA))

    def skip_reason(self, operation: str, inputs: Mapping[str, Any]) -> Optional[str]:
        if operation not in LAYER_OPERATIONS:
            return None
        config = inputs["config"]
        if config.get("pos_encoding", "learned") != "learned" or config.get("scale_embeddings", False):
            return "keras_hub's TokenAndPositionEmbedding provides learned positions without scaling only"
        if "max_seq_len" not in config:
            return "keras_hub's TokenAndPositionEmbedding has no default sequence_length"
        return None

    # ----- keras.layers.Embedding --------------------------------------------------------

    def _embedding(self, weight: np.ndarray) -> Any:
        layer = self.keras.layers.Embedding(weight.shape[0], weight.shape[1], dtype=str(weight.dtype))
        layer.build((None,))
        layer.embeddings.assign(weight)
        return layer

    def embedding_forward(self, weight: np.ndarray, ids: np.ndarray) -> Any:
        layer = self._embedding(weight)
        with self.errors():
            return to_numpy(self.ops.convert_to_numpy(layer(ids)))

    def embedding_backward(self, weight: np.ndarray, ids: np.ndarray, grad_output: np.ndarray) -> Any:
        layer = self._embedding(weight)
        _, (grad,) = self._gradients(layer, lambda call: call(ids), [], grad_output)
        return grad

    # ----- keras_hub ------------------------------------------------------------------------

    def sinusoidal_table(self, max_len: int, embed_dim: int, dtype: str = "float32") -> Any:
        layer = self.hub.layers.SinePositionEncoding(dtype=dtype)
        with self.errors():
            return to_numpy(self.ops.convert_to_numpy(layer(np.zeros((1, max_len, embed_dim), dtype))))[0]

    def _position_embedding(self, table: np.ndarray) -> Any:
        layer = self.hub.layers.PositionEmbedding(sequence_length=table.shape[0], dtype=str(table.dtype))
        layer.build((None, table.shape[0], table.shape[1]))
        layer.position_embeddings.assign(table)
        return layer

    def learned_positions_forward(self, table: np.ndarray, x: np.ndarray, start_pos: Any = 0) -> Any:
        layer = self._position_embedding(table)
        with self.errors():
            x_ = self.ops.convert_to_tensor(x)
            return to_numpy(self.ops.convert_to_numpy(self.ops.add(x_, layer(x_, start_index=start_pos))))

    def learned_positions_backward(
        self, table: np.ndarray, x: np.ndarray, start_pos: Any, grad_output: np.ndarray
    ) -> tuple[Any, Any]:
        layer = self._position_embedding(table)
        (grad_x,), (grad_table,) = self._gradients(
            layer, lambda call, x_: self.ops.add(x_, call(x_, start_index=start_pos)), [x], grad_output
        )
        return grad_x, grad_table

    def _token_and_position(
        self, config: Config, token_weight: Optional[np.ndarray] = None, position_table: Table = None
    ) -> Any:
        dtype = str(token_weight.dtype) if token_weight is not None else "float32"
        layer = self.hub.layers.TokenAndPositionEmbedding(
            config["vocab_size"], config["max_seq_len"], config["embed_dim"], dtype=dtype
        )
        layer.build((None, config["max_seq_len"]))
        if token_weight is not None:
            layer.token_embedding.embeddings.assign(token_weight)
            layer.position_embedding.position_embeddings.assign(position_table)
        return layer

    def embedding_layer_forward(
        self, config: Config, token_weight: Array, position_table: Table, tokens: Array, start_pos: Any = 0
    ) -> Any:
        layer = self._token_and_position(config, token_weight, position_table)
        with self.errors():
            return to_numpy(self.ops.convert_to_numpy(layer(tokens, start_index=start_pos)))

    def embedding_layer_backward(
        self,
        config: Config,
        token_weight: Array,
        position_table: Table,
        tokens: Array,
        start_pos: Any,
        grad_output: Array,
    ) -> tuple[Any, Any]:
        layer = self._token_and_position(config, token_weight, position_table)
        _, grads = self._gradients(layer, lambda call: call(tokens, start_index=start_pos), [], grad_output)
        order = [id(v) for v in layer.trainable_variables]
        tokens, positions = layer.token_embedding.embeddings, layer.position_embedding.position_embeddings
        return grads[order.index(id(tokens))], grads[order.index(id(positions))]

    def parameter_count(self, config: Mapping[str, Any]) -> dict[str, int]:
        layer = self._token_and_position(config)
        return {
            "trainable": int(sum(np.prod(v.shape) for v in layer.trainable_variables)),
            "non_trainable": int(sum(np.prod(v.shape) for v in layer.non_trainable_variables)),
        }

    # ----- gradients, on the backend's own autodiff ------------------------------------------

    def _gradients(
        self, layer: Any, forward: Callable[..., Any], xs: Sequence[np.ndarray], grad_output: np.ndarray
    ) -> tuple[list[Any], list[Any]]:
        """d(forward)/d(xs) and d/d(layer.trainable_variables) for the upstream gradient, as arrays."""
        with self.errors():
            if self.backend == "jax":
                grads_x, grads_v = self._jax_gradients(layer, forward, xs, grad_output)
            elif self.backend == "torch":
                grads_x, grads_v = self._torch_gradients(layer, forward, xs, grad_output)
            else:
                grads_x, grads_v = self._tf_gradients(layer, forward, xs, grad_output)
        return [to_numpy(g) for g in grads_x], [to_numpy(g) for g in grads_v]

    def _tf_gradients(
        self, layer: Any, forward: Callable[..., Any], xs: Sequence[np.ndarray], grad_output: np.ndarray
    ) -> tuple[list, list]:
        import tensorflow as tf

        xs_t = [tf.constant(x) for x in xs]
        variables = [v.value for v in layer.trainable_variables]
        with tf.GradientTape() as tape:
            tape.watch(xs_t)
            out = forward(layer, *xs_t)
        grads = tape.gradient(out, xs_t + variables, output_gradients=tf.constant(grad_output))
        grads = [tf.convert_to_tensor(g) if g is not None else None for g in grads]  # IndexedSlices -> dense
        return grads[: len(xs_t)], grads[len(xs_t) :]

    def _torch_gradients(
        self, layer: Any, forward: Callable[..., Any], xs: Sequence[np.ndarray], grad_output: np.ndarray
    ) -> tuple[list, list]:
        import torch

        xs_t = [torch.from_numpy(np.array(x)).requires_grad_(True) for x in xs]
        out = forward(layer, *xs_t)
        out.backward(torch.from_numpy(np.array(grad_output)))
        return [x.grad for x in xs_t], [v.value.grad for v in layer.trainable_variables]

    def _jax_gradients(
        self, layer: Any, forward: Callable[..., Any], xs: Sequence[np.ndarray], grad_output: np.ndarray
    ) -> tuple[list, list]:
        from embconf.adapters.jaxcommon import vjp

        jax = import_framework("jax", EXTRA)
        frozen = [v.value for v in layer.non_trainable_variables]

        def pure(primal: tuple[list, list]) -> Any:
            xs_j, trainable = primal
            call = lambda *args, **kwargs: layer.stateless_call(trainable, frozen, *args, **kwargs)[0]  # noqa: E731
            return forward(call, *xs_j)

        primal = ([jax.numpy.asarray(x) for x in xs], [v.value for v in layer.trainable_variables])
        return vjp(jax, pure, primal, grad_output)

    @contextmanager
    def errors(self) -> Iterator[None]:
        """The backend's own range errors as index_out_of_range; everything else as raised."""
        try:
            yield
        except IndexError as exc:
            if self.backend == "torch" and "out of range" in str(exc):
                raise EmbeddingError("index_out_of_range", f"IndexError: {exc}") from exc
            raise
        except Exception as exc:
            found = _TF_RANGE.search(str(exc)) if type(exc).__name__ == "InvalidArgumentError" else None
            if found:
                raise EmbeddingError("index_out_of_range", f"InvalidArgumentError: {found.group(0)}") from exc
            raise


def _import_keras(backend: str) -> Any:
    if backend:
        loaded = sys.modules.get("keras")
        if loaded is not None and loaded.backend.backend() != backend:
            raise ImplementationError(
                f"Keras is already loaded with the {loaded.backend.backend()} backend in this process; run keras:{backend} isolated (not --in-process)"
            )
        os.environ["KERAS_BACKEND"] = backend
    return import_framework("keras", EXTRA, needs=" (and the backend's own package: tensorflow, jax or torch)")


def _import_optional(module: str) -> Any:
    try:
        return import_framework(module, EXTRA)
    except ImplementationError:
        return None
