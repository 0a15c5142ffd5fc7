"""Grading one submission: stage it, run it through :mod:`embconf.session` exactly as ``embconf run`` does
(isolated worker, timeouts, memory limit, diagnosis), and return its grading record: a plain dict derived
from the run record, cached and merged as JSON.

A submission that cannot be staged or loaded gets a ``problem`` record with its reason; nothing a
submission does can raise out of :func:`grade` (each runs in a worker process of its own).
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from embconf.adapters import ImplementationError
from embconf.grading.missing import missing_module
from embconf.grading.mistakes import case_cause, verdict
from embconf.grading.notebook import Exported
from embconf.grading.submissions import Submission, SubmissionProblem, stage
from embconf.isolation import IsolationOptions
from embconf.model.impl import Impl
from embconf.model.outcomes import CaseResult, Outcome
from embconf.model.record import RunRecord

RECORD_FORMAT = 6  # 3: each case's cause and the verdict's mistakes are the run record's verdict causes; 4: graded;
# 5: a case the implementation declined says so ("declined": true; "decided_by": "glue" when the adapter skipped it);
# 6: a not-applicable case names the features it needs that the submission does not claim ("unclaimed")
MESSAGE_CHARS = 1200  # of each failing case's message kept in the record
LOST = "the grading process was lost"  # a record saying so is never a grade: the next run grades it again


@dataclass(frozen=True)
class Job:
    submission: Submission
    hash: str
    work: Path
    base: Optional[Path]
    fixtures: Path
    case_ids: tuple[str, ...]
    options: IsolationOptions
    bench: bool = False  # also the ungraded embconf bench column (embconf grade --bench)


@lru_cache(maxsize=4)
def cases_of(fixtures: Path, case_ids: tuple[str, ...]) -> list:
    from embconf.corpus.fixtures import load_corpus

    by_id = load_corpus(fixtures).by_id()
    return [by_id[case_id] for case_id in case_ids]


def record_of(sub: Submission, digest: str, **fields: Any) -> dict[str, Any]:
    return {
        "record_format": RECORD_FORMAT,
        "name": sub.name,
        "entry": sub.entry.name,
        "kind": sub.kind,
        "hash": digest,
        "note": sub.note,
        "graded": sub.graded,
        "status": "problem",
        "reason": "",
        "duration_s": 0.0,
        "summary": {},
        "verdict": {},
        "cases": [],
        **fields,
    }


def is_lost(record: dict[str, Any]) -> bool:
    """Whether ``record`` says its grading process was lost (no grade: never reused, graded again)."""
    return bool(record.get("lost")) or str(record.get("reason", "")).startswith(LOST)


def started_mark(job: Job) -> Path:
    """The file saying a grading process took ``job`` up (left behind when that process is lost)."""
    return job.work.parent / ".started" / job.work.name


def alone_mark(job: Job) -> Path:
    """The file saying ``job`` is graded alone after its grading process was lost (left when the run is killed)."""
    return job.work.parent / ".alone" / job.work.name


def grade(job: Job) -> dict[str, Any]:
    """The record of one submission (never raises for anything the submission does)."""
    sub, started = job.submission, time.perf_counter()
    mark = started_mark(job)
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.touch()
    try:
        module, exported = stage(sub, job.work, job.base)
        record = _run(job, module, exported)
    except SubmissionProblem as exc:
        record = record_of(sub, job.hash, reason=str(exc))
    finally:
        shutil.rmtree(job.work, ignore_errors=True)
        mark.unlink(missing_ok=True)
    record["duration_s"] = round(time.perf_counter() - started, 3)
    return record


def _run(job: Job, module: Path, exported: Optional[Exported]) -> dict[str, Any]:
    cases = cases_of(job.fixtures, job.case_ids)
    try:
        run = run_submission(Impl("tinytorch", str(module)), cases, job.options)
    except ImplementationError as exc:
        raise SubmissionProblem(load_reason(str(exc), job.work, exported, job.submission.needs_base)) from None
    fields = run_fields(run, job.work)
    if job.bench:
        from embconf.bench.column import grade_column

        fields["bench"] = grade_column(Impl("tinytorch", str(module)), job.options)
    return record_of(job.submission, job.hash, status="graded", **fields)


def run_submission(impl: Impl, cases: list, options: IsolationOptions) -> RunRecord:
    """The submission run through the pipeline, as ``embconf run`` runs it; ImplementationError when it cannot load."""
    from embconf.session import RunOptions, run_implementation

    return run_implementation(impl, cases, RunOptions(isolation=options), fixtures={"cases": len(cases)})


def run_fields(run: RunRecord, work: Optional[Path] = None) -> dict[str, Any]:
    """The grading record's summary, verdict and cases, derived from the run record (messages naming ``work``
    made relative)."""
    provided, claimed = run.capabilities.operations, run.capabilities.all_features
    records = [
        {
            "id": r.id,
            "requirements": list(r.requirements),
            "operation": r.operation,
            "outcome": r.outcome.value,
            "provided": r.operation in provided,
            "message": _clean(r.message, work)[:MESSAGE_CHARS],
            "cause": case_cause(run, r),
            **({"declined": True} if r.declined else {}),
            **({"decided_by": r.decided_by} if r.declined and r.decided_by else {}),  # the adapter's skip (glue)
            **_unclaimed(r, claimed),
        }
        for r in run.results
    ]
    found = verdict(run)
    found["summary"] = _clean(found["summary"], work)
    return {"summary": run.summary(), "verdict": found, "cases": records}


def _unclaimed(result: CaseResult, claimed: frozenset[str]) -> dict[str, list[str]]:
    """``{"unclaimed": [...]}``: the features a not-applicable case needs that the submission does not claim (a
    rubric item naming them all counts the case as not attempted); {} for any other case."""
    if result.outcome is not Outcome.NOT_APPLICABLE or result.declined:
        return {}
    unclaimed = [feature for feature in result.features if feature not in claimed]
    return {"unclaimed": unclaimed} if unclaimed else {}


def load_reason(
    message: str, work: Path, exported: Optional[Exported] = None, based: bool = False, grading: bool = True
) -> str:
    """A load failure as the gradebook says it: 'does not import: SyntaxError at line 12 (invalid syntax)'."""
    message = _clean(message, work)
    found = re.match(r"cannot import '[^']*': (\w+)(?:: (.*))?$", message)
    if not found:
        return "does not load: " + re.sub(r"^(cannot load )?'tinytorch:[^']*': ", "", message)
    kind, text = found.group(1), (found.group(2) or "").strip()
    missing = missing_module(text, based, grading) if kind == "ModuleNotFoundError" else None
    if missing:
        return f"does not import: {missing}"
    line = re.search(r"\(([^()]*), line (\d+)\)$", text)
    if line and kind in ("SyntaxError", "IndentationError", "TabError"):
        at = exported.locate(int(line.group(2))) if exported is not None else f"line {line.group(2)}"
        return f"does not import: {kind} at {at} ({text[: line.start()].strip()})"
    return f"does not import: {kind}: {text}" if text else f"does not import: {kind}"


def _clean(text: str, work: Optional[Path]) -> str:
    """Messages name the submission's own files, not where they were staged."""
    if work is None:
        return text
    return text.replace(str(work) + "/", "").replace(str(work), ".")
