"""Catching an implementation that cheats or has side effects: it modifies its inputs, returns views of
them, or answers differently when asked twice.

:class:`GuardedAdapter` hands the implementation copies of the inputs and, after the call, compares
the copies with the originals (bitwise, so NaN payloads and -0.0 count) and checks that no output
array shares memory with an input. What it finds goes into ``Reply.violations``, which the runner
turns into a ``fail``: the call answered, but broke the spec's contract. It runs where the
implementation runs (inside the isolation worker), since a view does not survive pickling; the runner
compares input arrays it shared with the worker itself (:mod:`embconf.isolation.shared`), so that code
which patches this module cannot hide a modified input.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from typing import Any, NamedTuple, Optional

import numpy as np

from embconf.adapters.base import WrappingAdapter
from embconf.model.contract import NO_INSTANCE, Adapter, Reply, call_on_instance

# (operation, output, input) pairs where returning the input's own storage is allowed: grad_x equals
# grad_output exactly (EMB-POS-3), and autograd frameworks pass an identity gradient through as is.
MAY_ALIAS = frozenset({("learned_positions_backward", "grad_x", "grad_output")})
SHARE_WORK = 10**6  # bound on np.shares_memory's effort; undecided overlaps count as shared


class ProcessState(NamedTuple):
    """The process-wide state an import may set (no rule forbids it) that the runner's own work depends on."""

    cwd: str
    errstate: Mapping[str, Any]  # np.geterr()

    @classmethod
    def now(cls) -> "ProcessState":
        try:
            cwd = os.getcwd()
        except OSError:  # the directory was removed
            cwd = ""
        return cls(cwd, np.geterr())

    def enter(self) -> None:
        """Make this the process's state again."""
        if self.cwd and self.cwd != ProcessState.now().cwd:
            os.chdir(self.cwd)
        np.seterr(**self.errstate)


class GuardedAdapter(WrappingAdapter):
    """Wraps an adapter: the implementation gets copies, and what it does to them is checked. Loaded into the
    runner's own process (``--in-process``), where its import changed the process's state (``imported``), each
    call runs in the state its import left and the runner's own state (``runner``) is put back after it."""

    def __init__(self, inner: Adapter, states: Optional[tuple[ProcessState, ProcessState]] = None) -> None:
        super().__init__(inner)
        self.states = states  # (the runner's, the import's)

    def call_on(self, instance: int, operation: str, inputs: dict[str, Any]) -> Reply:
        return self.call_sharing(operation, inputs, {}, instance)

    def call_sharing(
        self, operation: str, inputs: dict[str, Any], shared: dict[str, np.ndarray], instance: int = NO_INSTANCE
    ) -> Reply:
        """The call (on ``instance``) on copies of ``inputs`` and on the ``shared`` arrays as they are: memory the
        runner shares with the worker and compares itself after the call (:mod:`embconf.isolation.shared`), so
        that code which patches this module cannot hide a change to them."""
        handed = {**{name: copy.deepcopy(value) for name, value in inputs.items()}, **shared}
        if self.states is None:
            reply = call_on_instance(self.inner, instance, operation, handed)
        else:
            runner, imported = self.states
            imported.enter()
            try:
                reply = call_on_instance(self.inner, instance, operation, handed)
            finally:
                runner.enter()
        reply.violations = [
            *reply.violations,
            *modified_inputs(inputs, handed),
            *aliased_outputs(operation, reply.outputs, handed),
        ]
        return reply


def modified_inputs(originals: Mapping[str, Any], handed: Mapping[str, Any]) -> list[str]:
    """One message per input whose handed copy no longer equals the original."""
    found = []
    for name, original in originals.items():
        change = describe_change(original, handed[name])
        if change:
            found.append(f"the implementation modified its input '{name}' ({change}); inputs must be left untouched")
    return found


def describe_change(before: Any, after: Any) -> str:
    """How ``after`` differs from ``before`` ('' when identical, bit for bit)."""
    if isinstance(before, np.ndarray):
        if not isinstance(after, np.ndarray) or after.dtype != before.dtype:
            return "its type or dtype changed"
        if after.shape != before.shape:
            return f"its shape changed from {list(before.shape)} to {list(after.shape)}"
        changed = int(np.count_nonzero(_bits(before) != _bits(after)))
        return f"{changed} of {before.size} elements changed" if changed else ""
    if isinstance(before, dict):
        if not isinstance(after, dict) or set(after) != set(before):
            return "its keys changed"
        return next(
            (f"{key!r}: {change}" for key in before if (change := describe_change(before[key], after[key]))), ""
        )
    return "" if _same_scalar(before, after) else f"{before!r} became {after!r}"


def _bits(array: np.ndarray) -> np.ndarray:
    """The elements as unsigned integers of the same width: equal exactly when bitwise equal."""
    if (array.dtype.kind not in "biuf" and array.dtype.name != "bfloat16") or array.dtype.itemsize not in (1, 2, 4, 8):
        return array
    return np.ascontiguousarray(array).view(f"u{array.dtype.itemsize}")


def _same_scalar(before: Any, after: Any) -> bool:
    if type(before) is not type(after):
        return False
    return before == after or (before != before and after != after)  # NaN equals NaN here


def aliased_outputs(operation: str, outputs: Mapping[str, Any], handed: Mapping[str, Any]) -> list[str]:
    """One message per output array that shares memory with an input array (a view, not a new array)."""
    found = []
    for out_name, value in outputs.items():
        if not isinstance(value, np.ndarray):
            continue
        for in_name, given in handed.items():
            if (
                isinstance(given, np.ndarray)
                and (operation, out_name, in_name) not in MAY_ALIAS
                and shares_memory(value, given)
            ):
                found.append(f"output '{out_name}' is a view of input '{in_name}'; the spec requires a new array")
    return found


def shares_memory(a: np.ndarray, b: np.ndarray) -> bool:
    if not np.may_share_memory(a, b):
        return False
    try:
        return bool(np.shares_memory(a, b, max_work=SHARE_WORK))  # type: ignore[arg-type]  # numpy's stub allows only -1 and 0; any bound works
    except Exception:  # numpy's TooHardError: the overlap is too costly to decide, so assume the worst
        return True
