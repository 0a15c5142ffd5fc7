"""Where reports go: a path that cannot be written is refused before the run, reports are written through
symlinks, to stdout, into pipes and with the umask's permissions, and a write error or a console reader that goes
away costs no other report."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
import time
from xml.etree import ElementTree as ET

import pytest
import yaml
from helpers import (
    HOSTILE,
    IMPLS,
    ROOT,
    assert_exit,
    assert_one_line_error,
    cases_with,
    embconf_argv,
    parse_report,
    read_report,
    run_selected,
    validated,
)

ONE_CASE = "lookup.forward.module_example"


@pytest.mark.parametrize("option", ["--report-json", "--junit", "--write-expectations"])
@pytest.mark.parametrize("where", ["missing_directory", "a_directory"])
def test_a_report_path_that_cannot_be_written_is_refused_before_the_run(tmp_path, option, where):
    target = tmp_path / "no" / "such" / "dir" / "r.out" if where == "missing_directory" else tmp_path
    started = time.monotonic()
    result = run_selected(
        option, str(target), impl=f"functions:{HOSTILE / 'hang'}.py", select=("lookup.backward.module_example_020",)
    )
    assert_one_line_error(result, "does not exist" if where == "missing_directory" else "it is a directory")
    assert result.stdout == ""
    assert time.monotonic() - started < 30  # the hanging case never ran (it would cost the 10 s case timeout)


def test_reports_are_written_through_symlinks_and_beside_an_unrelated_tmp_file(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "report.json").write_text("old")
    link = tmp_path / "report.json"
    link.symlink_to(real / "report.json")
    (real / "report.json.tmp").write_text("somebody else's file")
    (tmp_path / "junit.xml.tmp").write_text("also not ours")
    result = run_selected("--report-json", str(link), "--junit", str(tmp_path / "junit.xml"), select=(ONE_CASE,))
    assert_exit(result, 0)
    assert link.is_symlink() and validated(read_report(real / "report.json"))["summary"]["pass"] == 1
    assert (real / "report.json.tmp").read_text() == "somebody else's file"
    assert (tmp_path / "junit.xml.tmp").read_text() == "also not ours"
    assert ET.parse(tmp_path / "junit.xml").getroot().tag == "testsuites"
    assert sorted(p.name for p in real.iterdir()) == ["report.json", "report.json.tmp"]  # no temporary left behind


@pytest.mark.parametrize("target", ["-", "/dev/stdout"])
def test_a_report_to_stdout_is_the_whole_of_stdout(target):
    was_link = os.path.islink("/dev/stdout")
    result = run_selected("--report-json", target, select=(ONE_CASE,))
    assert_exit(result, 0)
    assert validated(parse_report(result.stdout))["summary"]["pass"] == 1  # the console went to stderr
    assert "1 pass" in result.stderr
    assert os.path.islink("/dev/stdout") == was_link


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_write_error_is_one_line_and_the_other_reports_are_written(tmp_path):
    report = tmp_path / "r.json"
    result = run_selected("--junit", "/dev/full", "--report-json", str(report), select=(ONE_CASE,))
    assert_one_line_error(result)
    assert result.stderr.strip() == "embconf: cannot write /dev/full: No space left on device"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # the device node is still a device
    assert validated(read_report(report))["summary"]["pass"] == 1


def test_a_report_is_written_into_a_pipe_and_a_pipe_nobody_reads_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused = run_selected("--report-json", str(fifo), select=(ONE_CASE,))
    assert_one_line_error(refused, "it is a pipe that no process reads")
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    try:
        result = run_selected("--report-json", str(fifo), select=(ONE_CASE,))
    finally:
        if reader.is_alive():  # unblock the reader whatever happened
            with open(fifo, "wb"):
                pass
        reader.join(30)
    assert_exit(result, 0)
    assert validated(parse_report(received[0].decode()))["summary"]["pass"] == 1
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_new_report_file_gets_the_umask_permissions(tmp_path):
    report = tmp_path / "r.json"
    result = run_selected("--report-json", str(report), select=(ONE_CASE,))
    assert_exit(result, 0)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~umask


def test_a_console_reader_that_goes_away_changes_neither_the_verdict_nor_the_reports(tmp_path):
    """``embconf run ... | head -1``: exit 1 when cases failed, and the report files are complete."""
    report, expectations = tmp_path / "r.json", tmp_path / "e.yaml"
    impl = f"tinytorch:{IMPLS / 'wrong_overwrite.py'}"
    argv = embconf_argv("run", "--impl", impl, "--no-colour", "-k", "lookup.*", "--report-json", str(report))
    argv += ["--write-expectations", str(expectations)]
    process = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()  # the reader leaves after one line
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=300) == 1, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert cases_with(validated(read_report(report)), "fail")
    assert yaml.safe_load(expectations.read_text())["expectations"]


def test_list_into_a_closed_pipe_exits_0_quietly():
    process = subprocess.Popen(embconf_argv("list"), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()
    assert process.wait(timeout=120) == 0
    assert process.stderr.read() == b""
