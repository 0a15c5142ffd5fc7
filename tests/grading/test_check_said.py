"""What a student reads of ``embconf.check``: its signature in ``help``, a call with nothing to check, a repr
that ends on a whole word, and the bag layer a rubric leaves unchecked."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

import embconf  # noqa: E402
from embconf.grading import check as grading_check  # noqa: E402


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


def test_the_default_check_says_the_bag_layer_went_unchecked(tmp_path: Path):
    with_bags = tmp_path / "with_bags.py"
    with_bags.write_text(samples.module_text(), encoding="utf-8")
    result = embconf.check(with_bags)
    said = [line for line in str(result).splitlines() if line.startswith("Not checked: EmbeddingBag")]
    assert len(said) == 1 and "-k 'bag.*'" in said[0] and result.command in said[0], str(result)[:800]
    assert "Not checked: EmbeddingBag" in result._repr_html_()
    graded = embconf.check(with_bags, rubric=samples.bag_rubric(tmp_path))
    without = tmp_path / "without_bags.py"
    without.write_text(samples.without_bags(samples.module_text()), encoding="utf-8")
    assert "Not checked" not in str(graded) and "Not checked" not in str(embconf.check(without))
