"""What every student module in this corpus starts from: the TinyTorch package (its float32 Tensor and
autograd) and the correct module-11 solution, which each student file changes in exactly one place.

The corpus measures the symptom diagnosis on mistakes the mutant catalogue does not list; keep it out
of the catalogue's tuning (its mistakes must not be added to conformance/mutants/).
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
