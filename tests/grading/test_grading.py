"""embconf grade: a class folder of real submissions (correct and wrong, every form), graded once per module."""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
from pathlib import Path

import pytest
from helpers import assert_one_line_error, embconf_argv, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.cli import main  # noqa: E402

HANG = "import time\nwhile True:\n    time.sleep(0.1)\n"


def rows(out: Path) -> dict[str, dict[str, str]]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return {row["name"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """A class of 14 entries graded with two jobs: (submissions folder, output folder, console output)."""
    folder = tmp_path_factory.mktemp("submissions")
    samples.write(folder, "alice", "package")
    samples.write(folder, "bob", "module", "overwrite")
    samples.write(folder, "carol", "percent")
    samples.write(folder, "dave", "ipynb", "sin_cos_swapped")
    samples.write(folder, "erin", "module", "syntax_error")
    samples.write(folder, "fay", "percent", "syntax_error")
    samples.write(folder, "ivy", "module", "start_pos_ignored")
    samples.write(folder, "ivy", "ipynb")
    (folder / "frank.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    (folder / "notes.pdf").write_bytes(b"%PDF-1.4")
    (folder / "gina.ipynb").write_text('{"cells": [', encoding="utf-8")
    (folder / "hank.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "code", "source": "x = 1"}], "nbformat": 4}), encoding="utf-8"
    )
    (folder / "hugo.py").write_text(HANG, encoding="utf-8")
    (folder / ".DS_Store").write_bytes(b"\0")
    out = tmp_path_factory.mktemp("out")
    return folder, out


@pytest.fixture(scope="module")
def graded(klass):
    folder, out = klass
    code = main(["grade", str(folder), "--out", str(out), "--jobs", "2", "--run-timeout", "6"])
    assert code == 0
    return folder, out, rows(out)


def test_every_entry_is_in_the_gradebook_with_its_score_or_reason(graded):
    _, _, book = graded
    assert sorted(book) == [
        "alice",
        "bob",
        "carol",
        "dave",
        "erin",
        "fay",
        "frank",
        "gina",
        "hank",
        "hugo",
        "ivy.ipynb",
        "ivy.py",
        "notes",
    ]
    for correct in ("alice", "carol", "ivy.ipynb"):  # a package, a percent notebook and a Jupyter notebook, all correct
        assert book[correct]["score"] == "100", book[correct]
    assert 0 < float(book["bob"]["score"]) < 100 and "indexed assignment" in book["bob"]["top_mistake"]
    assert book["dave"]["sinusoid"] == "0" and book["dave"]["lookup"] == "15"
    assert float(book["ivy.py"]["positions"]) < 15 and "start_pos" in book["ivy.py"]["top_mistake"]
    line = samples.module_text("syntax_error").splitlines().index("def broken(:") + 1
    assert book["erin"]["reason"] == f"does not import: SyntaxError at line {line} (invalid syntax)"
    assert (
        book["fay"]["reason"] == f"does not import: SyntaxError at line {line + 1} of notebook cell 3 (invalid syntax)"
    )  # after '#| export'
    assert book["frank"]["reason"].startswith("not a submission: no tinytorch/core/embeddings.py")  # an empty zip
    assert book["notes"]["reason"].startswith("not a submission: a .pdf file")
    assert "not valid" in book["gina"]["reason"] and "JSON" in book["gina"]["reason"]
    assert book["hank"]["reason"].startswith("no exported cells")
    assert book["hugo"]["reason"] == "does not load: it did not finish loading in time"
    assert "duplicate name 'ivy'" in book["ivy.py"]["note"]
    for name in ("erin", "frank", "gina", "hank", "hugo", "notes"):
        assert book[name]["score"] == "0" and book[name]["max"] == "100"


def test_feedback_is_ordered_by_points_lost_and_names_the_mistake(graded):
    _, out, book = graded
    text = (out / "feedback" / "bob.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    lost = [float(h.rsplit("(lost ", 1)[1].rstrip(")")) for h in headings]
    assert lost == sorted(lost, reverse=True) and len(lost) >= 2
    assert headings[0].startswith("### Token lookup, backward")
    assert text.count("indexed assignment (grad[ids]") == 1 and "Row 0 is used twice" in text  # one mistake, named once
    assert text.count("Hint: use np.add.at") == 1 and "1 likely mistake, named below" in text
    assert "- The same mistake as under Token lookup, backward" in text  # where it loses points again
    page = (out / "feedback" / "bob.html").read_text(encoding="utf-8")
    assert "<h3>Token lookup, backward" in page and "<script" not in page and "<code>bob.py</code>" in page
    assert 'href="feedback/bob.html"' in (out / "report.html").read_text(encoding="utf-8")
    assert "## What passed" in text and "Token lookup, forward" in text.split("## What passed")[1]
    assert "Not graded: does not import: SyntaxError" in (out / "feedback" / "erin.md").read_text(encoding="utf-8")


def test_results_are_gradescope_results(graded):
    _, out, book = graded
    for name in book:
        results = json.loads((out / "results" / f"{name}.json").read_text(encoding="utf-8"))
        assert results["score"] == pytest.approx(sum(t["score"] for t in results["tests"]), abs=0.05)
        assert results["score"] == pytest.approx(float(book[name]["score"]))
        assert sum(t["max_score"] for t in results["tests"]) == 100
        for test in results["tests"]:
            assert set(test) >= {"name", "score", "max_score", "output", "visibility", "status"}
            assert test["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    bob = json.loads((out / "results" / "bob.json").read_text(encoding="utf-8"))
    failed = [t for t in bob["tests"] if t["status"] == "failed"]
    assert failed and "Likely mistake" in failed[0]["output"]
    assert all("Likely mistake" in t["output"] or "The same mistake as under" in t["output"] for t in failed)


def test_a_second_run_reuses_unchanged_submissions_and_force_regrades(graded, capsys):
    folder, out, book = graded
    before = (out / "records" / "alice.json").stat().st_mtime_ns
    samples.write(folder, "bob", "module")  # bob fixes his mistake
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2", "--run-timeout", "6"]) == 0
    printed = capsys.readouterr().out
    assert "12 of 13 submissions unchanged since they were graded" in printed and "bob: 100/100" in printed
    assert "grading 1 of 13 submissions, 1 at a time" in printed
    assert (out / "records" / "alice.json").stat().st_mtime_ns == before
    assert rows(out)["bob"]["score"] == "100"
    samples.write(folder, "bob", "module", "overwrite")  # as it was, for the other tests
    assert main(["grade", str(folder), "--out", str(out), "--force", "--jobs", "2", "--run-timeout", "6"]) == 0
    assert (out / "records" / "alice.json").stat().st_mtime_ns != before
    assert rows(out) == book


def test_shards_partition_the_class_and_merge_gives_the_same_gradebook(graded, tmp_path):
    folder, out, book = graded
    names = []
    for index in (1, 2):
        shard_out = tmp_path / f"shard{index}"
        assert (
            main(
                [
                    "grade",
                    str(folder),
                    "--out",
                    str(shard_out),
                    "--shard",
                    f"{index}/2",
                    "--jobs",
                    "2",
                    "--run-timeout",
                    "6",
                ]
            )
            == 0
        )
        names.append(set(rows(shard_out)))
    assert names[0].isdisjoint(names[1]) and names[0] | names[1] == set(book) and names[0] and names[1]
    merged = tmp_path / "merged"
    assert main(["grade", "--merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"), "--out", str(merged)]) == 0
    assert rows(merged) == book
    assert sorted(p.name for p in (merged / "results").iterdir()) == sorted(f"{n}.json" for n in book)
    old = next((tmp_path / "shard1" / "records").glob("*.json"))  # a record an older embconf wrote
    old.write_text(json.dumps({**json.loads(old.read_text()), "record_format": 5}))
    refused = run_cli("grade", "--merge", str(tmp_path / "shard1"), str(tmp_path / "shard2"), "--out", str(merged))
    assert_one_line_error(refused, "record of format 5", "grade that output again")


@pytest.mark.parametrize(
    "rubric, says",
    [
        ("rubric_format: 1\nitems: []\n", "items: [] should be non-empty"),
        (
            "rubric_format: 1\nitems:\n  - {id: x, points: -1, requirements: [EMB-FWD-*]}\n",
            "items.0.points: -1 is less than the minimum of 0",
        ),
        ("rubric_format: 1\nitems:\n  - {id: x, points: 1, requirements: [EMB-NOPE-*]}\n", "item 'x' matches no case"),
        ("rubric_format: 1\nitems:\n  - {id: x, points: 1, sections: [42]}\n", "no section 42"),
        (
            "rubric_format: 1\nitems:\n  - {id: x, points: 1, requirements: [EMB-FWD-1], credit: most}\n",
            "'most' is not one of",
        ),
        ("rubric_format: 1\nitems: [\n", "not valid YAML"),
        ("rubric_format: 1\nitems:\n  - {id: x, points: 1}\n", "items.0"),
    ],
)
def test_a_malformed_rubric_is_refused_in_one_line_before_anything_runs(tmp_path, capsys, rubric, says):
    folder = tmp_path / "subs"
    folder.mkdir()
    samples.write(folder, "alice", "module")
    path = tmp_path / "rubric.yaml"
    path.write_text(rubric, encoding="utf-8")
    assert main(["grade", str(folder), "--out", str(tmp_path / "out"), "--rubric", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err and str(path) in err, err
    assert not (tmp_path / "out").exists()


def test_usage_problems_exit_2_before_anything_runs(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["grade", str(empty), "--out", str(tmp_path / "out")]) == 2
    assert "holds no submissions" in capsys.readouterr().err
    assert main(["grade", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2
    assert "missing, not a folder" in capsys.readouterr().err
    samples.write(empty, "alice", "module")
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["grade", str(empty), "--out", str(blocker / "out")]) == 2
    assert "cannot write to" in capsys.readouterr().err
    for bad in (
        ["--shard", "3/2"],
        ["--shard", "x"],
        ["--jobs", "0"],
        ["--merge", str(tmp_path)],
        ["--base", str(tmp_path)],
    ):
        assert main(["grade", str(empty), "--out", str(tmp_path / "o2"), *bad]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "o2" / "gradebook.csv").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_out_dir_exits_2(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    samples.write(folder, "alice", "module")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert main(["grade", str(folder), "--out", str(locked / "out")]) == 2
    finally:
        locked.chmod(stat.S_IRWXU)
    assert "cannot write to" in capsys.readouterr().err


def test_gradescope_reads_the_submission_and_writes_results_json(tmp_path, capsys):
    submission = tmp_path / "autograder" / "submission"
    submission.mkdir(parents=True)
    samples.write(submission, "embeddings", "module", "overwrite")
    results = tmp_path / "autograder" / "results" / "results.json"
    assert main(["gradescope", "--submission", str(submission), "--results", str(results)]) == 0
    data = json.loads(results.read_text(encoding="utf-8"))
    assert 0 < data["score"] < 100 and any(t["status"] == "failed" for t in data["tests"])
    assert "indexed assignment" in capsys.readouterr().out


def test_an_interrupted_run_keeps_what_it_graded_and_the_next_run_resumes(tmp_path):
    import signal
    import subprocess
    import time

    folder, out = tmp_path / "subs", tmp_path / "out"
    folder.mkdir()
    for number in range(8):
        samples.write(folder, f"s{number}", "module", None if number % 2 else "overwrite")
    child = subprocess.Popen(
        embconf_argv("grade", str(folder), "--out", str(out), "--jobs", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"},  # a pipe buffers
    )  # as at a terminal, its output through a pipe
    deadline = time.monotonic() + 240
    while (
        time.monotonic() < deadline
        and len(list((out / "records").glob("*.json")) if (out / "records").is_dir() else []) < 2
    ):
        time.sleep(0.05)
    os.killpg(child.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    printed, _ = child.communicate(timeout=120)
    assert child.returncode == 130 and "Traceback" not in printed, printed[-3000:]
    lines = printed.splitlines()
    assert lines[0] == "grading 8 of 8 submissions, 2 at a time (Ctrl-C stops; what is graded is kept)"
    assert "(eta " in lines[1]  # '[1/8] s1: 100/100  (eta 40s)'
    after = lines[max(n for n, line in enumerate(lines) if line.startswith("[")) + 1 :]
    assert after[0].startswith("interrupted: ") and after[-1] == "embconf: interrupted" and len(after) <= 3
    kept = {p.stem for p in (out / "records").glob("*.json")}
    assert 2 <= len(kept) < 8 and set(rows(out)) == kept  # the gradebook lists what was graded
    assert main(["grade", str(folder), "--out", str(out), "--jobs", "2"]) == 0
    assert len(rows(out)) == 8
