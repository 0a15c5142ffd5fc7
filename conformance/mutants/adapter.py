"""Any mutant as an implementation under test: ``--impl mutant:ID``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from embconf.adapters import ImplementationError
from embconf.adapters.base import AdapterBase, call_python
from embconf.adapters.instances import CallsOnInstances, Instances
from embconf.adapters.reference import ReferenceAdapter
from embconf.model.contract import Capabilities, Reply
from embconf.mutants import get, implementation
from embconf.mutants.compose import Implementation


class ImplementationAdapter(AdapterBase):
    """Runs an :class:`Implementation` in-process, with the reference's capabilities."""

    kind = "implementation"

    def __init__(self, impl: Implementation, name: str = "reference parts, composed") -> None:
        self.implementation = impl
        self.target = name

    def describe(self) -> dict[str, Any]:
        return {"name": self.target, "version": "", "language": "python"}

    def capabilities(self) -> Capabilities:
        return ReferenceAdapter().capabilities()

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        return call_python(operation, self.implementation[operation], **inputs)


class MutantAdapter(CallsOnInstances, ImplementationAdapter):
    """One mutant of the catalogue, by id: ``--impl mutant:ID``."""

    kind = "mutant"

    def __init__(self, target: str) -> None:
        try:
            self.mutant = get(target)
        except KeyError as exc:
            raise ImplementationError(f"--impl mutant:{target}: {exc.args[0]}") from None
        super().__init__(implementation(target), f"mutant {target}")
        self.instances: Instances[Implementation] = Instances()

    def capabilities(self) -> Capabilities:
        """The reference's claim, and the features the mutant claims besides (a rope layer's)."""
        caps = super().capabilities()
        return replace(caps, features=caps.features | self.mutant.claims) if self.mutant.claims else caps

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        """A mistake in state kept between calls answers from the instance's state: a fresh one on each call made
        on no instance, so it passes every case of one call, as the module it mimics does when built per case."""
        if self.mutant.fresh is not None:
            self.implementation, _ = self.instances.get(lambda: implementation(self.mutant.id))
        return super().call(operation, inputs)
