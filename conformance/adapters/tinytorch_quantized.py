"""The optional quantized-embedding extension of a TinyTorch submission (spec section 17, EMB-QNT, since 2.3.0):
where a course's quantization module meets its embedding module, the student's ``QuantizedEmbedding`` on the
student's own ``Tensor``, driven as the TinyTorch adapter drives ``Embedding`` (forward only: a quantized table is
served, not trained).

The interface a course hands its students (docs/course-staff.md, "Optional extension: quantized embeddings")::

    class QuantizedEmbedding:
        FORMATS = ("q8_0", "q4_0")                       # the formats it reads (spec section 17's names)
        def __init__(self, qweight, format, embed_dim): ...  # qweight: a Tensor of the table's bytes, 0..255
        def forward(self, indices) -> Tensor: ...         # indices.shape + (embed_dim,), float32

The features are read from the class without running it: ``quant-<kind>`` for each format kind ``FORMATS`` names
(``q8_0`` alone when the class lists none; every ``affine...`` name is the kind ``affine``). A module without the
class claims nothing: every quantized case is not applicable and nothing else changes.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

import numpy as np

from embconf.adapters.convert import as_numpy
from embconf.adapters.quantized_ops import QuantCall, QuantizedOperations
from embconf.model.quantized import parse_format

CLASS = "QuantizedEmbedding"
REQUIRES = {"quantized_lookup": (CLASS,)}
INTERFACE_FORMATS = ("q8_0",)  # what a class that lists no FORMATS is taken to read


def quantized_claim(module: ModuleType) -> frozenset[str]:
    """The format features the module's ``QuantizedEmbedding`` reads (none without the class)."""
    cls = getattr(module, CLASS, None)
    if not isinstance(cls, type):
        return frozenset()
    try:
        listed = getattr(cls, "FORMATS", INTERFACE_FORMATS)
    except Exception:  # the student's class may raise anything here: it lists nothing
        listed = INTERFACE_FORMATS
    names = listed if isinstance(listed, (tuple, list, set, frozenset)) else INTERFACE_FORMATS
    formats = [parse_format(name) for name in names]
    return frozenset(fmt.feature for fmt in formats if fmt is not None)


class TinyTorchQuantized(QuantizedOperations):
    """``quantized_lookup`` on the student's class (a part of the adapter): ``hand(name, tensor)`` is the adapter's,
    so the Tensors it builds from the inputs are watched (EMB-GEN-1)."""

    framework = "a TinyTorch QuantizedEmbedding"

    def __init__(self, module: ModuleType, tensor: type, hand: Callable[[str, Any], Any]) -> None:
        self.module, self.Tensor, self._hand = module, tensor, hand

    def lookup(self, call: QuantCall) -> Any:
        """A fresh layer over the case's bytes (a Tensor of float32 storage, as TinyTorch holds numbers), its
        forward on the ids (float32 storage, as token ids are)."""
        table = self._hand("qweight", self.Tensor(call.qweight.astype(np.float32)))
        layer = getattr(self.module, CLASS)(table, call.fmt.name, call.embed_dim)
        return as_numpy(layer.forward(self._hand("ids", self.Tensor(call.ids))))
