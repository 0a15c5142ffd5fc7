"""Declining does not buy points: a case the submission declines (``embconf.Decline``) inside what the rubric grades
scores as a failure of that case, in ``grade``, ``gradescope`` and ``check()`` alike (one scoring); a rubric may
list the declines it allows."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

import embconf  # noqa: E402
from embconf.cli import main  # noqa: E402

ACCUMULATE = "        np.add.at(grad_weight, self.ids, grad_output)  # repeated ids accumulate"
DECLINING_OVERWRITE = """        if np.unique(self.ids).size < self.ids.size:
            import embconf
            raise embconf.Decline("repeated ids: not supported")
        grad_weight[self.ids] = grad_output"""


def _declining(folder: Path) -> Path:
    text = samples.module_text()
    assert ACCUMULATE in text
    path = folder / "declining.py"
    path.write_text(text.replace(ACCUMULATE, DECLINING_OVERWRITE), encoding="utf-8")
    return path


def test_a_decline_the_rubric_requires_scores_as_a_failure(tmp_path):
    result = embconf.check(_declining(tmp_path))
    assert result.score.total < 100 and not result.passed, repr(result)
    backward = next(s for s in result.score.items if s.item.id == "backward")
    assert backward.lost > 0 and all(case.get("declined") for case in backward.failed)
    assert result.declined() and "declined" in repr(result)
    assert "Declined: " in str(result) and "counted as failed" in str(result)


def test_grade_scores_a_decline_as_check_does_and_says_why(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    _declining(folder)
    out = tmp_path / "out"
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "1"]) == 0
    feedback = (out / "feedback" / "declining.md").read_text(encoding="utf-8")
    assert "declines (embconf.Decline) inputs the rubric requires" in feedback
    assert "declined cases count as failed" in feedback and "# declining: 100 / 100" not in feedback


def test_a_rubric_may_allow_declines(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(
        "rubric_format: 1\nallowed_declines: ['EMB-BWD-*']\nitems:\n"
        "  - id: backward\n    points: 20\n    requirements: ['EMB-BWD-*']\n    operations: [embedding_backward]\n",
        encoding="utf-8",
    )
    result = embconf.check(_declining(tmp_path), rubric=rubric)
    assert result.score.total == 20 and not result.declined(), repr(result)
