"""Grading processes side by side, and what the TA sees of them: a header, one line per submission with an
estimate of the time left, and one line when Ctrl-C ends the run.

Each submission is graded in a pool of fresh interpreters (spawned, so none inherits another submission's
modules). They start with Ctrl-C held back and then end at once and silently on it (no tracebacks); the
runner, which writes every record the moment it arrives, keeps what was graded and says so in one line.

The pool's queues hold semaphores that multiprocessing's resource tracker (a process of its own, below the
runner) watches. The runner kills every process below it on the way out, the tracker included; a semaphore
released after that (the pool shut down at exit, or the next pool of an in-process caller) found the tracker
dead and printed a two-line ``resource_tracker`` warning after ``embconf: interrupted``. So the pool is shut
down, its semaphores released and the tracker stopped the moment grading ends, interrupted or not.

A submission runs in a worker forked by its grading process (``os.getppid()`` names it), below the runner, and can
reach every process of the runner's: :func:`run_jobs` survives the loss of any grading process (the pool is
started afresh, the jobs it was grading retried alone), a resource tracker it ended is started again quietly, a
stopped grading process is ended (:class:`_Watch`), and the grading processes die with the runner.
"""

from __future__ import annotations

import concurrent.futures
import gc
import multiprocessing
import os
import signal
import threading
import time
import warnings
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Collection, Generator, Iterator, Optional, Sequence

from embconf.grading.job import LOST, Job, alone_mark, grade, record_of, started_mark
from embconf.model.exits import signalled
from embconf.processes.tree import dies_with_parent


@dataclass
class Progress:
    """The run's count: ``total`` submissions, ``to_run`` of them graded now by ``jobs`` processes."""

    total: int
    to_run: int
    jobs: int
    done: int = 0  # records so far (reused ones included)
    ran: int = 0  # of to_run
    started: float = field(default_factory=time.monotonic)

    def header(self) -> str:
        side = f"{min(self.jobs, self.to_run)} at a time"
        return f"grading {self.to_run} of {self.total} submissions, {side} (Ctrl-C stops; what is graded is kept)"

    def line(self, name: str, what: str, ran: bool = True) -> str:
        """'[3/200] alice: 85/100  (eta 1m40s)' for the record that just arrived."""
        self.done += 1
        self.ran += ran
        left = self.to_run - self.ran
        eta = ""
        if ran and left > 0:
            seconds = (time.monotonic() - self.started) / self.ran * left
            eta = f"  (eta {_duration(seconds)})"
        return f"[{self.done}/{self.total}] {name}: {what}{eta}"

    def interrupted(self, out: object) -> str:
        return f"interrupted: {self.done} of {self.total} submissions graded, kept in {out}; the same command grades the rest"


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


WATCH_SECONDS = 1.0  # how often the runner looks at its grading processes while it waits


def run_jobs(
    jobs: Sequence[Job], workers: int, suspects: Collection[str] = ()
) -> Generator[dict[str, Any], None, None]:
    """Each job's record as it completes. A lost grading process (killed by the submission it ran, or by the
    out-of-memory killer) costs one submission: the jobs still queued are graded again in a fresh pool, those it
    (or its pool) was grading are each retried alone once, and a job lost alone too gets a ``lost`` record. The
    jobs named in ``suspects`` (being graded when an earlier run was killed) are graded alone, last."""
    if not jobs:
        return
    try:
        yield from _rounds(jobs, workers, suspects)
    finally:  # Ctrl-C included: nothing of the pool is left for the exit-time clean-up or the runner's kill
        _release_tracker()


def _rounds(jobs: Sequence[Job], workers: int, suspected: Collection[str]) -> Iterator[dict[str, Any]]:
    suspects = [job for job in jobs if job.submission.name in suspected]
    pending = [job for job in jobs if job not in suspects]
    while pending:
        lost = yield from _run(pending, workers)
        if lost is None:
            break
        # the jobs a grading process had taken up when the pool broke; every one left when the marks were removed
        taken = [job for job in lost.jobs if started_mark(job).exists()] or lost.jobs
        suspects += taken
        pending = [job for job in lost.jobs if job not in taken]
    for job in suspects:
        alone = alone_mark(job)  # left behind when this run is killed while grading it alone: the next run's clue
        alone.parent.mkdir(parents=True, exist_ok=True)
        alone.touch()
        lost = yield from _run([job], 1)
        if lost is not None:
            yield record_of(job.submission, job.hash, reason=lost.reason(), lost=True)
        alone.unlink(missing_ok=True)


@dataclass(frozen=True)
class Lost:
    """The jobs a broken pool left without a record, and how its processes ended (their exit codes)."""

    KILLED_RUN = "the run grading it alone was killed"

    jobs: list[Job]
    exits: tuple[Optional[int], ...] = ()
    how: str = ""  # what ended it, when no exit code says

    def reason(self) -> str:
        """One line for the gradebook: the signal that ended the process, when one did."""
        killed = sorted({-code for code in self.exits if code is not None and code < 0})
        names = ", ".join(_signal_name(number) for number in killed)
        how = f" (killed by {names})" if names else f" ({self.how})" if self.how else ""
        return (
            f"{LOST} twice{how}: the submission ended the process grading it, or the machine ran out of memory; "
            "the next run grades it again"
        )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _run(jobs: Sequence[Job], workers: int) -> Generator[dict[str, Any], None, Optional[Lost]]:
    """One pool over ``jobs``: their records as they complete; what was lost when a grading process died."""
    for job in jobs:
        started_mark(job).unlink(missing_ok=True)
    context = multiprocessing.get_context("spawn")
    _quiet_tracker()
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=max(1, min(workers, len(jobs))),
        mp_context=context,
        initializer=_start_grading_process,
        initargs=(os.getpid(),),
    ) as pool:
        with _interrupts_held():  # the processes start now, Ctrl-C held back until their initializer runs
            futures = {pool.submit(grade, job): job for job in jobs}
        processes = list((getattr(pool, "_processes", None) or {}).values())
        watch = _Watch(processes, max(2 * jobs[0].options.run_timeout, jobs[0].options.run_timeout + 120))
        try:
            left, broken = dict(futures), False
            while left and not broken:
                done, _ = concurrent.futures.wait(left, WATCH_SECONDS, concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    broken = isinstance(future.exception(), BrokenProcessPool)
                    if broken:
                        break  # every job without a record now has this exception too
                    yield _record(future, left.pop(future))
                if not done:
                    watch.check(list(left.values()))
            lost = []
            for future, job in left.items():
                if isinstance(future.exception(), BrokenProcessPool):
                    lost.append(job)
                else:  # completed before the pool broke
                    yield _record(future, job)
        except BaseException:
            watch.end_stopped()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            watch.end_stopped()  # the pool ends its processes with SIGTERM, which a stopped one never takes
            _quiet_tracker()  # the pool's semaphores are released below, to a tracker that is alive
    if not lost:
        return None
    return Lost(lost, how=watch.ended) if watch.ended else Lost(lost, tuple(p.exitcode for p in processes))


@dataclass
class _Watch:
    """Ends a grading process that cannot go on by itself: one stopped (a submission sent its grading process
    SIGSTOP), and every one when a submission holds one past ``deadline`` seconds (its own limits could not end it)."""

    processes: list[Any]
    deadline: float
    ended: str = ""  # why the runner ended a grading process
    held: dict[str, int] = field(default_factory=dict)  # watches (the runner running) a job was seen taken up
    stopped: set[int] = field(default_factory=set)  # pids seen stopped at the last watch

    def check(self, jobs: list[Job]) -> None:
        """One watch, about a second after the last: a stop seen twice (Ctrl-Z stops and continues the runner
        and its grading processes together, never one of them for a second) or a job held past the deadline
        (counted in watches, so a runner stopped for an hour holds nothing past it) ends them."""
        self.end_stopped(seen_before=True)
        for job in jobs:
            if started_mark(job).exists():
                self.held[job.submission.name] = self.held.get(job.submission.name, 0) + 1
        if max(self.held.values(), default=0) * WATCH_SECONDS > self.deadline:
            self._end(self.processes, f"graded for more than {self.deadline:g} s, then ended by the grader")

    def end_stopped(self, seen_before: bool = False) -> None:
        """End the grading processes that are stopped (with ``seen_before``, only those stopped at the last watch)."""
        now = {p.pid for p in self.processes if p.pid is not None and _state(p.pid) in ("T", "t")}
        for process in self.processes:
            if process.pid in now and (process.pid in self.stopped or not seen_before):
                self._end([process], "stopped by SIGSTOP, then ended by the grader")
        self.stopped = now

    def _end(self, processes: list[Any], why: str) -> None:
        self.ended = self.ended or why
        for process in processes:
            try:
                os.kill(process.pid, signal.SIGKILL)  # a stopped process takes no other signal
            except (OSError, TypeError):
                pass


def _state(pid: int) -> str:
    """The state letter of ``pid`` (``T``: stopped), from /proc; "" where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError, UnicodeDecodeError):
        return ""


def _record(future: concurrent.futures.Future, job: Job) -> dict[str, Any]:
    try:
        return dict(future.result())
    except Exception as exc:  # the grading machinery failed on it (never what the submission did): not a grade
        return record_of(job.submission, job.hash, reason=f"{LOST} ({type(exc).__name__}: {exc})"[:300], lost=True)


def _quiet_tracker() -> None:
    """Start multiprocessing's resource tracker, or start it again when a submission ended it (it is a process
    of this runner's, which a submission can find), with its stderr on the null device: the new one's complaints
    about the old one's semaphores, and the runner's warning that it relaunched it, are no business of the TA's.
    Every later (re)start goes the same way, whenever multiprocessing makes one (a register or unregister after
    a submission ended the tracker mid-run relaunches it there)."""
    from multiprocessing import resource_tracker

    tracker: Any = resource_tracker._resource_tracker
    if not getattr(tracker, "quiet", False):
        start = tracker.ensure_running  # the bound method: register and unregister call it on the instance

        def ensure_running() -> None:
            saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, 2)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    start()
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                os.close(null)

        tracker.ensure_running, tracker.quiet = ensure_running, True
    tracker.ensure_running()


def _release_tracker() -> None:
    """Release the shut-down pool's semaphores now (while the tracker runs) and stop the tracker cleanly, so that
    no later release finds it killed; a later pool starts a new one."""
    gc.collect()
    from multiprocessing import resource_tracker

    stop = getattr(resource_tracker._resource_tracker, "_stop", None)  # Python 3.11.? and later
    if stop is not None:
        try:
            stop()
        except OSError:  # already ended and reaped
            pass


def _start_grading_process(runner: int) -> None:
    """In a grading process: it dies with the runner (a runner a submission killed leaves none behind), Ctrl-C
    ends it at once, without a traceback (the runner speaks for it); one that came while it started (held back
    by the mask it inherited) ends it now."""
    dies_with_parent()
    if os.getppid() != runner:  # the runner died before this process could ask to die with it
        os._exit(1)
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(signalled(signum)))
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def _interrupts_held() -> Iterator[None]:
    """Ctrl-C held back (blocked, not lost) while the grading processes start: they inherit the blocked mask, so
    none prints a traceback from its start-up, and this process gets the interrupt when the block ends."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
