"""A submission that ends the process grading it (the pool worker its own worker was forked from, found with
``os.getppid()``), one that stops it (SIGSTOP), one that kills itself, one that kills every other process of the
runner (the other grading processes, multiprocessing's resource tracker) and one that kills the runner cost
themselves only: the correct submissions graded beside them keep
their full scores, the lost one is recorded with its reason and graded again by the next run, and the exit status
says a submission could not be graded."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from helpers import assert_exit, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402

from embconf.model.exits import FAILED as EXIT_UNGRADED  # noqa: E402

KILLS_ITS_GRADER = "import os\nos.kill(os.getppid(), 9)\n"
STOPS_ITS_GRADER = "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n"
KILLS_ITSELF = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
KILLS_THE_RUNNER = """import os
with open(f"/proc/{os.getppid()}/stat") as _stat:
    os.kill(int(_stat.read().rsplit(")", 1)[1].split()[1]), 9)
"""
KILLS_THE_RUNNERS_OTHER_CHILDREN = """import os, signal
def _parent(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])
_runner = _parent(os.getppid())
for _pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if _pid not in (os.getpid(), os.getppid()):
        try:
            if _parent(_pid) == _runner:
                os.kill(_pid, signal.SIGKILL)
        except OSError:
            pass
"""


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    for name in ("alice", "bob", "carol"):
        samples.write(folder, name, "module")
    (folder / "killer.py").write_text(samples.module_doing(KILLS_ITS_GRADER), encoding="utf-8")
    (folder / "suicide.py").write_text(samples.module_doing(KILLS_ITSELF), encoding="utf-8")
    (folder / "stopper.py").write_text(samples.module_doing(STOPS_ITS_GRADER), encoding="utf-8")
    (folder / "sweeper.py").write_text(samples.module_doing(KILLS_THE_RUNNERS_OTHER_CHILDREN), encoding="utf-8")
    out = tmp_path_factory.mktemp("out")
    return folder, out, run_cli("grade", str(folder), "--out", str(out), "--jobs", "2", timeout=600)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the sweeper reads /proc")
def test_a_lost_grading_process_costs_only_the_submission_that_lost_it(hostile_class):
    folder, out, done = hostile_class
    assert_exit(done, EXIT_UNGRADED)
    assert done.stderr == "", done.stderr[-2000:]  # no tracker's complaint, no warning
    graded = samples.gradebook(out)
    for name in ("alice", "bob", "carol", "sweeper"):  # the sweeper's own grading is not what it breaks
        assert graded[name]["score"] == "100", graded[name]
    assert graded["suicide"]["score"] == "0" and "killed by SIGKILL" in graded["suicide"]["reason"]
    lost = graded["killer"]
    assert lost["score"] == "0" and "lost twice (killed by SIGKILL)" in lost["reason"] and "\n" not in lost["reason"]
    stopped = graded["stopper"]
    assert stopped["score"] == "0" and "lost twice (stopped by SIGSTOP, then ended by the grader)" in stopped["reason"]
    assert "2 submission(s) could not be graded (killer, stopper)" in done.stdout


def test_a_lost_submission_is_graded_again_by_the_next_run(hostile_class):
    folder, out, _ = hostile_class
    again = run_cli("grade", str(folder), "--out", str(out), "--jobs", "2", timeout=600)
    assert_exit(again, EXIT_UNGRADED)
    assert "5 of 7 submissions unchanged" in again.stdout and "grading 2 of 7" in again.stdout, again.stdout
    for name in ("killer", "stopper"):  # the students hand in a fix
        (folder / f"{name}.py").write_text(samples.module_text(), encoding="utf-8")
    fixed = run_cli("grade", str(folder), "--out", str(out), "--jobs", "2", timeout=600)
    assert_exit(fixed, 0)
    assert samples.gradebook(out)["killer"]["score"] == samples.gradebook(out)["stopper"]["score"] == "100"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="the submission reads /proc")
def test_a_submission_killing_the_runner_costs_the_class_two_runs_and_itself_its_grade(tmp_path):
    folder, out = tmp_path / "class", tmp_path / "out"
    folder.mkdir()
    (folder / "a_killer.py").write_text(samples.module_doing(KILLS_THE_RUNNER), encoding="utf-8")
    for name in ("b", "c", "d"):
        samples.write(folder, name, "module")
    marked = {"EMBCONF_TEST_RUN": str(tmp_path)}  # what each process the runs start inherits
    runs = [run_cli("grade", str(folder), "--out", str(out), "--jobs", "2", timeout=600, env=marked) for _ in range(3)]
    assert [run.returncode for run in runs] == [-9, -9, EXIT_UNGRADED], [run.stdout[-500:] for run in runs]
    graded = samples.gradebook(out)
    assert [graded[name]["score"] for name in ("b", "c", "d")] == ["100"] * 3
    assert "the run grading it alone was killed" in graded["a_killer"]["reason"]
    time.sleep(1)
    assert _inheriting(f"EMBCONF_TEST_RUN={tmp_path}".encode()) == []  # the killed runs left no process behind


def _inheriting(variable: bytes) -> list[int]:
    """The processes whose environment holds ``variable``."""
    found = []
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            if variable in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append(pid)
        except OSError:
            continue
    return found


def test_gradescope_retries_a_lost_submission_once_and_says_so(tmp_path):
    submission, results = tmp_path / "submission", tmp_path / "results" / "results.json"
    submission.mkdir()
    (submission / "embeddings.py").write_text(samples.module_doing(KILLS_ITS_GRADER), encoding="utf-8")
    done = run_cli("gradescope", "--submission", str(submission), "--results", str(results), timeout=600)
    assert_exit(done, EXIT_UNGRADED)
    assert results.is_file() and "lost twice" in results.read_text(encoding="utf-8")
