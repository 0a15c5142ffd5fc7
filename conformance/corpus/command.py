"""``embconf list``, ``show``, ``validate``, ``regenerate`` and ``coverage``, and the options every command that reads the
corpus shares (``--fixtures`` and the selection, read into a :class:`Selection`)."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from embconf.model import exits
from embconf.model.errors import UserError
from embconf.untrusted.arguments import typed

if TYPE_CHECKING:
    from embconf.corpus.fixtures import Case


def add_fixtures(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fixtures", type=Path, help="fixture directory (default: the suite's own)")


def add_selection(parser: argparse.ArgumentParser) -> None:
    add_fixtures(parser)
    parser.add_argument(
        "--select", "-k", action="append", default=[], metavar="GLOB", help="only case ids matching GLOB (repeatable)"
    )
    parser.add_argument(
        "--requirement",
        "-r",
        action="append",
        default=[],
        metavar="ID",
        help="only cases pinning requirement ID or GLOB (repeatable)",
    )
    parser.add_argument(
        "--feature",
        "-f",
        action="append",
        default=[],
        metavar="NAME",
        help="only cases tagged with feature NAME (repeatable; 'none' for untagged)",
    )


@dataclass(frozen=True)
class Selection:
    """The corpus options of :func:`add_selection` as given: the fixture directory (None: the suite's own) and
    the case ids, requirements and features chosen (each empty: every case)."""

    fixtures: Optional[Path] = None
    select: tuple[str, ...] = ()
    requirement: tuple[str, ...] = ()
    feature: tuple[str, ...] = ()

    @classmethod
    def read(cls, args: argparse.Namespace) -> Selection:
        return typed(
            cls, args, select=tuple(args.select), requirement=tuple(args.requirement), feature=tuple(args.feature)
        )


def corpus_of(fixtures: Optional[Path], allow_modified: bool = False) -> Any:
    """The corpus ``--fixtures`` names (None: the suite's own); UserError (one line) when it cannot be used."""
    from embconf.corpus.fixtures import FixtureError, load_corpus
    from embconf.model.vocabulary import FIXTURES_DIR

    try:
        return load_corpus(fixtures or FIXTURES_DIR, allow_modified=allow_modified)
    except FixtureError as exc:
        raise UserError(f"fixture problem: {exc}") from None


def selected(selection: Selection, allow_modified: bool = False) -> tuple[Any, list]:
    """The corpus and the cases the selection options choose; UserError when none."""
    from embconf.corpus.select import select

    corpus = corpus_of(selection.fixtures, allow_modified)
    cases = select(corpus.cases, selection.select, selection.requirement, selection.feature)
    if not cases:
        raise UserError("the selection matches no case (see `embconf list`)")
    return corpus, cases


def register(sub: Any) -> None:
    lst = sub.add_parser("list", help="list cases, requirements or features")
    lst.add_argument("what", nargs="?", choices=("cases", "requirements", "features"), default="cases")
    add_selection(lst)
    lst.set_defaults(handler=lambda args: list_command(args.what, Selection.read(args)))

    show = sub.add_parser("show", help="print one case's inputs and expected values")
    show.add_argument("case_id")
    add_fixtures(show)
    show.set_defaults(handler=lambda args: show_command(args.case_id, args.fixtures))

    validate = sub.add_parser("validate", help="check every fixture file against the schema and the spec")
    add_fixtures(validate)
    validate.set_defaults(handler=lambda args: validate_command(args.fixtures))

    regen = sub.add_parser("regenerate", help="write the fixtures from the reference (or --check them)")
    regen.add_argument(
        "--check", action="store_true", help="regenerate in memory; exit 1 naming every case that differs"
    )
    add_fixtures(regen)
    regen.set_defaults(handler=lambda args: regenerate_command(args.fixtures, args.check))

    cover = sub.add_parser(
        "coverage", help="the allowed pairs of boundary values and error boundaries the goldens cover"
    )
    cover.add_argument("--area", help="one family (a spec area)")
    cover.add_argument("--missing", action="store_true", help="list each pair and error boundary no golden covers")
    cover.add_argument("--covered", action="store_true", help="list each covered one with the case that covers it")
    cover.add_argument("--json", type=Path, metavar="FILE", help="write the figures and lists as JSON ('-': stdout)")
    cover.add_argument(
        "--fail-under", type=float, metavar="PERCENT", help="exit 1 when a family is covered less than PERCENT"
    )
    add_fixtures(cover)
    cover.set_defaults(handler=lambda args: coverage_command(typed(CoverageOptions, args)))


def list_command(what: str, selection: Selection) -> int:
    from embconf.model.vocabulary import features, requirement_order

    _, cases = selected(selection)
    if what == "cases":
        for case in cases:
            tags = f"  [{', '.join(case.features)}]" if case.features else ""
            print(f"{case.id:<48} {case.operation:<28} {' '.join(case.requirements)}{tags}")
        print(f"{len(cases)} cases")
    elif what == "requirements":
        counts: dict[str, int] = {}
        for case in cases:
            for req in case.requirements:
                counts[req] = counts.get(req, 0) + 1
        for req in sorted(counts, key=requirement_order):
            print(f"{req:<12} {counts[req]} cases")
    else:
        for name, meaning in features().items():
            print(f"{name:<24} {sum(name in c.features for c in cases):>3} cases  {meaning}")
        print_sinusoid_family()
    return exits.OK


def print_sinusoid_family() -> None:
    """The sinusoid family's parameters and profiles (EMB-SIN-6): every convention an implementation can declare."""
    from embconf.model.sinusoid import named_profiles
    from embconf.model.vocabulary import vocabulary

    family = vocabulary()["sinusoid_family"]
    print("\nSinusoid family (EMB-SIN-6), declared as sinusoid_parameters (a parameter left out is canonical):")
    for name, entry in family["parameters"].items():
        values = entry["values"] if isinstance(entry["values"], str) else ", ".join(entry["values"])
        print(f"  {name:<11} {values} (canonical {entry['canonical']}): {entry['description']}")
    print("Named profiles, declared as sinusoid_convention:")
    for name, point in named_profiles().items():
        print(f"  {name:<17} {point.describe()}: {point.parameters_text()}")


def show_command(case_id: str, fixtures: Optional[Path]) -> int:
    corpus = corpus_of(fixtures)
    case = corpus.by_id().get(case_id)
    if case is None:
        close = [c.id for c in corpus.cases if case_id in c.id][:5]
        raise UserError(
            f"no case {case_id!r}" + (f"; did you mean {', '.join(close)}?" if close else " (see `embconf list`)")
        )
    print_case(case)
    return exits.OK


def print_case(case: Case) -> None:
    """A case as ``embconf show`` prints it: its id, description, requirements, inputs and golden."""
    import numpy as np

    np.set_printoptions(threshold=200, linewidth=110, precision=9, floatmode="maxprec")
    print(f"{case.id}  ({case.source})\n  {case.description}")
    print(
        f"operation:    {case.operation}\nrequirements: {', '.join(case.requirements)}\nfeatures:     {', '.join(case.features) or '-'}"
    )
    for call in case.calls or (case,):
        if case.is_sequence:  # a case of calls on one instance (spec section 9.7): each call in turn
            print(f"call {len(call.before) + 1} of {len(case.calls)} on one instance: {call.operation}")
        _show_call(call)


def _show_call(case: Case) -> None:
    """One call's inputs, and its expected error or outputs with their tolerances."""
    print("inputs:")
    for name, value in case.inputs().items():
        _print_value(name, value, case.raw_inputs[name])
    if case.expected_error:
        print(f"expected error: {case.expected_error}")
        return
    print("expected outputs:")
    for name, value in case.expected_outputs.items():
        _print_value(name, value, case.raw_expected["outputs"][name])
        print(f"    tolerance: {_tolerance_text(case.tolerance.get(name, {}))}")


def _tolerance_text(tol: dict) -> str:
    if tol.get("kind") != "close":
        return "exact"
    text = f"|actual - expected| <= {tol['atol']:.3g} + {tol['rtol']:.3g} * |expected|"
    if "position" in tol:
        p = tol["position"]
        text += f" + {p['ulps']:g} * spacing(pos), pos = {p['offset']} + index on axis {p['axis']}"
    return text + (f"\n      ({tol['rule']})" if tol.get("rule") else "")


def _print_value(name: str, value: Any, raw: Any) -> None:
    import numpy as np

    if isinstance(value, np.ndarray):
        rows = (
            f", rows {raw['rows'][:8]}{'...' if len(raw['rows']) > 8 else ''} of shape {raw['shape']}"
            if "rows" in raw
            else ""
        )
        print(f"  {name}: {value.dtype} {list(value.shape)}{rows}")
        print("    " + str(value).replace("\n", "\n    "))
    else:
        print(f"  {name}: {value!r}")


def validate_command(fixtures: Optional[Path]) -> int:
    from embconf.corpus.validate import validate_directory
    from embconf.model.dtypes import BFLOAT16_HINT, have_bfloat16
    from embconf.model.vocabulary import FIXTURES_DIR

    problems, count = validate_directory(fixtures or FIXTURES_DIR)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(
        f"{count} cases checked, {len(problems)} problems"
        + ("" if have_bfloat16() else f" (bfloat16 values not decoded: {BFLOAT16_HINT})")
    )
    return exits.failed_if(problems)


def regenerate_command(fixtures: Optional[Path], check: bool) -> int:
    from embconf.corpus.committed import differences
    from embconf.model.dtypes import BFLOAT16_HINT, have_bfloat16
    from embconf.model.vocabulary import FIXTURES_DIR
    from embconf.reference import generate
    from embconf.reference.arithmetic import mpmath_problem

    if not have_bfloat16():  # the corpus has bfloat16 cases; without ml_dtypes they cannot be built
        raise UserError(f"cannot regenerate the bfloat16 cases: {BFLOAT16_HINT}")
    if mpmath_problem():  # the goldens are exact (spec section 8.2)
        raise UserError(f"cannot regenerate the goldens: {mpmath_problem()}")
    directory = fixtures or FIXTURES_DIR
    if check:
        problems = differences(directory)
        for problem in problems:
            print(problem, file=sys.stderr)
        print(
            f"fixtures {'differ from the reference' if problems else 'match the reference'} ({len(problems)} differences)"
        )
        return exits.failed_if(problems)
    for name in generate.file_names():  # refused before the goldens are computed, which takes a while
        _regular_or_absent(directory / name)
    try:
        files = generate.write(directory)
    except OSError as exc:
        raise UserError(f"cannot write the fixtures: {exc.filename or directory}: {exc.strerror or exc}") from None
    print(f"wrote {len(files)} files to {directory}")
    return exits.OK


def _regular_or_absent(path: Path) -> None:
    """UserError (one line) unless ``path`` is a regular file or nothing: regenerate writes no link, FIFO or device."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"cannot write the fixtures: {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise UserError(f"cannot write the fixtures: {path} is not a regular file (a link, FIFO, device or folder)")


@dataclass(frozen=True)
class CoverageOptions:
    """The options of ``embconf coverage`` as given."""

    area: Optional[str] = None
    missing: bool = False
    covered: bool = False
    json: Optional[Path] = None
    fail_under: Optional[float] = None
    fixtures: Optional[Path] = None


def coverage_command(given: CoverageOptions) -> int:
    """Each family's pairs and error boundaries covered (:mod:`embconf.corpus.coverage`); exit 1 only under
    ``--fail-under`` with a family below it."""
    import json

    from embconf.corpus import coverage
    from embconf.model.family import families
    from embconf.untrusted.write import OutputTarget

    if given.area is not None and given.area not in families():
        raise UserError(f"no operation family {given.area!r}; known: {', '.join(families())}")
    if given.fail_under is not None and not 0 <= given.fail_under <= 100:
        raise UserError(f"--fail-under takes a percentage from 0 to 100, not {given.fail_under:g}")
    target = OutputTarget.check(given.json) if given.json is not None else None  # before the work
    measured = coverage.measure(corpus_of(given.fixtures).cases, given.area)
    if target is None or not target.is_stdout:
        print("\n".join(coverage.report_lines(measured, given.missing, given.covered)))
    if target is not None:
        target.write_text(json.dumps(coverage.as_json(measured), indent=1) + "\n")
    limit = given.fail_under
    below = [found.family.area for found in measured if limit is not None and found.below(limit)]
    if below:
        print(f"covered less than {limit:g}%: {', '.join(below)}")
    return exits.failed_if(below)
