"""One mistake, said once: a student's scale by D is one entry in one wording (its measured factor and the catalogue
mistake say the same thing), and a bag layer that copies the lookup's negative-id mistake is that mistake, not a
second one."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import ROOT, assert_exit, run_reported

PACKAGE = ROOT / "examples" / "tinytorch_student" / "tinytorch"


def _student(tmp_path: Path, old: str, new: str) -> str:
    """The --impl of the example student's package with ``old`` replaced by ``new`` in module 11."""
    shutil.copytree(PACKAGE, tmp_path / "tinytorch")
    module = tmp_path / "tinytorch" / "core" / "embeddings.py"
    text = module.read_text(encoding="utf-8")
    assert old in text, f"the example module changed: {old!r} is gone"
    module.write_text(text.replace(old, new), encoding="utf-8")
    return f"tinytorch:{module}"


def test_a_scale_by_d_is_one_mistake_in_one_wording(tmp_path):
    done, report = run_reported(
        tmp_path, _student(tmp_path, "x = x * math.sqrt(self.embed_dim)", "x = x * self.embed_dim")
    )
    assert_exit(done, 1)
    verdict = report["verdict"]
    (mistake,) = verdict["mistakes"]
    assert mistake["title"] == "scales the tokens by D instead of sqrt(D)", mistake["title"]
    assert len(mistake["cases"]) == verdict["failures"] > 20
    assert any(".backward." in case for case in mistake["cases"])  # the gradient's factor, said in the same words


def test_a_bag_layers_copy_of_the_lookups_mistake_is_that_mistake(tmp_path):
    unchecked_negatives = "if ids.size and ids.max() >= vocab_size:"
    checked = "if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):"
    done, report = run_reported(tmp_path, _student(tmp_path, checked, unchecked_negatives))
    assert_exit(done, 1)
    verdict = report["verdict"]
    (mistake,) = verdict["mistakes"]
    assert mistake["id"] == "fwd.negative_wraps" and any(case.startswith("bag.") for case in mistake["cases"])
    assert len(mistake["title"].split("; ")) == 2 and "wraps a negative id" not in mistake["title"]  # fwd, bwd
