"""Where a difference's cases sit among the run's cases: said with the case property that separates them (the
float16 cases of an operation, and no other) only when it separates exactly; a float32 case showing the same
difference leaves it unsaid."""

from __future__ import annotations

from pathlib import Path

from helpers import assert_exit, run_reported

COLUMN_ZEROED = """
import numpy as np
from embconf.reference.lookup import embedding_forward as _forward

EMBCONF_FEATURES = ["float16", "bfloat16", "float64"]


def embedding_forward(weight, ids):
    out = _forward(weight, ids)
    if {condition}:
        out = out.copy()
        out[..., 0] = 0
    return out
"""
SELECT = ["lookup.forward.*", "half.*.forward.*"]
SAID = "of the embedding_forward cases, exactly those where the inputs are float16 show it"


def _impl(tmp_path: Path, condition: str) -> str:
    """The --impl of a lookup that zeroes column 0 of its output where ``condition`` holds."""
    module = tmp_path / "column_zeroed.py"
    module.write_text(COLUMN_ZEROED.replace("{condition}", condition), encoding="utf-8")
    return f"functions:{module}"


def test_a_difference_only_float16_cases_show_is_said_of_the_float16_cases(tmp_path: Path) -> None:
    done, report = run_reported(tmp_path, _impl(tmp_path, "weight.dtype == np.float16"), select=SELECT)
    assert_exit(done, 1)
    said = " ".join(m["title"] for m in report["verdict"]["mistakes"])
    assert SAID in said and "lies in one column" in said, said


def test_a_difference_a_float32_case_shows_too_is_not_said_of_a_dtype(tmp_path: Path) -> None:
    condition = "weight.dtype == np.float16 or weight.shape[0] == 1"  # lookup.forward.vocab_1 too
    done, report = run_reported(tmp_path, _impl(tmp_path, condition), select=SELECT)
    assert_exit(done, 1)
    said = " ".join(m["title"] for m in report["verdict"]["mistakes"])
    assert "lies in one column" in said and "exactly those where" not in said, said
