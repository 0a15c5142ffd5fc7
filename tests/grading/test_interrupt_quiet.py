"""Ctrl-C during ``embconf grade`` prints one line after the progress (``embconf: interrupted``), never a
``resource_tracker`` warning: the grading pool's semaphores are released and multiprocessing's resource tracker
stopped when grading ends, before the runner kills what is left below it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from helpers import embconf_argv

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_samples as samples  # noqa: E402


def _class(tmp_path: Path, count: int) -> Path:
    folder = tmp_path / "subs"
    folder.mkdir()
    for number in range(count):
        samples.write(folder, f"s{number}", "module", None if number % 2 else "overwrite")
    return folder


def test_grading_twice_in_one_process_leaves_no_dead_tracker(tmp_path):
    folder = _class(tmp_path, 2)
    script = textwrap.dedent(
        f"""
        from embconf.cli import main
        for out in ("a", "b"):
            assert main(["grade", {str(folder)!r}, "--out", {str(tmp_path)!r} + "/" + out, "--jobs", "2"]) == 0
        """
    )
    done = subprocess.run([sys.executable, "-W", "default", "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "resource_tracker" not in done.stderr, done.stderr[-2000:]


def test_ctrl_c_as_a_record_arrives_prints_one_line(tmp_path):
    folder = _class(tmp_path, 6)
    child = subprocess.Popen(
        embconf_argv("grade", str(folder), "--out", str(tmp_path / "out"), "--jobs", "2", python=("-W", "default")),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert child.stdout is not None
    lines = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = child.stdout.readline()
        lines.append(line)
        if line.startswith("[") or not line:
            break
    os.killpg(child.pid, signal.SIGINT)  # as a record lands: the pool is between records
    rest, _ = child.communicate(timeout=120)
    printed = "".join(lines) + rest
    assert child.returncode == 130 and "resource_tracker" not in printed and "Traceback" not in printed, printed
    assert printed.rstrip().splitlines()[-1] == "embconf: interrupted"
