"""Implementations in child processes: restarts that lose nothing, replies that cannot be read, processes that
end with the run (and the command's own quick, lossless exit), one BLAS thread a process. The limits a run holds
them to (timeouts, hangs, memory) are tests/isolation/test_limits.py.

Every run goes through the CLI (or pytest) in a fresh process, as a user runs it, with hostile modules
from tests/hostile and broken peers from tests/peers; each asserts the exact outcome of the affected
cases, a complete report that validates against the report schema, and no traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
from helpers import (
    PYTHON,
    assert_exit,
    assert_judged,
    assert_one_line_error,
    assert_only,
    assert_outcome,
    assert_outcomes,
    case_ids,
    embconf_argv,
    hostile,
    linux_only,
    peer,
    pytest_argv,
    run_cases,
    run_pytest,
    selecting,
    survivors,
)

from embconf.model.encoding import EncodingError, decode_array

FORWARD, BACKWARD = "lookup.forward.module_example", "lookup.backward.module_example_020"
SINUSOID = "sin.canonical.l16_d8"


# --- a correct peer that crashes once costs one case and one restart


def test_a_peer_that_crashes_once_costs_only_that_case_and_one_restart(tmp_path):
    select = case_ids("lookup.*")
    result, cases = run_cases(tmp_path, peer("crash_once", str(tmp_path / "crashed")), select=("lookup.*",))
    assert_exit(result, 1)
    assert sorted(cases) == sorted(select)
    assert_outcome(cases.pop(BACKWARD), "crash", "exited with code 1")
    assert_only(cases, "pass", "not_applicable")


def test_requests_written_ahead_are_sent_again_and_the_crash_charges_one_restart(tmp_path, corpus):
    from helpers import run_undiagnosed

    from embconf.protocol.adapter import SubprocessAdapter

    cases = [case for case in corpus.cases if case.id.startswith("lookup.")]
    adapter = SubprocessAdapter(peer("crash_once", str(tmp_path / "crashed")).removeprefix("subprocess:"))
    try:
        run = run_undiagnosed(adapter, cases)
    finally:
        adapter.close()
    problems = [(r.id, r.outcome) for r in run.results if r.outcome not in ("pass", "not_applicable")]
    assert problems == [(BACKWARD, "crash")] and adapter.restarts == 1


# --- replies that cannot be read are a protocol error for their case


@pytest.mark.parametrize(
    "mode, outcome, words",
    [
        ("deep", "error", "protocol error: a JSON line nested too deeply to read"),
        (
            "ndim65",
            "error",
            "malformed array in output 'grad_weight': array shape has 65 dimensions; at most 32 are allowed",
        ),
    ],
)
def test_an_unreadable_reply_is_one_error_and_the_run_goes_on(tmp_path, mode, outcome, words):
    select = (FORWARD, BACKWARD, SINUSOID, "lookup.forward.ids_2d")
    result, cases = run_cases(tmp_path, peer("unreadable", mode), select=select)
    assert_judged(result, cases, select, {BACKWARD: (outcome, words)})


def test_an_output_nested_too_deeply_to_send_is_a_failure_not_a_crash(tmp_path):
    select = (FORWARD, BACKWARD, SINUSOID)
    result, cases = run_cases(tmp_path, hostile("deep_output"), select=select)
    assert_judged(result, cases, select, {FORWARD: ("fail", "'output' should be an array")})


def test_an_unreadable_handshake_is_one_line_and_exit_2(tmp_path):
    result, cases = run_cases(tmp_path, peer("unreadable", "deep_handshake"), select=(FORWARD,))
    assert_one_line_error(result, "failed the protocol handshake", "nested too deeply to read")
    assert cases is None


def test_decode_array_bounds_the_dimensions():
    with pytest.raises(EncodingError, match="65 dimensions; at most 32"):
        decode_array({"dtype": "float32", "shape": [1] * 65, "data": [0.0]})
    assert decode_array({"dtype": "float32", "shape": [1] * 32, "data": [0.0]}).ndim == 32


def test_under_pytest_the_case_after_an_unreadable_reply_passes(tmp_path):
    result = run_pytest(
        tmp_path,
        f"--embconf-impl={peer('unreadable', 'deep')}",
        f"--embconf-select={BACKWARD}",
        f"--embconf-select={FORWARD}",
        "--embconf-case-timeout=20",
    )
    assert_exit(result, 1)
    assert "1 failed, 1 passed" in result.stdout and "nested too deeply" in result.stdout
    assert "Traceback" not in result.stdout


# --- every process the run starts ends with it


@linux_only
def test_what_an_implementation_starts_ends_with_a_normal_run(tmp_path):
    pidfile = tmp_path / "pids"
    result, cases = run_cases(
        tmp_path, hostile("daemon_child"), select=(FORWARD, SINUSOID), env={"EMBCONF_TEST_PIDFILE": str(pidfile)}
    )
    assert_exit(result, 0)
    assert_outcomes(cases, {FORWARD: "pass", SINUSOID: "pass"})
    assert len(pidfile.read_text().split()) == 3  # the worker, its child and its daemon
    assert survivors(pidfile) == []


@linux_only
def test_what_an_implementation_starts_ends_with_a_pytest_session(tmp_path):
    pidfile = tmp_path / "pids"
    result = run_pytest(
        tmp_path,
        f"--embconf-impl={hostile('daemon_child')}",
        f"--embconf-select={FORWARD}",
        env={"EMBCONF_TEST_PIDFILE": str(pidfile)},
    )
    assert_exit(result, 0)
    assert len(pidfile.read_text().split()) == 3
    assert survivors(pidfile) == []


@linux_only
def test_what_a_timed_out_case_started_ends_with_its_worker(tmp_path):
    pidfile = tmp_path / "pids"
    result, cases = run_cases(
        tmp_path,
        hostile("daemon_child"),
        "--case-timeout",
        "1",
        select=(FORWARD, BACKWARD),
        env={"EMBCONF_TEST_PIDFILE": str(pidfile)},
    )
    assert_exit(result, 1)
    assert_outcomes(cases, {BACKWARD: "timeout", FORWARD: "pass"})
    assert survivors(pidfile) == []


SIGNALLED = [  # (how the run is started, the implementation, the signal, the exit status, what it says)
    ("embconf", hostile("daemon_child"), signal.SIGTERM, 143, "embconf: terminated (SIGTERM)"),
    ("embconf", hostile("daemon_child"), signal.SIGINT, 130, "embconf: interrupted"),
    ("embconf", "peer:busy", signal.SIGTERM, 143, "embconf: terminated (SIGTERM)"),
    ("embconf", "peer:busy", signal.SIGINT, 130, "embconf: interrupted"),
    ("pytest", hostile("daemon_child"), signal.SIGTERM, 2, "Terminated: SIGTERM"),
    ("pytest", "peer:busy", signal.SIGTERM, 2, "Terminated: SIGTERM"),
]


@linux_only
@pytest.mark.parametrize(
    "runner, impl, signum, code, words", SIGNALLED, ids=[f"{s[0]}-{s[1].split('/')[-1]}-{s[2].name}" for s in SIGNALLED]
)
def test_a_signalled_run_ends_cleanly_with_every_process_it_started(tmp_path, runner, impl, signum, code, words):
    pidfile = tmp_path / "pids"
    if impl == "peer:busy":
        impl, expected = peer("busy", str(pidfile)), 2  # the peer and its daemon
    else:
        expected = 3  # the worker, its child and its daemon
    env = {**os.environ, "EMBCONF_TEST_PIDFILE": str(pidfile)}
    if runner == "embconf":
        argv = embconf_argv("run", "--impl", impl, "-q", *selecting((FORWARD, BACKWARD)), "--case-timeout", "60")
    else:
        argv = pytest_argv(
            f"--embconf-impl={impl}",
            f"--embconf-select={FORWARD}",
            f"--embconf-select={BACKWARD}",
            "--embconf-case-timeout=60",
        )
    process = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while (not pidfile.exists() or len(pidfile.read_text().split()) < expected) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the backward case is now hanging (or computing)
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == code, err[-2000:] + out[-2000:]
    assert words in err + out
    if runner == "embconf":
        assert "Traceback" not in err and err.strip().splitlines() == [words], err[-2000:]
    assert survivors(pidfile) == []


# --- output before the handshake


def test_output_before_the_handshake_is_one_line_without_a_traceback(tmp_path):
    result, cases = run_cases(tmp_path, "subprocess:yes", select=(FORWARD,))
    assert_one_line_error(result, "'yes' failed the protocol handshake: not a JSON line", "'y'")
    assert cases is None


# --- the command's own exit


def test_the_command_ends_at_once_yet_runs_what_atexit_holds_and_flushes_its_streams():
    """``embconf`` skips the interpreter's teardown (start-up: tens of ms with NumPy loaded) but nothing
    registered with atexit is lost, nothing buffered is dropped, and the exit status is the command's."""
    code = (
        "import atexit, sys\n"
        "from embconf.processes.lifetime import exit_now\n"
        "atexit.register(lambda: print('registered', end=''))\n"
        "print('buffered ', end=''); sys.stderr.write('err')\n"
        "exit_now(3)\n"
        "print('never')\n"
    )
    result = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (3, "buffered registered", "err")


# --- one BLAS thread a process (start-up on small machines: embconf.processes.threads)

_SAYS_BLAS = (
    "subprocess:" + PYTHON + ' -c "import os, sys; '
    "sys.stderr.write('blas=' + os.environ.get('OPENBLAS_NUM_THREADS', 'unset') + chr(10))\""
)


@pytest.mark.parametrize(
    ("set_by_user", "seen"),
    [({}, "blas=1"), ({"OPENBLAS_NUM_THREADS": "3"}, "blas=3"), ({"OMP_NUM_THREADS": "4"}, "blas=unset")],
)
def test_what_the_command_starts_has_one_blas_thread_unless_the_user_set_a_count(set_by_user, seen):
    """A peer (here one that only prints what it was given, then ends unanswered) sees OPENBLAS_NUM_THREADS=1,
    or the count the user set, for OpenBLAS or through OMP_NUM_THREADS (which OpenBLAS reads too)."""
    from embconf.processes.threads import BLAS_THREAD_VARIABLES

    environment = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES} | set_by_user
    result = subprocess.run(
        embconf_argv("run", "--impl", _SAYS_BLAS, "--select", FORWARD),
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    assert_one_line_error(result, "failed the protocol handshake", f"its stderr: {seen}")
