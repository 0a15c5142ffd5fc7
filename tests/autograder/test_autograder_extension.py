"""(slow) The autograder carrying a course's bag extension, run as Gradescope runs it: the zip built with the
documented extra-credit bag item grades a submission's bag layer beyond the maximum, and the installed suite holds
no bag layer a submission could import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import ROOT
from test_autograder import _prints, gradescope_tree, run_autograder

sys.path.insert(0, str(ROOT / "tests" / "grading"))
import grading_samples as samples  # noqa: E402


@pytest.mark.slow
def test_the_autograder_grades_the_bag_extension_as_extra_credit(tmp_path):
    tree, env, python = gradescope_tree(tmp_path, "--rubric", str(samples.bag_rubric(tmp_path)))
    located = _prints(python, "import embconf.grading.submissions as s; print(s.EXAMPLE_BASE)", tmp_path)
    installed = Path(located, "tinytorch", "core", "embeddings.py").read_text(encoding="utf-8")
    assert (
        "class EmbeddingBag" not in installed and "extra_credit: true" in (tree / "source" / "rubric.yaml").read_text()
    )
    (tree / "submission" / "embeddings.py").write_text(samples.module_text("bag_mean_counts_padding"), encoding="utf-8")
    results = run_autograder(tree, env, tmp_path)
    bags = next(test for test in results["tests"] if test["name"].endswith("(extra credit)"))
    assert 100 < results["score"] < 110 and 0 < bags["score"] < bags["max_score"] == 10
    assert bags["status"] == "failed" and "Not met yet: EMB-BAG-" in bags["output"]
