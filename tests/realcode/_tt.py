"""What the ``tinytorch:`` modules of this corpus build on: the example TinyTorch package (its float32 Tensor and
autograd) and its correct module-11 solution, whose right parts a module reuses while it writes its own wrong ones.

Modelled on tests/students/_tinytorch.py, kept separate so that this corpus never changes the student corpus.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "tinytorch_student"))

import tinytorch.core.autograd  # noqa: E402,F401  (importing it enables autograd)
from tinytorch.core import embeddings as solution  # noqa: E402
from tinytorch.core.autograd import Function  # noqa: E402
from tinytorch.core.tensor import Tensor  # noqa: E402

__all__ = ["Function", "Tensor", "solution"]
