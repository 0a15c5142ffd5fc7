"""Where reports go: a path that cannot be written is refused before the run, reports are written through
symlinks, to stdout, into pipes and with the umask's permissions, and a write error or a console reader that goes
away costs no other report."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
import yaml
from helpers import HOSTILE, IMPLS, ROOT, read_report, run_cli, selecting

from embconf.model.schemas import validator

ONE_CASE = "lookup.forward.module_example"


def valid_report(path: Path) -> dict:
    report = read_report(path)
    validator("report").validate(report)
    return report


def run_one(*args: str, select=(ONE_CASE,), impl="reference", env=None, timeout=120):
    return run_cli("run", "--impl", impl, "--no-colour", *selecting(select), *args, env=env, timeout=timeout)


@pytest.mark.parametrize("option", ["--report-json", "--junit", "--write-expectations"])
@pytest.mark.parametrize("where", ["missing_directory", "a_directory"])
def test_a_report_path_that_cannot_be_written_is_refused_before_the_run(tmp_path, option, where):
    target = tmp_path / "no" / "such" / "dir" / "r.out" if where == "missing_directory" else tmp_path
    started = time.monotonic()
    result = run_one(
        option, str(target), impl=f"functions:{HOSTILE / 'hang'}.py", select=("lookup.backward.module_example_020",)
    )
    assert result.returncode == 2 and result.stdout == "", (result.stdout, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert ("does not exist" if where == "missing_directory" else "it is a directory") in result.stderr
    assert time.monotonic() - started < 30  # the hanging case never ran (it would cost the 10 s case timeout)


def test_reports_are_written_through_symlinks_and_beside_an_unrelated_tmp_file(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "report.json").write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(real / "report.json")
    (real / "report.json.tmp").write_text("somebody else's file")
    (tmp_path / "junit.xml.tmp").write_text("also not ours")
    result = run_one("--report-json", str(link), "--junit", str(tmp_path / "junit.xml"))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and valid_report(real / "report.json")["summary"]["pass"] == 1
    assert (real / "report.json.tmp").read_text() == "somebody else's file"
    assert (tmp_path / "junit.xml.tmp").read_text() == "also not ours"
    assert ET.parse(tmp_path / "junit.xml").getroot().tag == "testsuites"
    assert sorted(p.name for p in real.iterdir()) == ["report.json", "report.json.tmp"]  # no temporary left behind


@pytest.mark.parametrize("target", ["-", "/dev/stdout"])
def test_a_report_to_stdout_is_the_whole_of_stdout(target):
    was_link = os.path.islink("/dev/stdout")
    result = run_one("--report-json", target)
    assert result.returncode == 0, result.stderr
    assert valid_report_text(result.stdout)["summary"]["pass"] == 1  # the console went to stderr
    assert "1 pass" in result.stderr
    assert os.path.islink("/dev/stdout") == was_link


def valid_report_text(text: str) -> dict:
    from embconf.reports.json_report import parse

    report = parse(text.encode())
    validator("report").validate(report)
    return report


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_write_error_is_one_line_and_the_other_reports_are_written(tmp_path):
    report = tmp_path / "r.json"
    result = run_one("--junit", "/dev/full", "--report-json", str(report))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "embconf: cannot write /dev/full: No space left on device"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # the device node is still a device
    assert valid_report(report)["summary"]["pass"] == 1


def test_a_report_is_written_into_a_pipe_and_a_pipe_nobody_reads_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused = run_one("--report-json", str(fifo))
    assert refused.returncode == 2 and "it is a pipe that no process reads" in refused.stderr
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    try:
        result = run_one("--report-json", str(fifo))
    finally:
        if reader.is_alive():  # unblock the reader whatever happened
            with open(fifo, "wb"):
                pass
        reader.join(30)
    assert result.returncode == 0, result.stderr
    assert valid_report_text(received[0].decode())["summary"]["pass"] == 1
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_new_report_file_gets_the_umask_permissions(tmp_path):
    report = tmp_path / "r.json"
    result = run_one("--report-json", str(report))
    assert result.returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~umask


def test_a_console_reader_that_goes_away_changes_neither_the_verdict_nor_the_reports(tmp_path):
    """``embconf run ... | head -1``: exit 1 when cases failed, and the report files are complete."""
    report, expectations = tmp_path / "r.json", tmp_path / "e.yaml"
    argv = [
        sys.executable,
        "-m",
        "embconf",
        "run",
        "--impl",
        f"tinytorch:{IMPLS / 'wrong_overwrite.py'}",
        "--no-colour",
        "-k",
        "lookup.*",
        "--report-json",
        str(report),
        "--write-expectations",
        str(expectations),
    ]
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()  # the reader leaves after one line
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 1, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    cases = valid_report(report)["cases"]
    assert sum(c["outcome"] == "fail" for c in cases) > 0
    assert yaml.safe_load(expectations.read_text())["expectations"]


def test_list_into_a_closed_pipe_exits_0_quietly():
    process = subprocess.Popen(
        [sys.executable, "-m", "embconf", "list"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    process.stdout.readline()
    process.stdout.close()
    assert process.wait(timeout=120) == 0
    assert process.stderr.read() == b""
