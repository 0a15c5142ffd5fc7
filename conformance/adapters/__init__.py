"""Naming an implementation: ``KIND:TARGET``, the same string in the CLI, the pytest option and config.

Built-in kinds load lazily (a run pays only for the adapter it uses); third-party
adapters register a factory ``(target: str) -> Adapter`` in the entry point
group ``embconf.adapters`` and are then named like the built-ins.

The rooms: ``base`` (the Protocol's defaults, :func:`call_python`, the call plan); ``operation_sets`` (the operation
set each family's framework parts derive from, keyed by area); ``common`` (adapters by
declaration: targets, capabilities, one method per operation); ``convert`` (the one NumPy <-> tensor converter
set); ``frameworks`` (importing a framework, glue verdicts, :class:`FrameworkAdapter`); ``loading`` (a module or
file of the user's); ``instances`` (what an adapter keeps for the calls on one instance); ``guard`` (copies in;
mutated inputs and returned views caught); ``rope`` (the rope features and checks), ``rope_operations`` (the rope
operations written once) and ``torch_rope`` (them on torch autograd); ``jaxcommon`` (what the JAX libraries share);
then one file per kind: ``reference``, ``functions``, ``tinytorch`` (+ ``tinytorch_bags``, ``tinytorch_quantized`` and
``tinytorch_layouts``: where module 11 is in a folder, the rule grading reads too), ``pytorch``, ``flax``,
``haiku``, ``equinox``, ``keras`` (+ ``keras_rope``), ``tinygrad``, ``transformers`` (+ ``transformers_rope``),
``rotary_torch``, ``mlx`` (+ ``mlx_rope``), ``paddle``, ``mindspore``, ``onnxruntime`` (+ ``onnx_rope``), and the
rotary-only ``torchtune``, ``x_transformers``, ``megatron`` and ``ggml`` (C, through ggml- python); the bag kinds
``torch_bag``, ``tensorflow_bag``, ``torchrec`` and ``keras_rs`` over ``bags`` (the bag operations written once, the
offsets read into bags for a framework that takes none); the quantized kinds ``ggml_quant``, ``gguf``, ``mlx_quant``,
``fbgemm``, ``onnxruntime_quant`` (``onnx_quant``) and ``torchao`` (``torchao_quant``) over ``quantized_ops``, the quantized operations written once over
a framework's hooks (spec 2.3.0).

Adding a framework adapter is one short file and its line in :data:`BUILTIN`: a
:class:`~embconf.adapters.frameworks.FrameworkAdapter` subclass declares ``kind``, the ``targets`` it takes and
its capabilities, and has one method per operation it computes, named as the operation; a rotary embedding is a
:class:`~embconf.adapters.rope_operations.RopeOperations` part (``TorchRope`` for PyTorch) listed in ``parts``.
docs/implementations.md ("Adding a built-in framework adapter") walks through it.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from embconf.model.contract import Adapter
from embconf.model.errors import UserError
from embconf.model.impl import Impl, ImplLike

ENTRY_POINT_GROUP = "embconf.adapters"
DEFAULT_IMPL = "tinytorch:tinytorch.core.embeddings"

# kind -> (module, class, whether a target is required)
BUILTIN: dict[str, tuple[str, str, bool]] = {
    "reference": ("embconf.adapters.reference", "ReferenceAdapter", False),
    "functions": ("embconf.adapters.functions", "FunctionsAdapter", True),
    "tinytorch": ("embconf.adapters.tinytorch", "TinyTorchAdapter", False),
    "torch": ("embconf.adapters.pytorch", "TorchAdapter", False),
    "flax": ("embconf.adapters.flax", "FlaxAdapter", False),
    "keras": ("embconf.adapters.keras", "KerasAdapter", False),
    "tinygrad": ("embconf.adapters.tinygrad", "TinygradAdapter", False),
    "transformers": ("embconf.adapters.transformers", "TransformersAdapter", True),
    "onnxruntime": ("embconf.adapters.onnxruntime", "OnnxRuntimeAdapter", False),
    "mlx": ("embconf.adapters.mlx", "MlxAdapter", False),
    "haiku": ("embconf.adapters.haiku", "HaikuAdapter", False),
    "equinox": ("embconf.adapters.equinox", "EquinoxAdapter", False),
    "paddle": ("embconf.adapters.paddle", "PaddleAdapter", False),
    "mindspore": ("embconf.adapters.mindspore", "MindSporeAdapter", False),
    "rotary_embedding_torch": ("embconf.adapters.rotary_torch", "RotaryTorchAdapter", False),
    "torchtune": ("embconf.adapters.torchtune", "TorchtuneAdapter", False),
    "x_transformers": ("embconf.adapters.x_transformers", "XTransformersAdapter", False),
    "megatron": ("embconf.adapters.megatron", "MegatronAdapter", False),
    "ggml": ("embconf.adapters.ggml", "GgmlAdapter", False),
    "onnxruntime_rope": ("embconf.adapters.onnx_rope", "OnnxRopeAdapter", False),
    "torch_bag": ("embconf.adapters.torch_bag", "TorchBagAdapter", False),
    "tensorflow_bag": ("embconf.adapters.tensorflow_bag", "TensorFlowBagAdapter", False),
    "torchrec": ("embconf.adapters.torchrec", "TorchRecAdapter", False),
    "keras_rs": ("embconf.adapters.keras_rs", "KerasRsAdapter", False),
    "ggml_quant": ("embconf.adapters.ggml_quant", "GgmlQuantAdapter", False),
    "gguf": ("embconf.adapters.gguf", "GgufAdapter", False),
    "mlx_quant": ("embconf.adapters.mlx_quant", "MlxQuantAdapter", False),
    "fbgemm": ("embconf.adapters.fbgemm", "FbgemmAdapter", False),
    "onnxruntime_quant": ("embconf.adapters.onnx_quant", "OnnxQuantAdapter", False),
    "torchao": ("embconf.adapters.torchao_quant", "TorchaoAdapter", False),
    "subprocess": ("embconf.protocol.adapter", "SubprocessAdapter", True),
    "mutant": ("embconf.mutants.adapter", "MutantAdapter", True),
}


class ImplementationError(UserError):
    """The implementation cannot be named, found or loaded (exit code 2, one line)."""


def parse_impl(spec: ImplLike) -> Impl:
    """The :class:`Impl` an ``--impl`` string names (an Impl as it is); ImplementationError without a kind."""
    try:
        return Impl.parse(spec)
    except ValueError:
        raise ImplementationError(
            f"bad --impl {str(spec)!r}: expected KIND:TARGET, KIND one of {', '.join(known_kinds())}"
        ) from None


def known_kinds() -> list[str]:
    return sorted(set(BUILTIN) | set(_entry_points()))


def kinds_help() -> str:
    """Every built-in kind for a command's help, ``KIND:TARGET`` where a target is required (from :data:`BUILTIN`,
    so a kind added there is listed), and the plugins' place."""
    named = ", ".join(f"{kind}:TARGET" if needs_target else kind for kind, (_, _, needs_target) in BUILTIN.items())
    return f"KIND[:TARGET], KIND one of {named}, or an installed adapter plugin's kind"


def _entry_points() -> dict[str, Callable[[str], Adapter]]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}  # type: ignore[misc]


def create_adapter(spec: ImplLike, **options: Any) -> Adapter:
    """The adapter an ``--impl`` string names, loaded and ready; ImplementationError otherwise.

    ``options`` (e.g. timeout) reach only adapters that list them in an ``options`` attribute.
    """
    kind, target = parse_impl(spec)
    spec = str(spec)  # as the user wrote it, for messages
    if kind in BUILTIN:
        module_name, class_name, needs_target = BUILTIN[kind]
        if needs_target and not target:
            raise ImplementationError(f"bad --impl {spec!r}: '{kind}' needs a target, as in {kind}:TARGET")
        try:
            factory = getattr(importlib.import_module(module_name), class_name)
        except ImportError as exc:
            raise ImplementationError(f"the {kind!r} adapter cannot be loaded: {exc}") from None
        kwargs = _accepted(factory, options)
        return factory(target, **kwargs) if target else factory(**kwargs)
    plugins = _entry_points()
    if kind not in plugins:
        raise ImplementationError(
            f"unknown implementation kind {kind!r} in --impl {spec!r}; known: {', '.join(known_kinds())}"
        )
    try:
        factory = plugins[kind].load()  # type: ignore[attr-defined]
    except Exception as exc:
        raise ImplementationError(f"adapter plugin {kind!r} failed to load: {type(exc).__name__}: {exc}") from None
    return factory(target, **_accepted(factory, options))


def _accepted(factory: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The options ``factory`` declares in its ``options`` attribute."""
    return {name: value for name, value in options.items() if name in getattr(factory, "options", ())}
