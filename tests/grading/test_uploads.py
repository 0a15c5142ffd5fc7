"""Uploads as students make them (zips, a module with helpers, a notebook beside its export) graded by the
upload rule, saying which file was graded; and a TA's setup mistake failing loudly before any student is charged."""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402

HELPED = (
    "\nfrom .embedding_helpers import CHECKED\nimport embedding_helpers\nassert CHECKED and embedding_helpers.CHECKED\n"
)


def rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as handle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                handle.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


@pytest.fixture(scope="module")
def uploads(tmp_path_factory):
    """A class of uploads graded once: (submissions folder, output folder, gradebook rows)."""
    folder, staging = tmp_path_factory.mktemp("uploads"), tmp_path_factory.mktemp("staging")
    jack = staging / "jack"
    jack.mkdir()
    samples.write(jack, "embeddings", "module")
    zip_folder(jack, folder / "jack.zip", prefix="hw11/")  # a zip of the folder, as the OS makes it
    kim = folder / "kim"
    kim.mkdir()
    (samples.write(kim, "embeddings", "module")).write_text(samples.module_text() + HELPED, encoding="utf-8")
    (kim / "embedding_helpers.py").write_text("CHECKED = True\n", encoding="utf-8")
    leo = folder / "leo"
    leo.mkdir()
    samples.write(leo, "11_embeddings", "ipynb")
    samples.write(leo, "embeddings", "module", "overwrite")  # a stale export beside the notebook: not graded
    pkg = staging / "max"
    samples.write(pkg, "", "package")
    zip_folder(pkg, folder / "max.zip")
    with zipfile.ZipFile(folder / "mia.zip", "w") as handle:
        handle.writestr("embeddings.py", samples.module_text())
        handle.writestr("../../escaped.py", "print('out')\n")
    nina = folder / "nina"
    nina.mkdir()
    samples.write(nina, "part1", "module")
    samples.write(nina, "part2", "module")
    out = tmp_path_factory.mktemp("out")
    roster = staging / "roster.csv"
    roster.write_text(
        "Submission,SID,Email,Student\njack,1001,jack@uni.edu,Jack Ode\nkim,1002,kim@uni.edu,Kim Lee\n"
        "kim,1003,kai@uni.edu,Kai Lee\nzoe,1004,zoe@uni.edu,Zoe Park\nmia,=1+1,mia@uni.edu,Mia Roe\n",
        encoding="utf-8",
    )
    code = main(
        ["grade", str(folder), "--out", str(out), "--jobs", "2", "--run-timeout", "60", "--roster", str(roster)]
    )
    assert code == 0
    return folder, out, rows(out)


def test_a_zip_and_a_module_with_its_helper_get_full_marks_saying_what_was_graded(uploads):
    _, _, book = uploads
    assert book["jack"]["score"] == "100", book["jack"]
    assert book["jack"]["graded"] == "graded hw11/embeddings.py in jack.zip (the module named embeddings.py)"
    assert book["kim"]["score"] == "100", book["kim"]
    assert (
        book["kim"]["graded"] == "graded embeddings.py (the module named embeddings.py); helpers: embedding_helpers.py"
    )
    assert book["max"]["score"] == "100" and book["max"]["kind"] == "package"


def test_check_scores_a_zip_importing_its_own_helper_as_grade_does(uploads, tmp_path):
    folder, _, book = uploads
    archive = zip_folder(folder / "kim", tmp_path / "kim.zip")  # its module imports the helper it holds
    (tmp_path / "embedding_helpers.py").write_text("CHECKED = False\n", encoding="utf-8")  # not the zip's own
    import embconf

    checked = embconf.check(str(archive))
    assert checked.problem == "" and f"{checked.score.total:g}" == book["kim"]["score"] == "100", checked.problem


def test_a_notebook_is_graded_over_the_py_beside_it(uploads):
    _, out, book = uploads
    assert book["leo"]["score"] == "100", book["leo"]
    assert book["leo"]["graded"] == (
        "graded 11_embeddings.ipynb (the notebook exporting core.embeddings; embeddings.py beside it is not graded)"
    )
    assert "graded 11_embeddings.ipynb" in (out / "feedback" / "leo.md").read_text(encoding="utf-8")


def test_a_zip_reaching_outside_its_folder_is_refused_and_writes_nothing_outside(uploads):
    folder, out, book = uploads
    assert book["mia"]["score"] == "0"
    assert book["mia"]["reason"] == "zip refused: member '../../escaped.py' points outside its folder ('..')"
    for root in (folder, out, folder.parent, out.parent):
        assert not (root / "escaped.py").exists()
    assert not (out / ".work").exists()  # the unpacked uploads are removed


def test_several_files_and_no_rule_matching_is_a_reason_naming_them(uploads):
    _, _, book = uploads
    assert book["nina"]["score"] == "0"
    assert book["nina"]["reason"].startswith("2 .py/.ipynb files (part1.py, part2.py) and none is graded by the rule")


def test_module_name_chooses_the_graded_file(tmp_path, capsys):
    submission = tmp_path / "submission"
    submission.mkdir()
    samples.write(submission, "part1", "module", "overwrite")
    samples.write(submission, "part2", "module")
    results = tmp_path / "results.json"
    args = ["gradescope", "--submission", str(submission), "--results", str(results), "--run-timeout", "60"]
    assert main([*args, "--module-name", "part2.py"]) == 0
    assert json.loads(results.read_text(encoding="utf-8"))["score"] == 100
    assert main([*args, "--module-name", "../x.py"]) == 2
    assert "--module-name" in capsys.readouterr().err


@pytest.fixture
def installed_without_example(monkeypatch):
    """As installed from a wheel: no example student to fall back on."""
    import embconf.grading.command as command

    monkeypatch.setattr(command, "default_base", lambda: None)


def test_gradescope_without_a_base_exits_2_and_charges_nobody(tmp_path, capsys, installed_without_example):
    submission = tmp_path / "submission"
    submission.mkdir()
    samples.write(submission, "embeddings", "module")
    results = tmp_path / "results" / "results.json"
    assert main(["gradescope", "--submission", str(submission), "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "give --base PATH" in err, err
    assert not results.exists()


def test_grade_without_a_base_exits_2_before_anything_runs(tmp_path, capsys, installed_without_example):
    folder = tmp_path / "subs"
    folder.mkdir()
    samples.write(folder, "alice", "package")  # needs no base
    samples.write(folder, "bob", "module")
    assert main(["grade", str(folder), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "embconf: 1 module or notebook submission(s) (bob) are graded on a base package, and there is none: "
        "give --base PATH (a folder holding tinytorch/core)"
    )
    assert not (tmp_path / "out" / "gradebook.csv").exists()


def test_gradescope_with_a_bad_rubric_exits_2_without_results(tmp_path, capsys):
    submission = tmp_path / "submission"
    submission.mkdir()
    samples.write(submission, "embeddings", "module")
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text("rubric_format: 1\nitems: []\n", encoding="utf-8")
    results = tmp_path / "results.json"
    code = main(["gradescope", "--submission", str(submission), "--results", str(results), "--rubric", str(rubric)])
    assert code == 2 and not results.exists()
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_submission_exits_2_without_results(tmp_path, capsys):
    submission = tmp_path / "submission"
    submission.mkdir()
    samples.write(submission, "embeddings", "module")
    submission.chmod(0)
    results = tmp_path / "results.json"
    try:
        assert main(["gradescope", "--submission", str(submission), "--results", str(results)]) == 2
    finally:
        submission.chmod(stat.S_IRWXU)
    assert "cannot read" in capsys.readouterr().err and not results.exists()


def test_the_course_staff_guide_states_the_zip_bounds_the_code_applies():
    from embconf.untrusted.archive import ArchiveLimits

    guide = (Path(__file__).resolve().parents[2] / "docs" / "autograder.md").read_text(encoding="utf-8")
    limits = ArchiveLimits()
    stated = f"more than {limits.members} members, more than {limits.bytes // 2**20} MB unpacked\n  or more than {limits.ratio:g} times"
    assert stated in guide


def test_the_roster_puts_ids_and_emails_in_the_gradebook_and_writes_grades_csv(uploads):
    _, out, book = uploads
    assert (book["jack"]["sid"], book["jack"]["email"], book["jack"]["student"]) == ("1001", "jack@uni.edu", "Jack Ode")
    assert book["kim"]["sid"] == "1002; 1003" and book["nina"]["sid"] == ""  # a group; a submission not on the roster
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        grades = list(csv.DictReader(handle))
    assert [(g["sid"], g["score"], g["reason"]) for g in grades] == [
        ("1001", "100", ""),
        ("1002", "100", ""),
        ("1003", "100", ""),
        ("'=1+1", "0", "zip refused: member '../../escaped.py' points outside its folder ('..')"),
        ("1004", "", "no submission"),
    ]


def test_gradescope_submission_metadata_is_a_roster_and_a_bad_roster_is_one_line(tmp_path):
    from embconf.grading.roster import RosterError, Student, load_roster

    metadata = tmp_path / "submission_metadata.yml"
    metadata.write_text(
        "submission_101:\n  :submitters:\n  - :name: Ann Bee\n    :sid: '7'\n    :email: ann@uni.edu\n"
        "  - :name: Bo Cee\n    :sid: '8'\n    :email: bo@uni.edu\n",
        encoding="utf-8",
    )
    assert load_roster(metadata) == {
        "submission_101": [Student("Ann Bee", "7", "ann@uni.edu"), Student("Bo Cee", "8", "bo@uni.edu")]
    }
    bad = tmp_path / "roster.csv"
    bad.write_text("sid,email\n1,a@b\n", encoding="utf-8")
    with pytest.raises(RosterError, match="no 'submission' \\(or 'name'\\) column"):
        load_roster(bad)
    with pytest.raises(RosterError, match="no such file"):
        load_roster(tmp_path / "missing.csv")
