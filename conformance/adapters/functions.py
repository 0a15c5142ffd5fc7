"""``functions:MODULE_OR_FILE``: plain NumPy functions, one per spec operation.

The module defines functions named exactly as the spec's operations
(``embedding_forward``, ``sinusoidal_table``, ...). Each is called with keyword
arguments named as the operation's inputs in ``spec/vocabulary.json`` and
returns its single output bare, several outputs as a tuple in the spec's order,
or a dict keyed by output name. Errors: raise an exception whose ``kind``
attribute names a spec error kind. Optional module attributes:

- ``EMBCONF_FEATURES``: the optional features implemented (names from the vocabulary);
- ``EMBCONF_SINUSOID_CONVENTION``: ``"interleaved"`` (default) or a named profile;
- ``EMBCONF_SINUSOID_PARAMETERS``: the point of the sinusoid family it computes, as a dict of parameters
  (spec 1.2.0, EMB-SIN-6; a parameter left out is canonical).

Operations the module does not define are not applicable, never failures. A
function declines one case it is sent (spec section 11) by raising
``NotImplementedError("why")``: the case is ``not_applicable`` with that reason.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Optional

from embconf.adapters import ImplementationError
from embconf.adapters.base import ALL_OPERATIONS, call_python
from embconf.adapters.common import Handler, InProcessAdapter, module_version
from embconf.adapters.loading import load_module
from embconf.model.contract import Capabilities, Reply, Status
from embconf.model.sinusoid import SinusoidProfile, declared_profile, profile_features
from embconf.model.vocabulary import features as spec_features


class FunctionsAdapter(InProcessAdapter):
    kind = "functions"

    def __init__(self, target: str) -> None:
        module = load_module(target)
        handlers = operation_functions(module, target)
        caps = Capabilities(
            frozenset(handlers),
            declared_features(module, target),
            sinusoid_parameters=declared_sinusoid(module, target),
        )
        super().__init__(target, handlers, caps, module_version(module))

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        """As every in-process adapter, except that NotImplementedError declines the case."""
        handler = self.handlers.get(operation)
        if handler is None:
            return super().call(operation, inputs)
        declined: list[str] = []

        def run(**kwargs: Any) -> Any:
            try:
                return handler(**kwargs)
            except NotImplementedError as exc:
                declined.append(str(exc) or "no reason given")
                raise

        reply = call_python(operation, run, **inputs)
        return Reply(Status.SKIPPED, message=f"declined: {declined[0]}") if declined else reply


def operation_functions(module: ModuleType, target: str) -> dict[str, Handler]:
    """The spec operations ``module`` defines as callables; ImplementationError when there are none."""
    found = {op: getattr(module, op) for op in sorted(ALL_OPERATIONS) if callable(getattr(module, op, None))}
    if not found:
        raise ImplementationError(
            f"{target!r} defines none of the spec operations ({', '.join(sorted(ALL_OPERATIONS))})"
        )
    return found


def declared_features(module: ModuleType, target: str) -> frozenset[str]:
    """``EMBCONF_FEATURES``, checked against the vocabulary (conventions are declared separately)."""
    raw: Any = getattr(module, "EMBCONF_FEATURES", ())
    names = _names(raw)
    if names is None:
        raise ImplementationError(f"{target!r}: EMBCONF_FEATURES must be a list of feature names, got {raw!r}")
    known = set(spec_features()) - profile_features()
    unknown = sorted(str(n) for n in names - known)
    if unknown:
        raise ImplementationError(
            f"{target!r}: unknown feature(s) {', '.join(unknown)} in EMBCONF_FEATURES; known: {', '.join(sorted(known))}"
            " (a sinusoid profile is declared by EMBCONF_SINUSOID_CONVENTION or EMBCONF_SINUSOID_PARAMETERS)"
        )
    return names


def declared_sinusoid(module: ModuleType, target: str) -> SinusoidProfile:
    """The sinusoid profile ``EMBCONF_SINUSOID_CONVENTION`` names or ``EMBCONF_SINUSOID_PARAMETERS`` spells out."""
    try:
        return declared_profile(
            getattr(module, "EMBCONF_SINUSOID_CONVENTION", None), getattr(module, "EMBCONF_SINUSOID_PARAMETERS", None)
        )
    except ValueError as exc:
        raise ImplementationError(f"{target!r}: {exc}") from None


def _names(value: Any) -> Optional[frozenset[str]]:
    """``value`` as a set of strings, or None when it is not an iterable of strings."""
    if isinstance(value, str):
        return None
    try:
        names = frozenset(value)
    except TypeError:
        return None
    return names if all(isinstance(n, str) for n in names) else None
