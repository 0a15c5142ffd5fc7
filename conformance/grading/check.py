"""``embconf.check(...)``: a student's own check from Jupyter, ``python -i`` or a plain script.

``check(target)`` runs the suite on the student's module and returns a :class:`CheckResult`: in a
notebook its HTML shows the score, the verdict and each failure with its likely cause; printed, it is a
short text (:mod:`.check_text`); its repr is one line. ``target`` is a module (one loaded from a file
runs isolated, as ``embconf run`` runs it), a notebook's namespace (``globals()``; it runs in the kernel,
guarded but not isolated: its live classes cannot be sent to another process), or a path (``str`` or
``Path``) to a module, a percent-format or Jupyter notebook, a zip, or a package folder. A module that
sits in its own importable package (``tinytorch/core/embeddings.py`` beside the student's ``tensor.py``)
runs in place, on the student's package; any other file is staged as ``embconf grade`` stages a
submission, on ``base``, else the ``tinytorch`` this Python imports (the student's own), else the
example. Isolated runs start from a fresh interpreter (:mod:`.fresh`), so a script needs no ``if
__name__ == "__main__":``. A target that does not load is a result too: its one line says
why, and it scores 0.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shlex
import sys
import tempfile
import types
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Union

from embconf.adapters import ImplementationError
from embconf.adapters.loading import package_location
from embconf.corpus.fixtures import load_corpus
from embconf.grading import check_text, fresh
from embconf.grading.feedback import declined_note
from embconf.grading.job import cases_of, load_reason, run_fields, run_submission
from embconf.grading.notebook import Exported
from embconf.grading.rubric import load
from embconf.grading.score import Score, score
from embconf.grading.submissions import (
    MODULE_PATH,
    SubmissionProblem,
    UnreadableSubmission,
    classify,
    default_base,
    stage,
)
from embconf.grading.uploads import UploadRule
from embconf.isolation import IsolationOptions
from embconf.model.impl import Impl
from embconf.model.record import RunRecord
from embconf.model.vocabulary import FIXTURES_DIR

_names = itertools.count()
MAX_HELPERS = 50
REPR_CHARS = 200  # of the verdict in the one-line repr
PathLike = Union[str, "os.PathLike[str]"]
Target = Union[PathLike, types.ModuleType, Mapping[str, Any], None]


NOTHING_IMPORTABLE = (
    "no tinytorch package is importable here: run embconf.check() where `import tinytorch` finds your package (in the "
    "folder holding tinytorch/), or name what to check: embconf.check('embeddings.py') or, in a notebook, "
    "embconf.check(globals())"
)


class CheckError(Exception):
    """The target cannot be checked (it does not load, or is not a submission): one line."""


@dataclass
class CheckResult:
    run: Optional[RunRecord]  # None when the target could not be run (``problem`` says why)
    record: dict[str, Any]
    score: Score
    command: str = ""  # the embconf run command that shows every failure in full, as it runs ("" when none does)

    @property
    def problem(self) -> str:
        return str(self.record.get("reason", "")) if self.record["status"] != "graded" else ""

    @property
    def verdict(self) -> str:
        return self.problem or self.record["verdict"]["summary"] + declined_note(self.score)

    @property
    def passed(self) -> bool:
        return not self.problem and not self.failures()

    def failures(self) -> list[dict[str, Any]]:
        """The failing cases, and the declined and not attempted ones the rubric counts as failed (as ``embconf
        grade`` scores them)."""
        counted = {id(case) for item in self.score.items for case in item.failed}
        left_out = {id(case) for item in self.score.items for case in item.unattempted}
        return [
            c
            for c in self.record["cases"]
            if c["outcome"] in ("fail", "error", "crash", "timeout")
            or (c.get("declined") and id(c) in counted)
            or id(c) in left_out
        ]

    def declined(self) -> list[str]:
        """The ids of the cases the submission declined that the rubric counts as failed."""
        return [c["id"] for c in self.failures() if c.get("declined")]

    def unwritten(self) -> list[str]:
        """What the submission has not written yet (an API name missing, or raising NotImplementedError)."""
        return check_text.unwritten(self.record)

    def __str__(self) -> str:
        return check_text.text(self)

    def __repr__(self) -> str:
        return f"<embconf.check {self.score.total:g}/{self.score.max:g}: {clipped(self.verdict, REPR_CHARS)}>"

    def _repr_html_(self) -> str:
        return check_text.html(self)


def clipped(text: str, limit: int) -> str:
    """``text``, or its words that fit in ``limit`` characters followed by " ..." (never a word cut)."""
    if len(text) <= limit:
        return text
    return text[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:(") + " ..."


def check(
    target: Target = None,
    *,
    rubric: Optional[PathLike] = None,
    base: Optional[PathLike] = None,
    options: Optional[IsolationOptions] = None,
) -> CheckResult:
    """Run the suite on ``target`` (default: the module ``tinytorch.core.embeddings``) and score it; ``options``
    default to a worker process with the default limits. ``rubric`` and ``base`` are a ``str`` or a ``Path``."""
    options = options or IsolationOptions()
    corpus = load_corpus(FIXTURES_DIR)
    chosen = load(Path(rubric) if rubric is not None else None, corpus.cases)
    base_folder = Path(base).expanduser() if base is not None else None
    by_id = corpus.by_id()
    case_ids = tuple(by_id[case_id].id for case_id in chosen.case_ids(corpus.cases))
    entry = _entry(target)
    with tempfile.TemporaryDirectory(prefix="embconf-check-") as tmp:
        try:
            impl, options, exported, command = _impl(target, Path(tmp), base_folder, options)
            if options.in_process:
                run = _run(impl, options, FIXTURES_DIR, case_ids, Path(tmp), exported)
            else:  # a fresh interpreter: nothing the caller imported (another tinytorch) leaks into the worker
                run = fresh.call(_run, impl, options, FIXTURES_DIR, case_ids, Path(tmp), exported)
        except (CheckError, fresh.FreshError, UnreadableSubmission) as exc:
            record = {"name": "check", "entry": entry, "kind": "", "status": "problem", "reason": str(exc)}
            return CheckResult(None, {**record, "summary": {}, "verdict": {}, "cases": []}, score(record, chosen))
        if target is not None and not isinstance(target, Mapping):  # name what the student gave, not the staged copy
            run = run.named(entry)
        record = {
            "name": "check",
            "entry": entry,
            "kind": "",
            "status": "graded",
            "reason": "",
            **run_fields(run, Path(tmp) / "work"),
        }
    return CheckResult(run, record, score(record, chosen), command)


def _entry(target: Target) -> str:
    if target is None or isinstance(target, Mapping):
        return "tinytorch.core.embeddings" if target is None else "the notebook's namespace"
    if isinstance(target, types.ModuleType):
        return target.__name__
    return os.fspath(target) if isinstance(target, (str, os.PathLike)) else repr(target)[:200]


def _run(
    impl: Impl,
    options: IsolationOptions,
    fixtures: Path,
    case_ids: tuple[str, ...],
    tmp: Path,
    exported: Optional[Exported],
) -> RunRecord:
    try:
        return run_submission(impl, cases_of(fixtures, case_ids), options)
    except ImplementationError as exc:
        raise CheckError(load_reason(str(exc), tmp / "work", exported, grading=False)) from None


def _impl(target: Target, tmp: Path, base: Optional[Path], options: IsolationOptions):
    """(the implementation, isolation options, notebook export, the embconf run command) for the target."""
    if target is None:
        if not _importable("tinytorch"):
            raise CheckError(NOTHING_IMPORTABLE)
        return (
            Impl("tinytorch"),
            options,
            None,
            "embconf run",
        )  # the importable tinytorch's module 11 (core/, else text/)
    if isinstance(target, Mapping) or (isinstance(target, types.ModuleType) and not getattr(target, "__file__", None)):
        return _namespace(target), IsolationOptions(in_process=True), None, ""
    if isinstance(target, types.ModuleType):
        return Impl("tinytorch", str(target.__file__)), options, None, run_command(str(target.__file__))
    if not isinstance(target, (str, os.PathLike)):
        raise CheckError(f"cannot check a {type(target).__name__}: give a path, a module or globals()")
    path = Path(target).expanduser().resolve()
    if not path.exists():
        raise CheckError(f"{os.fspath(target)}: no such file or folder")
    if path.is_file() and path.suffix == ".py" and package_location(path)[1] is not None:
        return Impl("tinytorch", str(path)), options, None, run_command(str(path))  # in the student's own package
    sub = classify(path, UploadRule(scratch=tmp / "upload"))
    lone = sub.kind == "module" and sub.source == path  # the file itself, not a module of a zip or folder
    if lone:  # the student's modules beside it, importable as they are at home (an upload brings its own)
        sub.helpers = tuple(sorted(p for p in path.parent.glob("*.py") if p != path))[:MAX_HELPERS]
    base = base or importable_base() or default_base()
    if sub.needs_base and base is None:
        raise CheckError(
            f"{sub.graded}: a lone module is checked on a tinytorch package, and none is importable here; "
            "pass base=PATH (a folder holding tinytorch/)"
        )
    try:
        module, exported = stage(sub, tmp / "work", base)
    except SubmissionProblem as exc:
        raise CheckError(str(exc)) from None
    if sub.kind == "package" and sub.source is not None:
        command = run_command(str(sub.source / MODULE_PATH))
    elif lone and base is not None:  # on the base it was staged on
        command = run_command(str(path), base)  # PYTHONPATH: a shell may not import what this Python imports
    else:
        command = ""  # a notebook, or an upload of several files: no embconf run command runs it as it is
    return Impl("tinytorch", str(module)), options, exported, command


def run_command(module: str, base: Optional[Path] = None) -> str:
    """``embconf run --impl tinytorch:MODULE``, quoted, with ``PYTHONPATH=BASE`` when the module needs that base."""
    command = f"embconf run --impl {shlex.quote('tinytorch:' + module)}"
    return f"PYTHONPATH={shlex.quote(str(base))} {command}" if base is not None else command


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def importable_base() -> Optional[Path]:
    """The folder holding the ``tinytorch`` package this Python would import (the student's own), if any."""
    try:
        spec = importlib.util.find_spec("tinytorch")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        if (Path(location) / "core").is_dir():
            return Path(location).parent
    return None


def _namespace(target: Union[types.ModuleType, Mapping[str, Any]]) -> Impl:
    """Register a namespace as a module the TinyTorch adapter can load by name (in this process)."""
    if isinstance(target, types.ModuleType):
        module = target
    else:
        module = types.ModuleType(f"embconf_check_namespace_{next(_names)}")
        module.__dict__.update({k: v for k, v in target.items() if not k.startswith("__")})
    sys.modules[module.__name__] = module
    return Impl("tinytorch", module.__name__)
