"""The peer starts first: `embconf run` starts a protocol peer before it imports NumPy, takes it over once and only
for its own command line, and a run that stops early ends it."""

from __future__ import annotations

import shlex
import subprocess
import sys

from helpers import PYTHON, assert_one_line_error, run_cli


def test_the_command_line_reaches_the_early_start_without_numpy():
    """`embconf run` starts a protocol peer before it imports NumPy: the peer's own start-up then runs beside
    the runner's. Parsing the command line and starting the peer import no NumPy."""
    code = (
        "import sys\n"
        "from embconf.cli import build_parser\n"
        "build_parser(['run']).parse_args(['run', '--impl', 'subprocess:true'])\n"
        "import embconf.adapters, embconf.protocol.early\n"
        "assert 'numpy' not in sys.modules, sorted(m for m in sys.modules if m.startswith('embconf'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_a_peer_started_early_is_taken_over_once_and_only_for_its_command_line():
    from embconf.model.impl import Impl
    from embconf.protocol.early import adopt, start_early

    argv = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    start_early(Impl("reference"))  # not a protocol implementation: nothing starts
    start_early(Impl("subprocess", "'unbalanced"))  # cannot be split: left to the adapter, which reports it
    assert adopt(["'unbalanced"]) is None
    start_early(Impl("subprocess", shlex.join(argv)))
    assert adopt(argv + ["--other"]) is None
    process = adopt(argv)
    try:
        assert process is not None and process.poll() is None
        assert adopt(argv) is None  # taken over once
    finally:
        process.kill()
        process.wait()


def test_a_peer_started_early_for_a_run_that_stops_before_it_ends_with_the_run(tmp_path):
    """A run that refuses its fixtures after starting the peer exits 2 in one line and leaves no process."""
    marker = tmp_path / "alive"
    script = tmp_path / "peer.py"
    script.write_text("import sys, time, pathlib\npathlib.Path(sys.argv[1]).write_text('started')\ntime.sleep(60)\n")
    impl = f"subprocess:{PYTHON} {shlex.quote(str(script))} {shlex.quote(str(marker))}"
    result = run_cli("run", "--impl", impl, "--fixtures", str(tmp_path / "no-such-corpus"), timeout=60)
    assert_one_line_error(result)
    assert marker.exists()  # it was started before the fixtures were read
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(script) not in ps
