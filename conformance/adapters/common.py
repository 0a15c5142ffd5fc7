"""What the in-process adapters (functions, tinytorch, torch and every framework) share: adapters by declaration.

An adapter declares what it computes and the base does the rest:

- ``targets`` (class attribute): the targets it takes, ``""`` for none (``None``: any, a module or file). Any
  other target is refused here, in one place, before the adapter imports anything (:meth:`InProcessAdapter.__new__`).
- its :class:`~embconf.model.contract.Capabilities`: the operations it computes and the features it claims. Each
  operation is the method of that name, on the adapter or on one of its ``parts`` (a RoPE component, a module of
  functions): no table maps names to methods (:func:`operation_methods`).
- :meth:`InProcessAdapter.skip_reason` declines single cases; :meth:`InProcessAdapter.is_coarse_rejection`
  accepts a generic exception type as a coarse rejection. Each call goes through
  :func:`~embconf.adapters.base.call_python`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, ClassVar, Iterable, Optional

from embconf.adapters import ImplementationError
from embconf.adapters.base import AdapterBase, call_python
from embconf.model.contract import Capabilities, Reply, Status

Handler = Callable[..., Any]


class InProcessAdapter(AdapterBase):
    """An adapter whose operations are Python callables in this process, found by name (see the module docstring)."""

    targets: ClassVar[Optional[tuple[str, ...]]] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> "InProcessAdapter":
        if cls.targets is not None:
            check_target(cls.kind, str(args[0] if args else kwargs.get("target", "")), cls.targets)
        return super().__new__(cls)

    def __init__(
        self, target: str, capabilities: Capabilities, version: str = "", parts: Iterable[object] = ()
    ) -> None:
        self.target = target
        self.handlers = operation_methods(capabilities.operations, (self, *parts))
        self._capabilities = capabilities
        self._version = version

    def describe(self) -> dict[str, Any]:
        return {"name": self.target or self.kind, "version": self._version, "language": "python"}

    def capabilities(self) -> Capabilities:
        return self._capabilities

    def skip_reason(self, operation: str, inputs: Mapping[str, Any]) -> Optional[str]:
        """Why this adapter declines one case it otherwise supports (None: it runs)."""
        return None

    def is_coarse_rejection(self, exc: BaseException) -> bool:
        """Whether ``exc`` is the implementation's generic 'input rejected' signal."""
        return False

    def call(self, operation: str, inputs: dict[str, Any]) -> Reply:
        handler = self.handlers.get(operation)
        if handler is None:
            return Reply(Status.SKIPPED, message=f"{self.kind} does not provide {operation}")
        reason = self.skip_reason(operation, inputs)
        if reason:  # the adapter's rule, not the implementation's choice (grading counts only the latter)
            return Reply(Status.SKIPPED, message=reason, decided_by="glue")
        return call_python(operation, handler, coarse=self.is_coarse_rejection, **inputs)


def operation_methods(operations: Iterable[str], providers: Iterable[object]) -> dict[str, Handler]:
    """Each operation's callable of the same name, from the first provider that has one; TypeError when none has
    (an adapter that declares an operation it does not compute is a bug in the adapter)."""
    providers = tuple(providers)
    found: dict[str, Handler] = {}
    for operation in sorted(operations):
        method = next((m for p in providers if callable(m := getattr(p, operation, None))), None)
        if method is None:
            raise TypeError(f"{type(providers[0]).__name__} declares {operation} but has no method of that name")
        found[operation] = method
    return found


def check_target(kind: str, target: str, targets: tuple[str, ...]) -> None:
    """The "takes no target" rule: ImplementationError (one line, exit 2) for a target not in ``targets``."""
    if target in targets:
        return
    named = [t for t in targets if t]
    uses = ([f"--impl {kind}"] if "" in targets else []) + [f"--impl {kind}:{t}" for t in named]
    takes = "no target" + "".join(f" or {t!r}" for t in named) if "" in targets else "one of " + ", ".join(named)
    raise ImplementationError(f"the {kind} adapter takes {takes} (got {target!r}); use {' or '.join(uses)}")


def module_version(module: Any) -> str:
    version = getattr(module, "__version__", "")
    return version if isinstance(version, str) else str(version)


def layer_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """A fixture's layer config as constructor keywords: only the keys given, ``'none'`` as None.

    Omitted keys are left to the implementation's own defaults (EMB-LAY-1 checks them).
    """
    kwargs = dict(config)
    if kwargs.get("pos_encoding") == "none":
        kwargs["pos_encoding"] = None
    return kwargs
