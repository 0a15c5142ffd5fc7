"""``embconf grade``: every submission of a folder graded independently and side by side, resumably.

Submissions run in a pool of ``jobs`` fresh interpreter processes (spawned, so none inherits another
submission's modules); each opens the submission's own isolated worker, as ``embconf run`` does. A
submission whose content hash matches its record in OUT_DIR is not run again (``force`` regrades). Its
record, feedback and results are written the moment it completes, so an interrupted run loses nothing
already graded; gradebook.csv and report.html are written from all records at the end (and on
interrupt). ``shard=(I, N)`` grades the submissions whose name hashes to I of N; :func:`merge` joins
the records of several OUT_DIRs into one. A record whose grading process was lost is never reused.
What the TA sees while it runs is :mod:`.pool`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from embconf.grading.files import check_writable
from embconf.grading.job import RECORD_FORMAT, Job, is_lost, record_of
from embconf.grading.outputs import write_class, write_submission
from embconf.grading.pool import Lost, Progress, run_jobs
from embconf.grading.roster import Roster
from embconf.grading.rubric import Rubric
from embconf.grading.submissions import Submission, content_hash, discover
from embconf.grading.uploads import MODULE_NAME, UploadRule
from embconf.isolation import IsolationOptions
from embconf.model.errors import UserError
from embconf.model.version import __version__
from embconf.untrusted.read import InputError, load_json, read_bounded

Say = Callable[[str], None]


class GradeUsageError(UserError):
    """Bad usage found before anything runs (exit 2, one line)."""


@dataclass
class Options:
    out: Path
    rubric: Rubric
    fixtures: Path
    case_ids: tuple[str, ...]
    manifest: str
    isolation: IsolationOptions = field(default_factory=IsolationOptions)
    base: Optional[Path] = None
    jobs: int = 1
    force: bool = False
    shard: Optional[tuple[int, int]] = None
    bench: bool = False  # the ungraded embconf bench column
    module_name: str = MODULE_NAME  # the file an upload of several files is graded by (uploads' rule 2)
    roster: Optional[Roster] = None  # --roster: students' ids and emails in the gradebook, and grades.csv
    default_base: bool = False  # no --base given: the base is the suite's example student

    @property
    def uploads(self) -> Path:
        """Where zip uploads are unpacked while the class is graded."""
        return (self.out / ".work" / "uploads").resolve()

    def rule(self) -> UploadRule:
        return UploadRule(self.module_name, self.uploads)


MAX_RECORD_BYTES = 16 << 20  # a submission's record (its cases' outcomes and messages): tens of kB
BASE_NEEDED = "are graded on a base package, and there is none: give --base PATH (a folder holding tinytorch/core)"


def require_base(subs: Sequence[Submission], base: Optional[Path]) -> None:
    """GradeUsageError, before anything runs, when a module or notebook would be graded without a base package."""
    needing = [sub.name for sub in subs if sub.needs_base]
    if base is None and needing:
        names = ", ".join(needing[:3]) + (", ..." if len(needing) > 3 else "")
        raise GradeUsageError(f"{len(needing)} module or notebook submission(s) ({names}) {BASE_NEEDED}")


def check_base(subs: Sequence[Submission], options: Options) -> None:
    """GradeUsageError or DefaultBaseError, before anything runs: no base for a module or notebook, or a default
    base that lacks what one imports."""
    require_base(subs, options.base)
    if options.default_base and options.base is not None:
        from embconf.grading.base_names import require_default_base_suffices

        require_default_base_suffices(subs, options.base)


def parse_shard(text: str) -> tuple[int, int]:
    """'I/N' with 1 <= I <= N."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise GradeUsageError(f"--shard {text!r}: expected I/N, e.g. 1/4") from None
    if not 1 <= index <= count:
        raise GradeUsageError(f"--shard {text!r}: I must be between 1 and N")
    return index, count


def in_shard(name: str, shard: Optional[tuple[int, int]]) -> bool:
    """Deterministic on the name alone: a submission stays in its shard when others are added."""
    if shard is None:
        return True
    return int(hashlib.sha256(name.encode()).hexdigest(), 16) % shard[1] == shard[0] - 1


def submissions(folder: Path, options: Options) -> list[Submission]:
    """The folder's submissions in this shard; GradeUsageError when there is nothing to grade."""
    if not folder.is_dir():
        raise GradeUsageError(f"{folder} is {'a file' if folder.exists() else 'missing'}, not a folder of submissions")
    reason = check_writable(options.out)
    if reason:
        raise GradeUsageError(reason)
    try:
        found = discover(folder, exclude=[options.out], rule=options.rule())
    except PermissionError as exc:
        raise GradeUsageError(f"cannot read {folder} ({exc.strerror or exc}): give the grader read access") from None
    if not found:
        raise GradeUsageError(
            f"{folder} holds no submissions (expected package folders, .py modules or notebooks, .ipynb notebooks)"
        )
    chosen = [sub for sub in found if in_shard(sub.name, options.shard)]
    check_base(chosen, options)
    return chosen


def grade_folder(folder: Path, options: Options, say: Say = print) -> list[dict[str, Any]]:
    """Grade every submission; the records (reused or new) in name order."""
    try:
        return _grade(submissions(folder, options), options, say)
    finally:  # staged copies and unpacked uploads (left by grading processes ended by Ctrl-C too)
        shutil.rmtree(options.out.resolve() / ".work", ignore_errors=True)


def _grade(subs: list[Submission], options: Options, say: Say) -> list[dict[str, Any]]:
    salt = json.dumps(
        [
            __version__,
            RECORD_FORMAT,
            options.manifest,
            options.case_ids,
            options.isolation.case_timeout,
            options.isolation.memory_limit_mb,
        ]
        + (["bench"] if options.bench else []),
        sort_keys=True,
    )
    work = (options.out / ".work").resolve()
    taken, alone = _left_by_a_killed_run(work)
    records: dict[str, dict[str, Any]] = {}
    jobs, problems, digests = [], [], {}
    for sub in subs:
        digest = digests[sub.name] = content_hash(sub, options.base, salt)
        cached = None if options.force else _cached(options.out, sub.name, digest)
        if cached is not None:
            records[sub.name] = cached
        elif sub.problem:
            problems.append(record_of(sub, digest, reason=sub.problem))
        elif sub.name in alone:  # it was graded alone when the last run was killed: not once more
            problems.append(record_of(sub, digest, reason=Lost([], how=Lost.KILLED_RUN).reason(), lost=True))
        else:
            jobs.append(
                Job(
                    sub,
                    digest,
                    work / sub.name,
                    options.base,
                    options.fixtures,
                    options.case_ids,
                    options.isolation,
                    options.bench,
                )
            )
    progress = Progress(len(subs), len(jobs), options.jobs, done=len(records))
    if records:
        say(f"{len(records)} of {len(subs)} submissions unchanged since they were graded (--force regrades them)")
    if jobs:
        say(progress.header())
    try:
        for record in problems:
            records[record["name"]] = _finish(options, record, say, progress, ran=False)
        with closing(run_jobs(jobs, options.jobs, taken)) as graded:  # an interrupt here shuts the pool down at once
            for record in graded:
                records[record["name"]] = _finish(options, record, say, progress)
    except KeyboardInterrupt:
        say(progress.interrupted(options.out))
        raise
    finally:  # on an interrupt too: every record on disk (one may have landed as the interrupt came)
        records.update(
            {
                name: found
                for name, digest in digests.items()
                if name not in records and (found := _cached(options.out, name, digest)) is not None
            }
        )
        done = sorted(records.values(), key=lambda r: r["name"])
        if done:
            write_class(options.out, done, options.rubric, options.roster)
    return done


def _left_by_a_killed_run(work: Path) -> tuple[set[str], set[str]]:
    """The submissions a killed run was grading, and those of them it was grading alone, by the marks it left
    (a run that ends, interrupted or not, removes them with its work folder); the marks are removed."""
    found = []
    for folder in (work / ".started", work / ".alone"):
        found.append({path.name for path in folder.iterdir()} if folder.is_dir() else set())
        shutil.rmtree(folder, ignore_errors=True)
    return found[0], found[1]


def _finish(options: Options, record: dict[str, Any], say: Say, progress: Progress, ran: bool = True) -> dict[str, Any]:
    result = write_submission(options.out, record, options.rubric)
    what = f"{result.total:g}/{result.max:g}" + (f"  ({record['reason']})" if record.get("reason") else "")
    say(progress.line(record["name"], what, ran))
    return record


def _cached(out: Path, name: str, digest: str) -> Optional[dict[str, Any]]:
    path = out / "records" / f"{name}.json"
    try:
        record = read_record(path)
    except (OSError, InputError):
        return None
    fresh = isinstance(record, dict) and record.get("hash") == digest
    return record if fresh and not is_lost(record) else None  # a lost grading process is no grade


def read_record(path: Path) -> Any:
    """The JSON of a record file of an output folder, read as untrusted input (a regular file of at most
    MAX_RECORD_BYTES, bounded nesting); InputError otherwise."""
    return load_json(read_bounded(path, MAX_RECORD_BYTES, "grading record"), str(path))


def merge(outputs: Sequence[Path], options: Options, say: Say = print) -> list[dict[str, Any]]:
    """Join the records of several OUT_DIRs (shards) into options.out: gradebook, report, feedback, results."""
    records: dict[str, dict[str, Any]] = {}
    for directory in outputs:
        folder = directory / "records"
        if not folder.is_dir():
            raise GradeUsageError(f"--merge {directory}: no records/ folder (not an embconf grade output)")
        for path in sorted(folder.glob("*.json")):
            try:
                record = read_record(path)
            except (OSError, InputError) as exc:
                raise GradeUsageError(f"--merge: {exc}") from None
            if not isinstance(record, dict) or not isinstance(record.get("name"), str):
                raise GradeUsageError(f"--merge: {path} is not a grading record (no 'name')")
            if record.get("record_format") != RECORD_FORMAT:  # an older record lacks what this rubric may read
                raise GradeUsageError(
                    f"--merge: {path} is a record of format {record.get('record_format')!r}, this embconf writes"
                    f" {RECORD_FORMAT}: grade that output again with this version"
                )
            earlier = records.get(record["name"])
            if earlier is not None and earlier.get("hash") != record.get("hash"):
                raise GradeUsageError(f"--merge: {record['name']!r} was graded differently in two outputs")
            records[record["name"]] = record
    if not records:
        raise GradeUsageError("--merge: the outputs hold no records")
    reason = check_writable(options.out)
    if reason:
        raise GradeUsageError(reason)
    for record in records.values():
        write_submission(options.out, record, options.rubric)
    done = sorted(records.values(), key=lambda r: r["name"])
    write_class(options.out, done, options.rubric, options.roster)
    say(f"merged {len(done)} records from {len(outputs)} outputs into {options.out}")
    return done


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
