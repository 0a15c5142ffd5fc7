"""A saved report read back (``embconf report FILE``, ``embconf matrix --merge FILE``) is untrusted input, read
bounded and typed: a malformed field is one line naming the file, the line and the field (exit 2); a FIFO, a device,
a directory, non-UTF-8 bytes, deep nesting, a file or a line over its limit are one line too, in bounded time; and a
report is streamed, so its memory is that of its distinct cases, not of its size."""

from __future__ import annotations

import copy
import json
import os
import time

import pytest
from helpers import assert_exit, assert_one_line_error, linux_only, run_cli, run_main, run_measured

from embconf.reports import saved

COMMANDS = {"report": ("report",), "merge": ("matrix", "--json", os.devnull, "--merge")}
HOSTILE = [1e999, -1, 2**70, "", [], {}, [[]], [{}], [5], None, True, ["EMB-NOPE-1"]]


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory):
    """The lines of a finished report with failures, a diagnosis and a verdict."""
    path = tmp_path_factory.mktemp("diagnosed") / "report.jsonl"
    run_cli("run", "--impl", "mutant:bwd.overwrite", "-q", "--select", "lookup.backward.*", "--report-json", str(path))
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path, lines) -> str:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def with_field(lines, index, field, value):
    """The report's lines with the field at ``field`` (a path of keys) of line ``index`` set to ``value``."""
    changed = copy.deepcopy(lines)
    holder = changed[index]
    for key in field[:-1]:
        holder = holder[key]
    holder[field[-1]] = value
    return changed


def _case_line(lines) -> int:
    return next(index for index, line in enumerate(lines) if "diagnosis" in line)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    "field, value, words",
    [
        (("duration_s",), 1e999, ["field 'duration_s'", "finite"]),
        (("requirements", 0), 5, ["field 'requirements[0]'", "must be a string"]),
        (("requirements", 0), "EMB-NOPE-9", ["field 'requirements[0]'", "EMB-NOPE-9"]),
        (("outcome",), "passed", ["field 'outcome'", "must be one of"]),
        (("call",), 1.5, ["field 'call'", "integer"]),
        (("diagnosis", 0, "summary"), ["x"], ["field 'diagnosis[0].summary'", "string"]),
    ],
)
def test_a_malformed_field_is_one_line_naming_the_file_line_and_field(
    diagnosed, tmp_path, capsys, command, field, value, words
):
    index = _case_line(diagnosed)
    path = write_lines(tmp_path / "r.jsonl", with_field(diagnosed, index, field, value))
    assert_one_line_error(run_main(capsys, *COMMANDS[command], path), path, f"line {index + 1}", *words)


def _fields(value, prefix=()):
    """The path of every field of a line (a list's first item standing for its items)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from _fields(item, prefix + (key,))
    elif isinstance(value, list) and value:
        yield prefix + (0,)
        yield from _fields(value[0], prefix + (0,))


def test_every_field_of_every_line_malformed_is_never_a_traceback(diagnosed, tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    for index in (0, _case_line(diagnosed), len(diagnosed) - 1):
        for field in _fields(diagnosed[index]):
            for value in HOSTILE:
                write_lines(path, with_field(diagnosed, index, field, value))
                code, out, err = run_main(capsys, "report", str(path))
                assert code in (0, 1) or (code == 2 and err.count("\n") == 1), (index, field, value, err)


def test_a_report_of_one_document_is_typed_too(diagnosed, tmp_path, capsys):
    document = saved.parse("".join(json.dumps(line) + "\n" for line in diagnosed).encode())
    (tmp_path / "one.json").write_text(json.dumps(document, indent=1))
    assert run_main(capsys, "report", str(tmp_path / "one.json"))[0] == 1
    document["cases"][0]["requirements"] = [5]
    (tmp_path / "one.json").write_text(json.dumps(document, indent=1))
    assert_one_line_error(run_main(capsys, "report", str(tmp_path / "one.json")), "field 'requirements[0]'")


def _not_utf8(tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"record": "header", "name": "caf\xe9"}\n')
    return str(path)


def _deep(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"record": "header", "x": ' + "[" * 100_000 + "\n")
    return str(path)


def _too_big(tmp_path):
    path = tmp_path / "big.jsonl"
    with path.open("wb") as handle:
        handle.truncate(saved.MAX_REPORT + 1)  # sparse: no disk space used
    return str(path)


def _fifo(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    return str(tmp_path / "fifo")


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    "make, words",
    [
        (_fifo, ["not a regular file"]),
        (lambda tmp_path: "/dev/zero", ["not a regular file"]),
        (lambda tmp_path: str(tmp_path), ["a directory"]),
        (_not_utf8, ["not an embconf run report", "utf-8"]),
        (_deep, ["nested more than"]),
        (_too_big, ["more than the limit of", "64 MiB"]),
    ],
    ids=["fifo", "device", "directory", "not_utf8", "deep", "too_big"],
)
def test_what_is_no_report_file_is_one_line_in_bounded_time(tmp_path, command, make, words):
    path = make(tmp_path)
    started = time.monotonic()
    assert_one_line_error(run_cli(*COMMANDS[command], path, timeout=60), path, *words)
    assert time.monotonic() - started < 30


def test_a_line_over_its_limit_and_too_many_cases_are_one_line(diagnosed, tmp_path, capsys, monkeypatch):
    path = write_lines(tmp_path / "r.jsonl", diagnosed)
    monkeypatch.setattr(saved, "MAX_CASES", 3)
    assert_one_line_error(run_main(capsys, "report", path), "line 5", "more than 3 cases")
    write_lines(tmp_path / "r.jsonl", with_field(diagnosed, 2, ("message",), "x" * 10_000))
    monkeypatch.setattr(saved, "MAX_LINE", 8000)
    assert_one_line_error(run_main(capsys, "report", path), "line 3", "longer than the limit of 8000 bytes")
    monkeypatch.setattr(saved, "MAX_LINE", 100)
    assert_one_line_error(run_main(capsys, "report", path), "line 1", "longer than the limit of 100")


@linux_only
def test_a_report_is_streamed_its_memory_that_of_its_distinct_cases(diagnosed, tmp_path):
    """40 MB of the same cases written again and again (a run writes a case again when its entry changes): read a
    line at a time, it costs the few cases it holds, where reading it whole cost several times its size."""
    header, cases, footer = diagnosed[0], diagnosed[1:-1], diagnosed[-1]
    block = "".join(json.dumps(case) + "\n" for case in cases)
    path = tmp_path / "rewritten.jsonl"
    path.write_text(json.dumps(header) + "\n" + block * (40_000_000 // len(block)) + json.dumps(footer) + "\n")
    for name, code in (("report", 1), ("merge", 0)):  # the run failed; its matrix was written
        done, peak = run_measured(*COMMANDS[name], str(path), tmp_path=tmp_path)
        assert_exit(done, code)
        assert peak < 100, (name, peak)  # 17 MB and 36 MB; 233 MB and 292 MB read whole
