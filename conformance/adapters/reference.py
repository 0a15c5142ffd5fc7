"""The project's own NumPy reference as an implementation under test (it must pass 100%)."""

from __future__ import annotations

from typing import Any

from embconf.adapters.base import ALL_OPERATIONS, AdapterBase, call_python
from embconf.model.contract import Capabilities, Reply
from embconf.model.convention import canonical_features
from embconf.reference import OPERATIONS


class ReferenceAdapter(AdapterBase):
    kind = "reference"

    def __init__(self, target: str = "") -> None:
        self.target = target

    def describe(self) -> dict[str, Any]:
        from embconf.model.version import __version__

        return {"name": "embconf reference", "version": __version__, "language": "python"}

    def capabilities(self) -> Capabilities:
        return Capabilities(ALL_OPERATIONS, canonical_features())

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return call_python(operation, OPERATIONS[operation], **inputs)
