"""Catalogue mistakes composed with the spec's optional inputs (``padding_idx``, ``scale_grad_by_freq``).

A mistake written for the plain lookup takes no options. So that it can be replayed on every case, including
those that carry an option, :func:`with_options` gives it the operation's full signature: the options are
checked as the reference checks them, the mistake computes its result, and the backward applies the options to
its gradient as the spec does (each row divided by its id's count, the padding row zeroed). The mistake stays
the only thing wrong.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from embconf.model.vocabulary import optional_inputs
from embconf.reference.lookup import validate_ids
from embconf.reference.options import apply_options, check_flag, resolve_padding_idx

Operation = Callable[..., Any]


def with_options(operation: str, fn: Operation) -> Operation:
    """``fn`` itself when it takes every optional input of ``operation``, else ``fn`` composed with them."""
    options = optional_inputs(operation)
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if (
        not options
        or all(name in parameters for name in options)
        or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    ):
        return fn
    if operation == "embedding_forward":
        return _forward(fn)
    if operation == "embedding_backward":
        return _backward(fn)
    return fn


def _forward(fn: Operation) -> Operation:
    def composed(weight: np.ndarray, ids: np.ndarray, padding_idx: Any = None, scale_grad_by_freq: bool = False) -> Any:
        resolve_padding_idx(padding_idx, weight.shape[0])  # neither option changes the forward's rows
        check_flag("scale_grad_by_freq", scale_grad_by_freq)
        return fn(weight, ids)

    return composed


def _backward(fn: Operation) -> Operation:
    def composed(
        weight: np.ndarray,
        ids: np.ndarray,
        grad_output: np.ndarray,
        padding_idx: Any = None,
        scale_grad_by_freq: bool = False,
    ) -> Any:
        padding_row = resolve_padding_idx(padding_idx, weight.shape[0])
        by_freq = check_flag("scale_grad_by_freq", scale_grad_by_freq)
        grad = fn(weight, ids, grad_output)
        if (padding_row is None and not by_freq) or not isinstance(grad, np.ndarray) or grad.shape != weight.shape:
            return grad
        try:
            index = validate_ids(ids, weight.shape[0])
        except Exception:  # a mistake about the ids themselves: the rows it wrote to are the ids taken modulo V
            index = np.mod(np.asarray(ids).astype(np.int64), weight.shape[0])
        return apply_options(grad.astype(np.float64), index, padding_row, by_freq).astype(grad.dtype)

    return composed
