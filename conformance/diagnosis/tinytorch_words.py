"""Causes in a TinyTorch student's language (a run of ``--impl tinytorch:``), after the run's claims are disciplined
and before its verdict is chosen, so that ``run``, ``grade``, ``gradescope`` and ``check`` all say them.

TinyTorch rejects bad input with ``ValueError`` whatever the reason (the adapter's coarse error detail), so:

- every hint says ``ValueError`` where it named one of the spec's error kinds (a student cannot raise
  "index_out_of_range"), and drops the reference to the spec's error-kind rule (EMB-ERR-1);
- a check written as ``assert`` (its frame's statement, measured by ``symptoms.errors``) is one mistake, whatever
  the input it refused: an AssertionError is no ValueError, and ``python -O`` removes every assert;
- a constructor that failed in the student's module names the class the case built (``EmbeddingLayer``) and the
  missing name (a NameError);
- a missing gradient is one mistake, whichever parameter or input shows it: a step computed outside the autograd
  graph (on ``.data``, or with no backward at all);
- a function still raising ``NotImplementedError`` is one mistake, "not written yet", named by the function and the
  line that raises, whichever operations reach it (an unwritten ``backward`` fails the lookup's and the layer's).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache

from embconf.corpus.fixtures import Case
from embconf.diagnosis.symptoms import OWN_BACKWARD
from embconf.diagnosis.symptoms.raised import CONSTRUCTOR
from embconf.model.record import Cause, RunRecord
from embconf.model.symptom import ASSERT_CHECK, NO_GRADIENT, UNWRITTEN, SymptomKey
from embconf.model.vocabulary import error_kinds

KIND = "tinytorch"
ASSERT_TITLE = (
    "checks its input with `assert`: TinyTorch rejects bad input with ValueError, and a failed assert raises "
    "AssertionError (and `python -O` removes every assert, leaving the input unchecked)"
)
ASSERT_HINT = 'write each check as `if <bad input>: raise ValueError("...")` instead of `assert`'
FIX = " -> "  # between a mutant's description and its fix, in its summary (mutants.base)
NO_GRADIENT_HINT = (
    "compute each step with Tensor operations on the parameter Tensor itself (indexing, slicing, reshape, +, *) or "
    "through a Function whose backward you wrote; a new Tensor made from `.data` is cut from the autograd graph"
)
UNWRITTEN_HINT = "write it: the module's docstring (and the notebook's text) say what it computes"
EXPORT_HINT = (
    "{name} is not defined where the constructor runs (neither its own variables nor the module define it): define "
    "or import it in the module, or, if the notebook defines it, export that cell (`#| export`)"
)


def speak_tinytorch(run: RunRecord, by_id: Mapping[str, Case]) -> None:
    """Every cause of a TinyTorch run said in TinyTorch's terms (nothing changes for any other implementation)."""
    if run.impl.kind != KIND:
        return
    module = module_file(str(run.implementation.get("name", "")))
    for result in run.results:
        case = by_id.get(result.id)
        if case is not None and result.causes:
            result.causes = [spoken(cause, case, module) for cause in result.causes]


def module_file(name: str) -> str:
    """The file name of the module under test, from the adapter's name for it (a path, or a dotted module)."""
    if name.endswith((".py", ".ipynb")):
        return re.split(r"[\\/]", name)[-1].replace(".ipynb", ".py")
    return name.rsplit(".", 1)[-1] + ".py"


def spoken(cause: Cause, case: Case, module: str) -> Cause:
    """One cause in TinyTorch's terms."""
    if not cause.is_mutant:
        if cause.measured.get("checked_by") == "assert" and case.expected_error:
            cause = replace(cause, key=ASSERT_CHECK, title=ASSERT_TITLE, hint=ASSERT_HINT, mistake=ASSERT_CHECK)
        elif cause.measured.get("constructor") == module and "exception" in cause.measured:
            cause = _constructor(cause, case)
        elif cause.measured.get("exception") == "NotImplementedError" and cause.measured.get("raised_at"):
            cause = _unwritten(cause)
        elif cause.symptom is not None and cause.symptom.family == NO_GRADIENT:
            hint = cause.hint if case.operation == OWN_BACKWARD else NO_GRADIENT_HINT  # its own: requires_grad
            cause = replace(cause, mistake=NO_GRADIENT, hint=hint)
    if cause.is_mutant and FIX in cause.summary:  # a mutant's summary carries its fix after the arrow
        said, _, fix = cause.summary.partition(FIX)
        cause = replace(cause, summary=f"{said}{FIX}{in_tinytorch(fix)}")
    return replace(cause, hint=in_tinytorch(cause.hint))


def _unwritten(cause: Cause) -> Cause:
    """A function still raising NotImplementedError: not written yet, one mistake wherever it is reached."""
    file, line, function = str(cause.measured["raised_at"]).split(":", 2)
    title = f"not written yet: `{function}` ({file} line {line}) still raises NotImplementedError"
    return replace(
        cause, title=title, summary=title, hint=UNWRITTEN_HINT, mistake=str(SymptomKey.of(UNWRITTEN, file, line))
    )


def _constructor(cause: Cause, case: Case) -> Cause:
    """The constructor failure, naming the class the case's operation builds first and the name it missed."""
    from embconf.adapters.tinytorch import REQUIRES

    built = REQUIRES.get(case.operation, ("",))[0]
    if not built[:1].isupper():  # a function (the sinusoidal table), not a class: keep the plain words
        return cause
    owner = f"the {built} constructor"
    missing = cause.measured.get("missing_name")
    return replace(
        cause,
        title=cause.title.replace(CONSTRUCTOR, owner, 1).replace("the object", f"the {built}", 1),
        summary=cause.summary.replace(CONSTRUCTOR, owner, 1).replace("the object", f"the {built}", 1),
        hint=EXPORT_HINT.format(name=missing) if missing else cause.hint,
    )


@lru_cache(maxsize=1)
def _kinds() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(an error kind after 'is', any error kind, each with an optional "the spec's")."""
    kinds = "|".join(sorted(error_kinds(), key=len, reverse=True))
    return re.compile(rf"\bis (?:the spec's )?(?:{kinds})\b"), re.compile(rf"(?:the spec's )?\b(?:{kinds})\b")


def in_tinytorch(hint: str) -> str:
    """A hint with ValueError for each of the spec's error kinds, without the error-kind rule's id."""
    after_is, kind = _kinds()
    hint = re.sub(r"\s*\(EMB-ERR-1\)", "", hint)
    return kind.sub("ValueError", after_is.sub("is a ValueError", hint))
