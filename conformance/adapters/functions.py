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
  (spec 1.2.0, EMB-SIN-6; a parameter left out is canonical);
- ``EMBCONF_ROPE_CONVENTIONS``: the rotary conventions it follows, a list of ``negative_sense``,
  ``attention_by_caller``, ``float32_tables`` (spec 2.0.0, EMB-ROPE-V1..V3);
- ``EMBCONF_BAG_CONVENTIONS``: the bag conventions it follows, a list of ``drop_negative_ids``,
  ``prune_nonpositive_weights`` (spec 2.1.0, EMB-BAG-V1, V2).

Operations the module does not define are not applicable, never failures. A
function declines one case it is sent (spec section 11) by raising
``embconf.Decline("why")``: the case is ``not_applicable`` with that reason.
For modules written before ``Decline``, a ``NotImplementedError("why")`` raised
by the module's own code (a frame in the module's file) declines too; one
raised from anywhere else (inside a framework the module calls) is an
``error``, as any other exception: it is the framework failing, not the module
choosing.
"""

from __future__ import annotations

import os
from types import ModuleType, TracebackType
from typing import Any, Optional

from embconf.adapters import ImplementationError
from embconf.adapters.base import ALL_OPERATIONS, call_python, declined
from embconf.adapters.common import Handler, InProcessAdapter, module_version
from embconf.adapters.loading import load_module
from embconf.model.contract import STATEFUL, Capabilities, Reply, Status
from embconf.model.convention import KINDS, Convention, claimable_features


class FunctionsAdapter(InProcessAdapter):
    kind = "functions"

    def __init__(self, target: str) -> None:
        module = load_module(target)
        self._own_files = module_files(module)
        caps = Capabilities(
            frozenset(operation_functions(module, target)),
            declared_features(module, target) | {STATEFUL},  # the module is its one instance (section 9.7)
            conventions=declared_conventions(module, target),
        )
        super().__init__(target, caps, module_version(module), (module,))

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        """As every in-process adapter, except that the module's own NotImplementedError declines the case."""
        handler = self.handlers.get(operation)
        if handler is None:
            return super().call(operation, inputs)
        reasons: list[str] = []

        def run(**kwargs: Any) -> Any:
            try:
                return handler(**kwargs)
            except NotImplementedError as exc:
                if raised_in(exc.__traceback__, self._own_files):
                    reasons.append(str(exc) or "no reason given")
                raise

        reply = call_python(operation, run, **inputs)
        if reasons:
            return declined(reasons[0])
        if reply.status == Status.RAISED and reply.message.startswith("raised NotImplementedError"):
            reply.message += " inside code outside the module (to decline a case, raise embconf.Decline)"
        return reply


def module_files(module: ModuleType) -> tuple[str, ...]:
    """Where the module's own code lives: its file, or its package's folder (with a separator at the end)."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return ()
    path = os.path.realpath(path)
    if os.path.basename(path) == "__init__.py":
        return (os.path.dirname(path) + os.sep,)
    return (path,)


def raised_in(tb: Optional[TracebackType], own: tuple[str, ...]) -> bool:
    """Whether the innermost frame of ``tb`` (where the exception was raised) is in one of the ``own`` files."""
    if tb is None or not own:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    where = os.path.realpath(tb.tb_frame.f_code.co_filename)
    return any(where == path or (path.endswith(os.sep) and where.startswith(path)) for path in own)


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
    known = set(claimable_features())
    unknown = sorted(str(n) for n in names - known)
    if unknown:
        raise ImplementationError(
            f"{target!r}: unknown feature(s) {', '.join(unknown)} in EMBCONF_FEATURES; known: {', '.join(sorted(known))}"
            " (a convention is declared by its own attribute: "
            + ", ".join(attribute for kind in KINDS for attribute in kind.module_attributes)
            + ")"
        )
    return names


def declared_conventions(module: ModuleType, target: str) -> frozenset[Convention]:
    """The conventions the module declares, each kind by its own attributes (``EMBCONF_SINUSOID_CONVENTION`` or
    ``EMBCONF_SINUSOID_PARAMETERS``, ``EMBCONF_ROPE_CONVENTIONS``, ``EMBCONF_BAG_CONVENTIONS``)."""
    found: set[Convention] = set()
    for kind in KINDS:
        declared = {key: getattr(module, name) for name, key in kind.module_attributes.items() if hasattr(module, name)}
        try:
            found |= kind.read(declared)
        except ValueError as exc:
            raise ImplementationError(f"{target!r}: {' or '.join(kind.module_attributes)}: {exc}") from None
    return frozenset(found)


def _names(value: Any) -> Optional[frozenset[str]]:
    """``value`` as a set of strings, or None when it is not an iterable of strings."""
    if isinstance(value, str):
        return None
    try:
        names = frozenset(value)
    except TypeError:
        return None
    return names if all(isinstance(n, str) for n in names) else None
