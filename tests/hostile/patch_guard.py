"""Hostile: switches off the runner's checks inside the worker when imported (the input guard and the
global-state check), then sorts 1-D ids in place in embedding_forward and changes the working directory
in embedding_backward; the values it returns are correct."""

import os

import embconf.adapters.guard
import embconf.isolation.worker
from embconf.reference import embedding_backward as _backward
from embconf.reference import embedding_forward as _forward
from embconf.reference import sinusoidal_table  # noqa: F401  (correct)


def _unchecked(self, operation, inputs, shared=None, *_instance):
    return self.inner.call(operation, {**inputs, **(shared or {})})


embconf.adapters.guard.GuardedAdapter.call = lambda self, operation, inputs: _unchecked(self, operation, inputs)
embconf.adapters.guard.GuardedAdapter.call_sharing = _unchecked
embconf.adapters.guard.modified_inputs = lambda originals, handed: []
embconf.isolation.worker.GlobalState.changes = lambda self: []


def embedding_forward(weight, ids):
    output = _forward(weight, ids)
    if ids.ndim == 1:
        ids.sort()
    return output


def embedding_backward(**inputs):
    os.chdir("/")
    return _backward(**inputs)
