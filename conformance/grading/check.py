"""``embconf.check(...)``: a student's own check from Jupyter or a terminal.

``check(target)`` runs the suite on the student's module and returns a :class:`CheckResult`: in a
notebook its HTML shows the score, the verdict and each failure with its likely cause; printed, it is
the console report. ``target`` is a module (one loaded from a file runs isolated, as ``embconf run``
runs it), a notebook's namespace (``globals()``; it runs in the kernel, guarded but not isolated:
its live classes cannot be sent to another process), or a path to a module, a percent-format or
Jupyter notebook, or a package folder (staged as ``embconf grade`` stages a submission).
"""

from __future__ import annotations

import concurrent.futures
import io
import itertools
import multiprocessing
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from embconf.adapters import ImplementationError
from embconf.corpus.fixtures import load_corpus
from embconf.grading.job import cases_of, load_reason, run_fields, run_submission
from embconf.grading.notebook import Exported
from embconf.grading.rubric import load
from embconf.grading.score import Score, score
from embconf.grading.submissions import SubmissionProblem, classify, default_base, stage
from embconf.grading.template import render
from embconf.isolation import IsolationOptions
from embconf.model.record import RunRecord
from embconf.model.vocabulary import FIXTURES_DIR

TEMPLATE = Path(__file__).with_name("check_template.html")
_names = itertools.count()
Target = Union[str, Path, types.ModuleType, Mapping[str, Any], None]


class CheckError(Exception):
    """The target cannot be checked (it does not load, or is not a submission): one line."""


@dataclass
class CheckResult:
    run: RunRecord
    record: dict[str, Any]
    score: Score

    @property
    def verdict(self) -> str:
        return self.record["verdict"]["summary"]

    @property
    def passed(self) -> bool:
        return not self.failures()

    def failures(self) -> list[dict[str, Any]]:
        return [c for c in self.record["cases"] if c["outcome"] in ("fail", "error", "crash", "timeout")]

    def __str__(self) -> str:
        from embconf.reports.console import Console

        stream = io.StringIO()
        stream.write(f"score {self.score.total:g} / {self.score.max:g}: {self.verdict}\n\n")
        Console(stream, colour=False, quiet=True).report(self.run)
        return stream.getvalue()

    def _repr_html_(self) -> str:
        failures = [
            {
                "id": c["id"],
                "outcome": c["outcome"],
                "message": c["message"],
                "cause": (c["cause"]["title"] if c.get("cause") else "no known mistake matches"),
            }
            for c in self.failures()
        ]
        items = [
            {
                "name": s.item.name,
                "points": f"{s.points:g}",
                "max": f"{s.item.points:g}",
                "ok": "ok" if s.lost <= 0 else "lost",
            }
            for s in self.score.items
        ]
        return render(
            TEMPLATE.read_text(encoding="utf-8"),
            {
                "score": f"{self.score.total:g}",
                "max": f"{self.score.max:g}",
                "verdict": self.verdict,
                "colour": "#1e7d3a" if self.passed else "#b3261e",
                "counts": ", ".join(f"{n} {o}" for o, n in self.run.summary().items() if n),
                "items": items,
                "shown": failures[:50],
                "more": max(len(failures) - 50, 0),
            },
        )


def check(
    target: Target = None,
    *,
    rubric: Optional[Path] = None,
    base: Optional[Path] = None,
    options: Optional[IsolationOptions] = None,
) -> CheckResult:
    """Run the suite on ``target`` (default: the module ``tinytorch.core.embeddings``) and score it; ``options``
    default to a worker process with the default limits."""
    options = options or IsolationOptions()
    corpus = load_corpus(FIXTURES_DIR)
    chosen = load(rubric, corpus.cases)
    by_id = corpus.by_id()
    cases = [by_id[case_id] for case_id in chosen.case_ids(corpus.cases)]
    case_ids = tuple(case.id for case in cases)
    with tempfile.TemporaryDirectory(prefix="embconf-check-") as tmp:
        impl, options, exported = _impl(target, Path(tmp), base, options)
        if options.in_process:
            run = _run(impl, options, FIXTURES_DIR, case_ids, Path(tmp), exported)
        else:  # a fresh interpreter: nothing the kernel imported (another tinytorch) leaks into the worker
            context = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
                run = pool.submit(_run, impl, options, FIXTURES_DIR, case_ids, Path(tmp), exported).result()
        if target is not None and not isinstance(target, Mapping):  # name what the student gave, not the staged copy
            run.implementation = {**run.implementation, "name": getattr(target, "__name__", str(target))}
        record = {
            "name": "check",
            "entry": str(target),
            "kind": "",
            "status": "graded",
            "reason": "",
            **run_fields(run, Path(tmp)),
        }
    return CheckResult(run, record, score(record, chosen))


def _run(
    impl: str,
    options: IsolationOptions,
    fixtures: Path,
    case_ids: tuple[str, ...],
    tmp: Path,
    exported: Optional[Exported],
) -> RunRecord:
    try:
        return run_submission(impl, cases_of(fixtures, case_ids), options)
    except ImplementationError as exc:
        raise CheckError(load_reason(str(exc), tmp, exported)) from None


def _impl(target: Target, tmp: Path, base: Optional[Path], options: IsolationOptions):
    """(--impl string, isolation options, notebook export) for the target."""
    if target is None:
        return "tinytorch:tinytorch.core.embeddings", options, None
    if isinstance(target, Mapping) or (isinstance(target, types.ModuleType) and not getattr(target, "__file__", None)):
        return _namespace(target), IsolationOptions(in_process=True), None
    if isinstance(target, types.ModuleType):
        return f"tinytorch:{target.__file__}", options, None
    sub = classify(Path(target))
    try:
        module, exported = stage(sub, tmp / "work", (base or default_base()))
    except SubmissionProblem as exc:
        raise CheckError(str(exc)) from None
    return f"tinytorch:{module}", options, exported


def _namespace(target: Union[types.ModuleType, Mapping[str, Any]]) -> str:
    """Register a namespace as a module the TinyTorch adapter can load by name (in this process)."""
    if isinstance(target, types.ModuleType):
        module = target
    else:
        module = types.ModuleType(f"embconf_check_namespace_{next(_names)}")
        module.__dict__.update({k: v for k, v in target.items() if not k.startswith("__")})
    sys.modules[module.__name__] = module
    return f"tinytorch:{module.__name__}"
