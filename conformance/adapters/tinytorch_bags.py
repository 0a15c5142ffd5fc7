"""The optional bag extension of a TinyTorch submission (spec section 16, EMB-BAG, since 2.1.0): the student's
``EmbeddingBag`` on the student's own ``Tensor`` and autograd, driven as the TinyTorch adapter drives ``Embedding``.

The interface a course hands its students (docs/course-staff.md, "Optional extension: bags")::

    class EmbeddingBag:
        MODES = ("sum", "mean", "max")      # the modes it computes (of sum, mean, max, sqrtn)
        WEIGHTED_MODES = ("sum",)           # the modes that take per_sample_weights
        def __init__(self, vocab_size, embed_dim, mode="mean", padding_idx=None, include_last_offset=False): ...
        def forward(self, indices, offsets=None, per_sample_weights=None) -> Tensor: ...   # (bags, embed_dim)

Nothing is declared elsewhere: the features are read from the class without running it. ``bag-<mode>`` for each
mode of ``MODES`` (the interface's three when the class lists none); ``bag-weights`` when ``forward`` takes
``per_sample_weights`` in some mode of ``WEIGHTED_MODES`` (default ``("sum",)``), ``bag-weighted-mean`` too when
those hold mean or sqrtn (a weighted case of any mode carries ``bag-weights``); ``bag-padding`` and
``bag-last-offset`` when the constructor takes ``padding_idx`` and ``include_last_offset``; ``bag-2d`` when
``offsets`` has a default (2-D ids, one bag per row, come without it).
A module without the class claims nothing: every bag case is not applicable and nothing else changes.

Each case builds a fresh layer with the case's mode and options, replaces its ``weight`` with the fixture's table
(the student's Tensor, ``requires_grad=True``), hands ids and offsets as Tensors (float32 storage, as token ids
are), calls ``forward`` and, for the backward, ``backward`` on the output with the fixture's upstream gradient,
reading ``.grad`` of the table and of the per-sample weights.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

import numpy as np

from embconf.adapters.bags import BagCall, BagOperations
from embconf.adapters.convert import as_numpy

CLASS = "EmbeddingBag"
REQUIRES = {"embedding_bag_forward": (CLASS,), "embedding_bag_backward": (CLASS,)}
SPEC_MODES = ("sum", "mean", "max", "sqrtn")
INTERFACE_MODES = ("sum", "mean", "max")  # what a class that lists no MODES is taken to compute
CONSTRUCTOR_OPTIONS = ("padding_idx", "include_last_offset")  # the case's options the layer is built with, when set
DEFAULT_WEIGHTED_MODES = ("sum",)  # what a class that lists no WEIGHTED_MODES takes weights in (PyTorch's rule)


def bag_claim(module: ModuleType) -> frozenset[str]:
    """The bag features the module's ``EmbeddingBag`` accepts (none without the class)."""
    cls = getattr(module, CLASS, None)
    if not isinstance(cls, type):
        return frozenset()
    modes = _listed(cls, "MODES", INTERFACE_MODES)
    features = {f"bag-{mode}" for mode in modes}
    forward, constructor = _parameters(cls, "forward"), _parameters(cls, "__init__")
    if "per_sample_weights" in forward:
        weighted = set(_listed(cls, "WEIGHTED_MODES", DEFAULT_WEIGHTED_MODES)) & set(modes)
        features |= {"bag-weights"} if weighted else set()  # every weighted case carries it, mean's and sqrtn's too
        features |= {"bag-weighted-mean"} if weighted & {"mean", "sqrtn"} else set()
    features |= {"bag-padding"} if "padding_idx" in constructor else set()
    features |= {"bag-last-offset"} if "include_last_offset" in constructor else set()
    offsets = forward.get("offsets")
    features |= {"bag-2d"} if offsets is not None and offsets.default is not inspect.Parameter.empty else set()
    return frozenset(features)


UNCLAIMED = {  # feature -> (what it is, why the class does not claim it), as bag_claim reads the class
    "bag-weights": (
        "per_sample_weights",
        "EmbeddingBag.forward takes no per_sample_weights, or WEIGHTED_MODES and MODES share no mode",
    ),
    "bag-weighted-mean": (
        "weighted mean and sqrtn",
        "EmbeddingBag.forward takes no per_sample_weights, or WEIGHTED_MODES and MODES share neither mean nor sqrtn",
    ),
    "bag-padding": ("padding_idx", "EmbeddingBag.__init__ takes no padding_idx"),
    "bag-last-offset": ("include_last_offset", "EmbeddingBag.__init__ takes no include_last_offset"),
    "bag-2d": ("2-D ids", "the offsets of EmbeddingBag.forward have no default"),
}


def unclaimed_reason(feature: str) -> tuple[str, str]:
    """(what, why) of a feature a TinyTorch submission does not claim: ('mode max', 'not in EmbeddingBag.MODES')."""
    mode = feature.removeprefix("bag-")
    if mode in SPEC_MODES:
        return f"mode {mode}", "not in EmbeddingBag.MODES"
    return UNCLAIMED.get(feature, (feature, "not a feature the submission has"))


def _listed(cls: type, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """The spec's modes among ``cls.<name>`` (a tuple or list of strings), or ``default`` when the class has none."""
    try:
        listed = getattr(cls, name, None)
    except Exception:  # the student's class may raise anything here: it lists nothing
        return default
    if not isinstance(listed, (tuple, list, frozenset, set)):
        return default
    return tuple(mode for mode in SPEC_MODES if mode in tuple(listed))


def _parameters(cls: type, method: str) -> dict[str, inspect.Parameter]:
    """The parameters of ``cls.<method>`` by name ({} when it has none to read)."""
    try:
        return dict(inspect.signature(getattr(cls, method)).parameters)
    except Exception:  # no such method, no signature to read, or the student's class raising anything
        return {}


class TinyTorchBags(BagOperations):
    """``embedding_bag_forward`` and ``embedding_bag_backward`` on the student's class (a part of the adapter):
    ``param(name, array)`` and ``hand(name, tensor)`` are the adapter's, so inputs are watched (EMB-GEN-1)."""

    def __init__(
        self, module: ModuleType, tensor: type, param: Callable[[str, Any], Any], hand: Callable[[str, Any], Any]
    ) -> None:
        self.module, self.Tensor, self._param, self._hand = module, tensor, param, hand

    def _bag(self, call: BagCall) -> tuple[Any, Any, Any]:
        """(injected table, per-sample weights Tensor or None, output) of one fresh layer built with the call's mode
        and the constructor's options it sets (padding_idx, include_last_offset); its forward gets the weights."""
        built: dict[str, Any] = {}
        if call.padding_idx is not None:
            built["padding_idx"] = call.padding_idx
        if call.include_last_offset is not False:  # as the case gives it (a non-boolean is the layer's to refuse)
            built["include_last_offset"] = call.include_last_offset
        layer = getattr(self.module, CLASS)(call.weight.shape[0], call.weight.shape[1], mode=call.mode, **built)
        table = self._param("weight", call.weight)
        layer.weight = table
        indices = self._hand("ids", self.Tensor(call.ids))
        starts = None if call.offsets is None else self._hand("offsets", self.Tensor(call.offsets))
        given = call.per_sample_weights
        weights = None if given is None else self._param("per_sample_weights", given)
        extra = {} if weights is None else {"per_sample_weights": weights}
        return table, weights, layer.forward(indices, starts, **extra)

    def forward(self, call: BagCall) -> Any:
        return as_numpy(self._bag(call)[2])

    def backward(self, call: BagCall, grad_output: np.ndarray) -> tuple[Any, Any]:
        """The gradients of the table and of the per-sample weights (None without them), from ``.grad``."""
        from embconf.adapters.tinytorch import TinyTorchAdapter, grad_of  # the adapter imports this module

        table, weights, output = self._bag(call)
        TinyTorchAdapter._backward(output, grad_output)
        return grad_of(table), (None if weights is None else grad_of(weights))
