"""The limits a run holds an implementation to: timeouts that cannot be waited for are refused in one line, the
run timeout holds for protocol peers and across --repeat, an operation that hangs costs two timeouts and is then
not run, and the memory a worker, its children or a peer hold is measured against the limit.

Every run goes through the CLI (or pytest) in a fresh process, as a user runs it, with hostile modules from
tests/hostile and broken peers from tests/peers."""

from __future__ import annotations
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional
import pytest
from helpers import HOSTILE, PYTHON, peer, report_cases, run_report


FORWARD, BACKWARD = "lookup.forward.module_example", "lookup.backward.module_example_020"


SINUSOID = "sin.canonical.l16_d8"


def hostile(name: str) -> str:
    return f"functions:{HOSTILE / name}.py"


def embconf(
    tmp_path: Path,
    impl: str,
    *args: str,
    select: tuple[str, ...] = (),
    env: Optional[dict] = None,
    timeout: float = 120,
):
    """``embconf run -q`` on ``impl``: (process result, the report's cases by id or None, seconds taken)."""
    started = time.monotonic()
    result, report = run_report(tmp_path, impl, "-q", *args, select=select, env=env, timeout=timeout)
    return result, (report_cases(report) if report else None), time.monotonic() - started


def assert_one_line(result, exit_code: int, *words: str) -> None:
    assert result.returncode == exit_code, result.stderr[-2000:]
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr[-2000:]
    assert all(word in result.stderr for word in words), result.stderr


def selected_ids(*patterns: str) -> list[str]:
    from embconf.corpus.fixtures import load_corpus
    from embconf.corpus.select import select

    return [case.id for case in select(load_corpus().cases, patterns)]


def alive(pid: int) -> bool:
    """Whether ``pid`` is a living process (a zombie is dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def survivors(pidfile: Path, within: float = 5.0) -> list[int]:
    """The pids listed in ``pidfile`` still alive after ``within`` seconds (killed, so no test leaks them)."""
    pids = [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []
    deadline = time.monotonic() + within
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read from /proc")


def run_pytest(tmp_path: Path, *args: str, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


BAD_SECONDS = ["nan", "inf", "-inf", "1e308", "0", "-1"]


@pytest.mark.parametrize("flag", ["--case-timeout", "--timeout", "--run-timeout"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_an_unusable_timeout_flag_is_refused_in_one_line(tmp_path, flag, value):
    result, cases, _ = embconf(tmp_path, "reference", f"{flag}={value}", select=(FORWARD,))
    assert_one_line(result, 2, "--run-timeout" if flag == "--run-timeout" else "--case-timeout", "must be more than 0")
    assert cases is None


@pytest.mark.parametrize("value", BAD_SECONDS + ["ten"])
def test_an_unusable_embconf_timeout_is_refused_in_one_line(tmp_path, value):
    result, cases, _ = embconf(
        tmp_path,
        f"subprocess:{PYTHON} -m embconf.protocol.reference_peer",
        select=(FORWARD,),
        env={"EMBCONF_TIMEOUT": value},
    )
    assert_one_line(result, 2, "EMBCONF_TIMEOUT")


@pytest.mark.parametrize("option", ["--embconf-case-timeout", "--embconf-run-timeout"])
@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "0"])
def test_an_unusable_pytest_timeout_is_a_usage_error(tmp_path, option, value):
    result = run_pytest(tmp_path, "--embconf-impl=reference", f"{option}={value}")
    assert result.returncode == 4 and "must be more than 0 and at most" in result.stderr, result.stderr[-2000:]


def test_a_memory_limit_too_low_to_start_python_is_refused_in_one_line(tmp_path):
    result, cases, _ = embconf(tmp_path, "reference", "--memory-limit", "10", select=(FORWARD,))
    assert_one_line(result, 2, "--memory-limit 10 MB is too low to start a Python process")
    pytest_result = run_pytest(tmp_path, "--embconf-impl=reference", "--embconf-memory-limit=10")
    assert pytest_result.returncode == 4 and "too low to start a Python process" in pytest_result.stderr


def test_the_run_timeout_holds_for_a_protocol_peer(tmp_path):
    select = tuple(selected_ids("lookup.backward.*"))[:6] + (FORWARD,)
    result, cases, elapsed = embconf(tmp_path, peer("hang_all"), "--timeout", "60", "--run-timeout", "2", select=select)
    assert result.returncode == 1 and sorted(cases) == sorted(select) and elapsed < 30
    assert {c["outcome"] for c in cases.values()} == {"timeout"}
    assert all("run timeout: the whole run exceeded 2 s" in c["message"] for c in cases.values())


def test_the_run_timeout_holds_across_repeat(tmp_path):
    select = (FORWARD, "lookup.forward.ids_2d", SINUSOID)  # 0.6 s a repetition
    result, cases, elapsed = embconf(tmp_path, hostile("slow"), "--repeat", "100", "--run-timeout", "3", select=select)
    assert result.returncode == 1 and sorted(cases) == sorted(select) and elapsed < 30
    cut = [case for case in cases.values() if case["outcome"] == "timeout"]
    assert cut and {c["outcome"] for c in cases.values()} <= {"timeout", "pass"}  # passed in every run before the cut
    for case in cut:
        assert "run timeout: the whole run exceeded 3 s" in case["message"] and "of 100 of --repeat" in case["message"]
    assert not any("nondeterministic" in case["message"] for case in cases.values())
    assert "nondeterministic" not in result.stdout


def hang_counts(cases: dict) -> tuple[int, int]:
    """(cases that timed out waiting, cases not run by the hang policy)."""
    waited = sum("no reply within" in c["message"] for c in cases.values() if c["outcome"] == "timeout")
    not_run = sum("not run:" in c["message"] for c in cases.values() if c["outcome"] == "timeout")
    return waited, not_run


def test_an_operation_that_hangs_costs_two_timeouts_then_is_not_run(tmp_path):
    result, cases, elapsed = embconf(tmp_path, hostile("hang_duplicates"), "--case-timeout", "1")
    assert result.returncode == 1 and len(cases) == len(selected_ids("*"))
    backward = {
        i: c for i, c in cases.items() if c["operation"] == "embedding_backward" and c["outcome"] != "not_applicable"
    }
    assert hang_counts(backward) == (2, len(backward) - 2)
    assert all(
        "not run: embedding_backward timed out on 2 earlier cases" in c["message"]
        for c in backward.values()
        if "not run" in c["message"]
    )
    assert {c["outcome"] for c in cases.values() if c["operation"] != "embedding_backward"} <= {
        "pass",
        "not_applicable",
    }
    assert elapsed < 30


@pytest.mark.parametrize(
    "impl, timeout_flag", [(hostile("hang_always"), "--case-timeout"), ("peer:hang_all", "--timeout")]
)
def test_an_implementation_that_hangs_on_everything_costs_four_timeouts(tmp_path, impl, timeout_flag):
    impl = peer("hang_all") if impl == "peer:hang_all" else impl
    result, cases, elapsed = embconf(tmp_path, impl, timeout_flag, "1")
    applicable = {i: c for i, c in cases.items() if c["outcome"] != "not_applicable"}
    assert result.returncode == 1 and len(cases) == len(selected_ids("*"))
    assert {c["outcome"] for c in applicable.values()} == {"timeout"}
    assert hang_counts(applicable) == (4, len(applicable) - 4)
    assert any(
        "not run: the implementation timed out on 4 earlier cases in a row" in c["message"] for c in applicable.values()
    )
    assert elapsed < 40


def test_a_peer_whose_backward_hangs_costs_two_timeouts(tmp_path):
    result, cases, elapsed = embconf(tmp_path, peer("hang"), "--timeout", "1", select=("lookup.*",))
    backward = {
        i: c for i, c in cases.items() if c["operation"] == "embedding_backward" and c["outcome"] != "not_applicable"
    }
    assert result.returncode == 1 and hang_counts(backward) == (2, len(backward) - 2)
    assert {c["outcome"] for c in cases.values() if c["operation"] != "embedding_backward"} <= {
        "pass",
        "not_applicable",
    }


def test_reserved_but_untouched_address_space_passes_under_the_default_limit(tmp_path):
    result, cases, _ = embconf(tmp_path, hostile("reserve_address_space"), select=(FORWARD, BACKWARD, SINUSOID))
    assert result.returncode == 0, result.stderr[-2000:] + result.stdout[-2000:]
    assert {c["outcome"] for c in cases.values()} == {"pass"}


@linux_only
def test_memory_held_by_a_child_of_the_worker_counts_and_the_child_ends(tmp_path):
    pidfile = tmp_path / "pids"
    result, cases, _ = embconf(
        tmp_path,
        hostile("memory_child"),
        "--memory-limit",
        "600",
        select=(FORWARD, BACKWARD, SINUSOID),
        env={"EMBCONF_TEST_PIDFILE": str(pidfile)},
    )
    assert result.returncode == 1 and sorted(cases) == sorted((FORWARD, BACKWARD, SINUSOID))
    bad = cases[BACKWARD]
    assert bad["outcome"] == "crash", bad
    assert "ran out of memory (the limit is 600 MB): the worker and its children held" in bad["message"]
    assert cases[FORWARD]["outcome"] == cases[SINUSOID]["outcome"] == "pass"
    assert survivors(pidfile) == []


@linux_only
def test_a_protocol_peer_is_held_to_the_memory_limit(tmp_path):
    select = (FORWARD, BACKWARD, SINUSOID)
    result, cases, _ = embconf(tmp_path, peer("memory_hog"), "--memory-limit", "512", "--timeout", "60", select=select)
    assert result.returncode == 1 and sorted(cases) == sorted(select)
    bad = cases[BACKWARD]
    assert (
        bad["outcome"] == "crash"
        and "ran out of memory (the limit is 512 MB): the implementation's process and its children held"
        in bad["message"]
    )
    assert cases[FORWARD]["outcome"] == cases[SINUSOID]["outcome"] == "pass"


def test_a_jax_implementation_passes_under_the_default_limit(tmp_path):
    pytest.importorskip("jax")
    result, cases, _ = embconf(
        tmp_path, hostile("jax_functions"), select=("lookup.forward.*", "lookup.backward.*", "lookup.error.*")
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert {c["outcome"] for c in cases.values()} <= {"pass", "not_applicable"}
    assert sum(c["outcome"] == "pass" for c in cases.values()) > 20


def test_a_jax_and_tensorflow_implementation_passes_under_the_default_limit(tmp_path):
    pytest.importorskip("jax")
    pytest.importorskip("tensorflow")
    result, cases, _ = embconf(tmp_path, hostile("jax_tf_functions"), select=("lookup.forward.*", "lookup.backward.*"))
    assert result.returncode == 0, result.stdout[-3000:]
    assert {c["outcome"] for c in cases.values()} <= {"pass", "not_applicable"}
    assert sum(c["outcome"] == "pass" for c in cases.values()) > 20
