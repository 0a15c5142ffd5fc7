"""What a student reads of ``embconf.check``: its signature in ``help``, a call with nothing to check, and a repr
that ends on a whole word."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import embconf
from embconf.grading import check as grading_check


def test_help_shows_the_parameters_check_takes():
    assert inspect.signature(embconf.check) == inspect.signature(grading_check.check)
    assert "target" in inspect.signature(embconf.check).parameters


def test_importing_embconf_leaves_grading_unloaded():
    probe = "import sys, embconf; print(any(m.startswith('embconf.grading') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr[-2000:]


def test_check_with_nothing_importable_says_what_to_give(tmp_path: Path):
    probe = "import embconf; r = embconf.check(); print(r.problem); print(repr(r))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    problem, shown = done.stdout.splitlines()[:2]
    assert "no tinytorch package is importable here" in problem and "embconf.check('embeddings.py')" in problem
    assert "hand in" not in problem and "importlib" not in problem
    # its repr is one line that ends on a whole word of it
    assert len(problem) > 200 and shown.endswith(" ...>") and len(shown) < 240
    kept = shown[len("<embconf.check 0/100: ") : -len(" ...>")]
    assert problem.startswith(kept) and problem[len(kept)] in " ,;:("
