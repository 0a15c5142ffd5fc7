"""The project's own NumPy reference as an implementation under test (it must pass 100%)."""

from __future__ import annotations

from typing import Any

from embconf.adapters.base import ALL_OPERATIONS, AdapterBase, call_python
from embconf.model.bag_conventions import convention_features as bag_convention_features
from embconf.model.contract import Capabilities, Reply
from embconf.model.rope import LAYER_FEATURE
from embconf.model.rope_conventions import convention_features
from embconf.model.vocabulary import features
from embconf.reference import OPERATIONS


class ReferenceAdapter(AdapterBase):
    kind = "reference"

    def __init__(self, target: str = "") -> None:
        self.target = target

    def describe(self) -> dict[str, Any]:
        from embconf.model.version import __version__

        return {"name": "embconf reference", "version": __version__, "language": "python"}

    def capabilities(self) -> Capabilities:
        # the canonical sinusoid (interleaved, table stored); 'rope' refused, as the reference operations answer
        # unless asked for the feature rope-layer (EMB-LAY-7, EMB-LAY-10)
        conventions = convention_features() | bag_convention_features()  # declared by name; the reference declares none
        canonical = frozenset(
            f for f in features() if not f.startswith(("sinusoid", LAYER_FEATURE)) and f not in conventions
        )
        return Capabilities(ALL_OPERATIONS, canonical)

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return call_python(operation, OPERATIONS[operation], **inputs)
