"""The files grading reads are untrusted input: the records of output folders (``embconf grade --merge OUT ...``, and
the record a later run reuses), where a FIFO, a device, invalid or deeply nested JSON, or JSON that is no record is
one line and exit 2 under --merge, in bounded time; and a roster, where deep nesting is one line."""

from __future__ import annotations

import os

import pytest
from helpers import assert_one_line_error, run_main


def _written(text: str):
    def make(path):
        path.write_text(text)

    return make


@pytest.mark.parametrize(
    "make, says",
    [
        (os.mkfifo, "not a regular file"),
        (lambda path: path.symlink_to("/dev/zero"), "not a regular file"),
        (_written('{"name": "alice", '), "not valid JSON"),
        (_written("[" * 10_000 + "]" * 10_000), "nested more than"),
        (_written('["alice"]'), "not a grading record"),
    ],
    ids=["fifo", "device", "not_json", "deep", "not_a_record"],
)
def test_a_record_that_cannot_be_read_safely_is_one_line_under_merge(tmp_path, capsys, make, says):
    (tmp_path / "shard" / "records").mkdir(parents=True)
    make(tmp_path / "shard" / "records" / "alice.json")
    argv = ["grade", "--merge", str(tmp_path / "shard"), "--out", str(tmp_path / "out")]
    assert_one_line_error(run_main(capsys, *argv), "--merge", "alice.json", says)


@pytest.mark.parametrize(
    "name, text",
    [
        ("submission_metadata.yml", "a: " + "[" * 100_000),
        ("submission_metadata.json", "[" * 100_000),
    ],
    ids=["deep_yaml", "deep_json"],
)
def test_a_roster_nested_too_deep_is_one_line(tmp_path, name, text):
    from embconf.grading.roster import RosterError, load_roster

    (tmp_path / name).write_text(text)
    with pytest.raises(RosterError, match="neither a CSV nor valid submission metadata"):
        load_roster(tmp_path / name)
