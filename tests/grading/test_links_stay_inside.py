"""No link in a submission is followed out of it: a module, a notebook, a module 11 or an upload's file that is a
link to a file elsewhere on the grading machine is never graded with that file's code (one line says so), a link to
a folder elsewhere is not copied in, a correct package holding a link loop keeps its full grade, and the size limit
counts what is really copied. Zips hold no links at all (a link member refuses the zip)."""

from __future__ import annotations

import os
import stat
import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402
from embconf.grading.withheld import WITHHELD, withheld  # noqa: E402

ELSEWHERE = "elsewhere on the grading machine"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class of submissions holding links, graded once: (output folder, gradebook rows)."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")  # the grading machine's files: a solution, a big folder
    solution = samples.write(elsewhere, "solution", "module")
    notebook = samples.write(elsewhere, "solution_nb", "ipynb")
    big = elsewhere / "datasets"
    big.mkdir()
    with open(big / "blob.bin", "wb") as blob:
        blob.truncate(60 * 2**20)  # sparse: 60 MB to copy, nothing on disk
    folder = tmp_path_factory.mktemp("class")
    samples.write(folder, "ok", "module")
    (folder / "linked.py").symlink_to(solution)
    (folder / "linked_nb.ipynb").symlink_to(notebook)
    inner = samples.write(folder, "inner", "package")
    (inner / "tinytorch" / "core" / "embeddings.py").unlink()
    (inner / "tinytorch" / "core" / "embeddings.py").symlink_to(solution)
    upload = folder / "upload"
    upload.mkdir()
    (upload / "embeddings.py").symlink_to(solution)
    (samples.write(folder, "bigdata", "package") / "tinytorch" / "datasets").symlink_to(big)
    (samples.write(folder, "looped", "package") / "tinytorch" / "loop").symlink_to("..")
    os.mkfifo(samples.write(folder, "piped", "package") / "tinytorch" / "fifo")  # a copy would wait on it forever
    copies = samples.write(folder, "copies", "package") / "tinytorch"  # 3 copies of 30 MB through inside links
    (copies / "data").mkdir()
    with open(copies / "data" / "blob.bin", "wb") as blob:
        blob.truncate(30 * 2**20)
    for name in ("again", "and_again"):
        (copies / name).symlink_to("data")
    with zipfile.ZipFile(folder / "zipped.zip", "w") as archive:
        archive.writestr("embeddings.py", samples.module_text())
        link = zipfile.ZipInfo("helpers.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, str(solution))
    out = tmp_path_factory.mktemp("out")
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2"]) == 0
    return out, samples.gradebook(out)


def test_a_link_to_code_elsewhere_is_never_graded_and_says_so_in_one_line(graded):
    out, rows = graded
    assert rows["ok"]["score"] == "100"
    for name, said in [
        ("linked", f"a link to a file {ELSEWHERE}"),
        ("linked_nb", f"a link to a file {ELSEWHERE}"),
        ("inner", f"module 11 is a link to a file {ELSEWHERE}"),
        ("upload", "ignored a link out of the submission"),
    ]:
        assert rows[name]["score"] == "0" and said in rows[name]["reason"], rows[name]
        assert "\n" not in rows[name]["reason"]
        assert said in (out / "feedback" / f"{name}.md").read_text(encoding="utf-8")


def test_a_link_to_a_folder_elsewhere_is_left_out_and_named(graded):
    _, rows = graded
    assert rows["bigdata"]["score"] == "100", rows["bigdata"]
    assert rows["bigdata"]["note"] == "ignored a link out of the submission (never followed): tinytorch/datasets"


def test_a_correct_package_holding_a_link_loop_keeps_its_full_grade(graded):
    _, rows = graded
    assert rows["looped"]["score"] == "100", rows["looped"]
    assert "tinytorch/loop" in rows["looped"]["note"] and "loop" in rows["looped"]["note"]


def test_a_fifo_in_a_package_is_left_out(graded):
    _, rows = graded
    assert rows["piped"]["score"] == "100", rows["piped"]
    assert (
        rows["piped"]["note"]
        == "ignored a file that is no regular file or folder (a FIFO, a device, a socket): tinytorch/fifo"
    )


def test_the_size_limit_counts_what_links_inside_would_copy(graded):
    _, rows = graded
    assert rows["copies"]["score"] == "0" and rows["copies"]["reason"].startswith("too large: "), rows["copies"]


def test_a_zip_holding_a_link_is_refused_naming_it(graded):
    _, rows = graded
    assert rows["zipped"]["reason"] == "zip refused: member 'helpers.py' is a symbolic link"


def test_a_link_to_a_withheld_file_makes_none_of_its_lines_the_submissions_own(tmp_path):
    private, own = tmp_path / "source", tmp_path / "submission"
    private.mkdir()
    own.mkdir()
    (private / "solution.py").write_text("answer = compute_the_solution(weight, ids)\n", encoding="utf-8")
    (own / "embeddings.py").symlink_to(private / "solution.py")
    secret = withheld([private], [own])
    assert secret.redact("answer = compute_the_solution(weight, ids)") == WITHHELD
