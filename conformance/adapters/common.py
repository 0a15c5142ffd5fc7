"""What the in-process adapters (functions, tinytorch, torch) share.

:class:`InProcessAdapter` dispatches each operation to a Python handler through
:func:`~embconf.adapters.base.call_python`; subclasses supply the handlers and
capabilities, and may decline single cases (:meth:`skip_reason`) or accept a
generic exception type as a coarse rejection (:meth:`is_coarse_rejection`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

import numpy as np

from embconf.adapters.base import AdapterBase, call_python
from embconf.model.contract import Capabilities, Reply, Status

Handler = Callable[..., Any]


class InProcessAdapter(AdapterBase):
    """An adapter whose operations are Python callables in this process."""

    def __init__(
        self, target: str, handlers: Mapping[str, Handler], capabilities: Capabilities, version: str = ""
    ) -> None:
        self.target = target
        self.handlers = dict(handlers)
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


def as_numpy(value: Any) -> Any:
    """An ndarray as is; a tensor-like object's ``.data`` array; anything else unchanged (to be judged)."""
    if value is None or isinstance(value, np.ndarray):
        return value
    data = getattr(value, "data", None)
    return data if isinstance(data, np.ndarray) else value
