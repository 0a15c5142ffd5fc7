"""results.json never carries the text of the autograder's own files: a submission that reads one and raises its
text gets it back withheld; its own lines (a traceback through its code) stay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.grading.withheld import WITHHELD, withheld  # noqa: E402

SECRET = "HIDDEN_TEST_VALUE = 'the answer the staff keep to themselves'"


def test_a_submission_raising_an_autograder_files_text_gets_it_withheld(tmp_path):
    course = samples.write(tmp_path, "course", "package")
    notes = course / "tinytorch" / "core" / "staff_notes.py"
    notes.write_text(SECRET + "\n", encoding="utf-8")
    source = tmp_path / "source"  # what run_autograder gives as --withhold: the autograder's own tree
    source.mkdir()
    (source / "hidden_tests.txt").write_text("a hidden expectation nobody may read\n", encoding="utf-8")
    submission = tmp_path / "submission"
    submission.mkdir()
    stolen = f"open({str(notes)!r}).read() + open({str(source / 'hidden_tests.txt')!r}).read()"
    (submission / "embeddings.py").write_text(f"raise RuntimeError({stolen})\n", encoding="utf-8")
    results = tmp_path / "results.json"
    args = ["gradescope", "--submission", str(submission), "--results", str(results), "--base", str(course)]
    assert main([*args, "--withhold", str(source), "--run-timeout", "60"]) == 0
    text = results.read_text(encoding="utf-8")
    assert "the answer the staff keep" not in text and "a hidden expectation" not in text
    assert WITHHELD in json.loads(text)["output"]


def test_the_submissions_own_lines_are_not_withheld(tmp_path):
    private = tmp_path / "base.py"
    private.write_text("import numpy as np\nsecret_line_of_the_base = 42\n", encoding="utf-8")
    own = tmp_path / "mine.py"
    own.write_text("import numpy as np\n", encoding="utf-8")
    hidden = withheld([private], [own])
    message = "import numpy as np\nsecret_line_of_the_base = 42"
    assert hidden.redact({"a": [message]}) == {"a": [f"import numpy as np\n{WITHHELD}"]}
