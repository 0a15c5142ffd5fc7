"""The example TinyTorch student module, except that its backward never returns when an id repeats (the
shape of the module that cost 13.2 minutes in issue 9): every other part of it is the student's."""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

from tinytorch.core import embeddings as _student  # noqa: E402
from tinytorch.core.embeddings import *  # noqa: E402,F401,F403  (the module the adapter inspects)
from tinytorch.core.tensor import Tensor  # noqa: E402,F401

_backward = _student.EmbeddingFunction.backward


def _hangs_on_repeats(self, grad_output):
    ids = np.asarray(self.ids).reshape(-1)
    if len(np.unique(ids)) < len(ids):
        while True:
            pass
    return _backward(self, grad_output)


_student.EmbeddingFunction.backward = _hangs_on_repeats
