"""A wrong default base is the course's configuration, never a student's zero: with no ``--base``, a submission
importing from the base package a name the default base (the example student) lacks stops ``gradescope`` (exit 2,
one line naming ``--base``, no results.json) and ``grade`` (one line for the class). A misspelt name (``Tensr``) is
the student's typo, which no ``--base`` mends: it costs only that student, with its one-line reason. With a base the
course gave, the missing name stays the student's import error, in one line."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.grading.base_names import lacking  # noqa: E402

COURSE_IMPORT = "\nfrom tinytorch.core.tensor import Function\n"


def _module(folder: Path, name: str, extra: str = COURSE_IMPORT) -> Path:
    path = folder / f"{name}.py"
    path.write_text(samples.module_text() + extra, encoding="utf-8")
    return path


def test_gradescope_on_the_default_base_exits_2_naming_base(tmp_path, capsys):
    submission = tmp_path / "submission"
    submission.mkdir()
    _module(submission, "embeddings")
    results = tmp_path / "results" / "results.json"
    assert main(["gradescope", "--submission", str(submission), "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--base" in err and "Function from tinytorch.core.tensor" in err, err
    assert not results.exists()


def test_an_import_only_the_run_reveals_stops_gradescope_too(tmp_path, capsys):
    submission = tmp_path / "submission"
    submission.mkdir()
    _module(submission, "embeddings", '\nexec("from tinytorch.core.tensor import Function")\n')
    results = tmp_path / "results" / "results.json"
    args = ["gradescope", "--submission", str(submission), "--results", str(results), "--run-timeout", "60"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--base" in err and "Function" in err, err
    assert not results.exists()


def test_grade_says_it_once_for_the_class(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in ("ada", "bo", "cy"):
        _module(folder, name)
    samples.write(folder, "dee", "module")
    assert main(["grade", str(folder), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "3 submission(s) (ada, bo, cy)" in err and "--base" in err, err
    assert not (tmp_path / "out" / "gradebook.csv").exists()


def test_with_the_courses_base_a_missing_name_is_the_students_one_line(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    _module(folder, "ada")
    course = samples.write(tmp_path, "course", "package")
    out = tmp_path / "out"
    assert main(["grade", str(folder), "--out", str(out), "--base", str(course), "--jobs", "1"]) == 0
    (row,) = csv.DictReader((out / "gradebook.csv").read_text(encoding="utf-8").splitlines())
    assert row["score"] == "0" and "\n" not in row["reason"]
    assert row["reason"].startswith("does not import: ImportError: cannot import name 'Function'"), row["reason"]
    assert str(tmp_path) not in json.dumps(row)


def test_lacking_reads_absolute_relative_and_helper_imports(tmp_path):
    base = samples.EXAMPLE
    source = (
        "from tinytorch.core.tensor import Tensor, Function\nfrom .autograd import Nope\nfrom . import utils\n"
        "import tinytorch.core.missing\nfrom tinytorch.core import tensor\nfrom numpy import Whatever\n"
    )
    assert lacking(source, base, ["utils"]) == [
        "Function from tinytorch.core.tensor",
        "Nope from tinytorch.core.autograd",
        "module tinytorch.core.missing",
    ]
    # a module exported to tinytorch/text/ (issue 37's layouts) reads its relative imports from there
    relative = "from ..core.tensor import Tensor\nfrom .tensor import Tensor\n"
    assert lacking(relative, base) == []
    assert lacking(relative, base, package=("tinytorch", "text")) == ["module tinytorch.text.tensor"]


def test_grade_says_an_import_only_the_run_reveals_once_too(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name in ("ada", "bo"):
        _module(folder, name, '\nexec("from tinytorch.core.tensor import Function")\n')
    assert main(["grade", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "2 submission(s) (ada, bo)" in err and "--base" in err, err


TYPO = "\nfrom tinytorch.core.tensor import Tensr\n"


def test_a_typo_on_the_default_base_costs_only_that_student(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    _module(folder, "ada", TYPO)  # read from the source
    _module(folder, "bo", '\nexec("from tinytorch.core.tensor import Tensr")\n')  # found only when it runs
    samples.write(folder, "cy", "module")
    out = tmp_path / "out"
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "1"]) == 0
    assert "--base" not in capsys.readouterr().err
    rows = {
        row["name"]: row for row in csv.DictReader((out / "gradebook.csv").read_text(encoding="utf-8").splitlines())
    }
    assert rows["cy"]["score"] == "100"
    for name in ("ada", "bo"):
        reason = rows[name]["reason"]
        assert rows[name]["score"] == "0" and "\n" not in reason and "cannot import name 'Tensr'" in reason, reason
        assert "cannot import name 'Tensr'" in (out / "feedback" / f"{name}.md").read_text(encoding="utf-8")


def test_a_typo_on_the_default_base_is_a_zero_on_gradescope_not_a_failed_autograder(tmp_path):
    submission = tmp_path / "submission"
    submission.mkdir()
    _module(submission, "embeddings", TYPO)
    results = tmp_path / "results" / "results.json"
    assert main(["gradescope", "--submission", str(submission), "--results", str(results)]) == 0
    graded = json.loads(results.read_text(encoding="utf-8"))
    assert graded["score"] == 0 and "cannot import name 'Tensr'" in graded["output"]
