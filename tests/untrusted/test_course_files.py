"""The files course staff give are read as untrusted input, as the fixtures are: a rubric (``embconf grade
--rubric``, ``embconf autograder --rubric``), where a FIFO, a device, a directory, non-UTF-8 bytes, an alias, deep
nesting or infinite points are one line and exit 2, and the autograder's ``--requirements`` file, where a FIFO, a
device or a directory is; each before anything runs and in bounded time."""

from __future__ import annotations

import os
import time

import pytest
from helpers import assert_one_line_error, run_cli, run_main


def _written(content: bytes):
    def make(path):
        path.write_bytes(content)

    return make


RUBRICS = [
    (os.mkfifo, "not a regular file"),
    (lambda path: path.symlink_to("/dev/zero"), "not a regular file"),
    (lambda path: path.mkdir(), "is a directory"),
    (_written(b"rubric_format: 1\ntitle: caf\xe9\n"), "not UTF-8"),
    (_written(b"rubric_format: 1\nitems: &x []\nmore: *x\n"), "aliases are not allowed"),
    (_written(b"rubric_format: 1\nitems: " + b"[" * 1000 + b"\n"), "nested more than"),
    (_written(b"rubric_format: 1\nitems:\n  - {id: x, points: .inf, requirements: [EMB-FWD-1]}\n"), "finite"),
]
IDS = ["fifo", "device", "directory", "not_utf8", "alias", "deep", "infinite_points"]


@pytest.mark.parametrize("make, says", RUBRICS, ids=IDS)
def test_a_rubric_that_cannot_be_read_safely_is_one_line_before_grading(tmp_path, capsys, make, says):
    make(tmp_path / "rubric.yaml")
    (tmp_path / "subs").mkdir()
    argv = ["grade", str(tmp_path / "subs"), "--out", str(tmp_path / "out"), "--rubric", str(tmp_path / "rubric.yaml")]
    assert_one_line_error(run_main(capsys, *argv), "rubric.yaml", says)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "option, name, count", [("--rubric", "rubric.yaml", 2), ("--requirements", "requirements.txt", 3)]
)
def test_the_autograder_reads_its_rubric_and_requirements_so_too(tmp_path, option, name, count):
    for index, (make, says) in enumerate(RUBRICS[:count]):
        make(tmp_path / f"{index}{name}")
        started = time.monotonic()
        done = run_cli(
            "autograder", "--out", str(tmp_path / "a.zip"), option, str(tmp_path / f"{index}{name}"), timeout=60
        )
        assert_one_line_error(done, name, says)
        assert time.monotonic() - started < 30
