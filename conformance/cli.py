"""The ``embconf`` command line: run, list, show, validate, regenerate, mutants, explain, grade, gradescope, bench.

Exit codes: 0 every applicable case passed (xfails allowed); 1 a case failed,
errored, crashed or timed out (or xpassed under --strict); 2 bad usage, a
missing implementation or a fixture problem, with a one-line reason.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

if TYPE_CHECKING:
    from embconf.isolation import IsolationOptions

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Anything that makes the run meaningless: reported in one line, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="embconf", description="Conformance suite for embedding layers.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="validate an implementation against the golden cases")
    run.add_argument("--impl", help="KIND:TARGET (reference, functions:FILE_OR_MODULE, tinytorch:FILE_OR_MODULE, torch, subprocess:'CMD ARGS'); default: the TinyTorch module tinytorch.core.embeddings")
    _add_selection(run)
    run.add_argument("--expectations", type=Path, help="YAML file of cases known to fail, each with a reason")
    run.add_argument("--write-expectations", type=Path, metavar="FILE", help="write the cases that failed in this run as an expectations file (listed reasons are kept)")
    run.add_argument("--report-json", type=Path, help="write the JSON report here (- for stdout; the console then goes to stderr)")
    run.add_argument("--junit", type=Path, help="write JUnit XML here (- for stdout)")
    run.add_argument("--strict", action="store_true", help="an xpass (a listed failure that now passes), an expectation that matches no case, and a case whose result changes under --repeat fail the run")
    run.add_argument("--allow-modified-fixtures", action="store_true", help="run on fixture files whose hash differs from the manifest (the report says so)")
    run.add_argument("--no-colour", "--no-color", dest="colour", action="store_false", default=None, help="no ANSI colour even on a terminal")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    run.add_argument("--validate-protocol", action="store_true", help="subprocess implementations: check every message the implementation sends against spec/schemas/protocol-*")
    run.add_argument("--in-process", action="store_true", help="run the implementation inside the runner, not in a worker process (for debugging: no timeouts, no crash protection)")
    run.add_argument("--case-timeout", "--timeout", dest="case_timeout", type=float, metavar="SECONDS", help="seconds each case may take before the implementation's process is killed and restarted (default 10; subprocess implementations: also $EMBCONF_TIMEOUT)")
    run.add_argument("--run-timeout", type=float, default=1800.0, metavar="SECONDS", help="seconds the whole run may take, all --repeat runs included; later cases time out (default 1800)")
    run.add_argument("--memory-limit", type=int, default=4096, metavar="MB", help="resident memory the implementation's processes (worker or protocol peer, and their children) may hold, in MB; 0 for none (default 4096)")
    run.add_argument("--repeat", type=int, default=1, metavar="N", help="run every case N times and report cases whose result changes (a failure with --strict)")

    lst = sub.add_parser("list", help="list cases, requirements or features")
    lst.add_argument("what", nargs="?", choices=("cases", "requirements", "features"), default="cases")
    _add_selection(lst)

    show = sub.add_parser("show", help="print one case's inputs and expected values")
    show.add_argument("case_id")
    _add_fixtures(show)

    validate = sub.add_parser("validate", help="check every fixture file against the schema and the spec")
    _add_fixtures(validate)

    regen = sub.add_parser("regenerate", help="write the fixtures from the reference (or --check them)")
    regen.add_argument("--check", action="store_true", help="regenerate in memory; exit 1 naming every case that differs")
    _add_fixtures(regen)

    mutants = sub.add_parser("mutants", help="list the catalogue of known mistakes and which cases kill each (the kill rate)")
    _add_fixtures(mutants)
    mutants.add_argument("--diagnosis", action="store_true",
                         help="measure the diagnosis instead: kill rate, right mutant ranked first, a student corpus, correct implementations")
    mutants.add_argument("--students", type=Path, metavar="DIR", help="with --diagnosis: a corpus of wrong modules with SYMPTOM attributes")
    mutants.add_argument("--correct", action="append", metavar="KIND:TARGET", default=None,
                         help="with --diagnosis: a correct implementation that must get no failure and no diagnosis (repeatable)")

    matrix = sub.add_parser("matrix", help="run several implementations and lay them side by side, requirement by requirement")
    matrix.add_argument("--impl", action="append", required=True, metavar="KIND:TARGET", help="an implementation (repeatable: one column each)")
    _add_selection(matrix)
    for flag in ("--markdown", "--html", "--json"):
        matrix.add_argument(flag, type=Path, metavar="FILE", help=f"write the matrix as {flag[2:]} here")
    matrix.add_argument("--case-timeout", type=float, metavar="SECONDS", help="as for run")
    matrix.add_argument("--memory-limit", type=int, default=4096, metavar="MB", help="as for run (0 for none)")
    matrix.add_argument("--in-process", action="store_true", help="as for run")
    matrix.set_defaults(run_timeout=1800.0, repeat=1, validate_protocol=False)

    explain = sub.add_parser("explain", help="explain a mutant (its mistake, fix and killing cases) or a case (the mutants it kills)")
    explain.add_argument("id", help="a mutant id (e.g. bwd.overwrite) or a case id")
    _add_fixtures(explain)

    from embconf.grading import command as grading

    grading.add_grade(sub.add_parser("grade", help="grade a folder of submissions: gradebook, feedback, Gradescope results, class report"))
    grading.add_gradescope(sub.add_parser("gradescope", help="grade one submission in Gradescope's container (writes results.json)"))
    from embconf.bench import command as bench

    bench.add_bench(sub.add_parser("bench", help="time lookup and scatter-add against this machine's memory-copy roof; peak memory"))
    return parser


def _add_fixtures(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fixtures", type=Path, help="fixture directory (default: the suite's own)")


def _add_selection(parser: argparse.ArgumentParser) -> None:
    _add_fixtures(parser)
    parser.add_argument("--select", "-k", action="append", default=[], metavar="GLOB", help="only case ids matching GLOB (repeatable)")
    parser.add_argument("--requirement", "-r", action="append", default=[], metavar="ID", help="only cases pinning requirement ID or GLOB (repeatable)")
    parser.add_argument("--feature", "-f", action="append", default=[], metavar="NAME", help="only cases tagged with feature NAME (repeatable; 'none' for untagged)")


def select(cases: Iterable, globs: Sequence[str] = (), requirements: Sequence[str] = (), features: Sequence[str] = ()) -> list:
    """The cases that match every given filter (each filter: any of its values)."""
    chosen = []
    for case in cases:
        if globs and not any(fnmatch.fnmatchcase(case.id, g) for g in globs):
            continue
        if requirements and not any(fnmatch.fnmatchcase(r, want) for r in case.requirements for want in requirements):
            continue
        if features and not any((f in case.features) or (f == "none" and not case.features) for f in features):
            continue
        chosen.append(case)
    return chosen


def _corpus(args: argparse.Namespace, allow_modified: bool = False):
    from embconf.corpus.fixtures import FixtureError, load_corpus
    from embconf.model.vocabulary import FIXTURES_DIR

    try:
        return load_corpus(args.fixtures or FIXTURES_DIR, allow_modified=allow_modified)
    except FixtureError as exc:
        raise UsageError(f"fixture problem: {exc}") from None


def _selected(args: argparse.Namespace, allow_modified: bool = False):
    corpus = _corpus(args, allow_modified)
    cases = select(corpus.cases, args.select, args.requirement, args.feature)
    if not cases:
        raise UsageError("the selection matches no case (see `embconf list`)")
    return corpus, cases


def cmd_run(args: argparse.Namespace) -> int:
    from embconf.adapters import DEFAULT_IMPL
    from embconf.run.guard import run_repeated
    from embconf.corpus.expectations import Expectations, ExpectationsError
    from embconf.model.outcomes import PROBLEMS, XPASS
    from embconf.untrusted.write import ConsoleStream, OutputError
    from embconf.reports.console import Console
    from embconf.reports.targets import ReportTargets
    from embconf.diagnosis import diagnose_run

    try:  # before anything runs: a bad report path costs no run
        targets = ReportTargets.check(args.report_json, args.junit, args.write_expectations)
    except OutputError as exc:
        raise UsageError(str(exc)) from None
    out = ConsoleStream(targets.console_stream())  # a reader that goes away (| head) ends no run
    impl = DEFAULT_IMPL if args.impl is None else args.impl
    adapter = _open(impl, args)  # the implementation starts up while the fixtures load
    try:
        corpus, cases = _selected(args, allow_modified=args.allow_modified_fixtures)
        try:
            expectations = Expectations.load(args.expectations) if args.expectations else None
        except ExpectationsError as exc:
            raise UsageError(str(exc)) from None
        _checked(args, adapter.capabilities)
        console = Console(out, colour=args.colour, quiet=args.quiet)
        run, nondeterministic = run_repeated(adapter, cases, expectations, args.repeat, console.progress, args.strict)
        diagnose_run(run, cases)
    finally:
        adapter.close()
    fixtures = {"manifest_sha256": corpus.manifest_sha256, "modified": corpus.modified_files, "cases": len(cases)}
    notes, write_errors = targets.write(run, impl, fixtures)  # before the console, which may have no reader
    note = f"warning: ran on MODIFIED fixture files: {', '.join(corpus.modified_files)}" if corpus.modified_files else ""
    console.report(run, note)
    for case_id, change in nondeterministic.items():
        print(f"note: {case_id}: {change}", file=out)
    for line in notes:
        print(line, file=out)
    for line in write_errors:
        print(f"embconf: {line}", file=sys.stderr)
    bad = [r for r in run.results if r.outcome in PROBLEMS or (args.strict and r.outcome == XPASS)]
    stale = args.strict and run.unmatched_expectations
    if stale:
        print(f"embconf: --strict: {len(run.unmatched_expectations)} expectation(s) match no case; remove them", file=sys.stderr)
    if write_errors:
        return EXIT_USAGE
    return EXIT_FAIL if bad or stale else EXIT_OK


def _open(impl: str, args: argparse.Namespace):
    """The adapter ``impl`` names, started; UsageError (one line) when it cannot be."""
    from embconf.isolation import open_adapter

    return _checked(args, lambda: open_adapter(impl, _isolation(args), timeout=args.case_timeout,
                                               validate_protocol=args.validate_protocol))


def _checked(args: argparse.Namespace, step):
    """``step()``, with an implementation that cannot be loaded reported as a one-line usage error."""
    from embconf.adapters import ImplementationError

    try:
        return step()
    except ImplementationError as exc:
        if args.impl is None:
            raise UsageError(f"no --impl given and the default TinyTorch module is not importable ({exc}); name one with --impl KIND:TARGET, e.g. --impl tinytorch:path/to/embeddings.py or --impl reference") from None
        raise UsageError(str(exc)) from None


def _isolation(args: argparse.Namespace) -> IsolationOptions:
    """The worker-process options of ``run``, checked."""
    from embconf.isolation import DEFAULT_CASE_TIMEOUT, IsolationOptions
    from embconf.processes.limits import LimitError

    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    try:
        return IsolationOptions(args.in_process, DEFAULT_CASE_TIMEOUT if args.case_timeout is None else args.case_timeout,
                                args.run_timeout, args.memory_limit)
    except LimitError as exc:
        raise UsageError(str(exc)) from None


def cmd_list(args: argparse.Namespace) -> int:
    from embconf.model.vocabulary import features

    corpus, cases = _selected(args)
    if args.what == "cases":
        for case in cases:
            tags = f"  [{', '.join(case.features)}]" if case.features else ""
            print(f"{case.id:<48} {case.operation:<28} {' '.join(case.requirements)}{tags}")
        print(f"{len(cases)} cases")
    elif args.what == "requirements":
        counts: dict[str, int] = {}
        for case in cases:
            for req in case.requirements:
                counts[req] = counts.get(req, 0) + 1
        for req in sorted(counts):
            print(f"{req:<12} {counts[req]} cases")
    else:
        for name, meaning in features().items():
            print(f"{name:<24} {sum(name in c.features for c in cases):>3} cases  {meaning}")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    import numpy as np

    corpus = _corpus(args)
    case = corpus.by_id().get(args.case_id)
    if case is None:
        close = [c.id for c in corpus.cases if args.case_id in c.id][:5]
        raise UsageError(f"no case {args.case_id!r}" + (f"; did you mean {', '.join(close)}?" if close else " (see `embconf list`)"))
    np.set_printoptions(threshold=200, linewidth=110, precision=9, floatmode="maxprec")
    print(f"{case.id}  ({case.source})\n  {case.description}")
    print(f"operation:    {case.operation}\nrequirements: {', '.join(case.requirements)}\nfeatures:     {', '.join(case.features) or '-'}")
    print("inputs:")
    for name, value in case.inputs().items():
        _print_value(name, value, case.raw_inputs[name])
    if case.expected_error:
        print(f"expected error: {case.expected_error}")
    else:
        print("expected outputs:")
        for name, value in case.expected_outputs.items():
            _print_value(name, value, case.raw_expected["outputs"][name])
            print(f"    tolerance: {_tolerance_text(case.tolerance.get(name, {}))}")
    return EXIT_OK


def _tolerance_text(tol: dict) -> str:
    if tol.get("kind") != "close":
        return "exact"
    text = f"|actual - expected| <= {tol['atol']:.3g} + {tol['rtol']:.3g} * |expected|"
    if "position" in tol:
        p = tol["position"]
        text += f" + {p['ulps']:g} * spacing(pos), pos = {p['offset']} + index on axis {p['axis']}"
    return text + (f"\n      ({tol['rule']})" if tol.get("rule") else "")


def _print_value(name: str, value, raw) -> None:
    import numpy as np

    if isinstance(value, np.ndarray):
        rows = f", rows {raw['rows'][:8]}{'...' if len(raw['rows']) > 8 else ''} of shape {raw['shape']}" if "rows" in raw else ""
        print(f"  {name}: {value.dtype} {list(value.shape)}{rows}")
        print("    " + str(value).replace("\n", "\n    "))
    else:
        print(f"  {name}: {value!r}")


def cmd_validate(args: argparse.Namespace) -> int:
    from embconf.corpus.validate import validate_directory
    from embconf.model.vocabulary import FIXTURES_DIR

    problems, count = validate_directory(args.fixtures or FIXTURES_DIR)
    for problem in problems:
        print(problem, file=sys.stderr)
    from embconf.model.dtypes import BFLOAT16_HINT, HAVE_BFLOAT16

    print(f"{count} cases checked, {len(problems)} problems" + ("" if HAVE_BFLOAT16 else f" (bfloat16 values not decoded: {BFLOAT16_HINT})"))
    return EXIT_FAIL if problems else EXIT_OK


def cmd_regenerate(args: argparse.Namespace) -> int:
    from embconf.model.dtypes import BFLOAT16_HINT, HAVE_BFLOAT16
    from embconf.reference import generate
    from embconf.model.vocabulary import FIXTURES_DIR

    if not HAVE_BFLOAT16:  # the corpus has bfloat16 cases; without ml_dtypes they cannot be built
        raise UsageError(f"cannot regenerate the bfloat16 cases: {BFLOAT16_HINT}")
    directory = args.fixtures or FIXTURES_DIR
    if args.check:
        problems = generate.differences(directory)
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"fixtures {'differ from the reference' if problems else 'match the reference'} ({len(problems)} differences)")
        return EXIT_FAIL if problems else EXIT_OK
    files = generate.write(directory)
    print(f"wrote {len(files)} files to {directory}")
    return EXIT_OK


def cmd_mutants(args: argparse.Namespace) -> int:
    if args.diagnosis:
        from embconf.diagnosis.measure import DEFAULT_CORRECT, print_figures

        return EXIT_OK if print_figures(_corpus(args).cases, args.students, args.correct or DEFAULT_CORRECT) else EXIT_FAIL
    from embconf.mutants.report import print_catalogue

    return EXIT_OK if print_catalogue(_corpus(args).cases) else EXIT_FAIL


def cmd_matrix(args: argparse.Namespace) -> int:
    from embconf.matrix.run import run_matrix
    from embconf.matrix import cli_output

    corpus, cases = _selected(args)
    runs = run_matrix(args.impl, cases, lambda impl: _open(impl, args),
                      progress=lambda impl, n, total: n == total and print(f"{impl}: {total} cases run", file=sys.stderr))
    return cli_output(runs, corpus, len(cases), args)


def cmd_explain(args: argparse.Namespace) -> int:
    from embconf.mutants.report import explain

    try:
        explain(args.id, _corpus(args).cases)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None
    return EXIT_OK


def cmd_grade(args: argparse.Namespace) -> int:
    return _grading(args, "grade")


def cmd_gradescope(args: argparse.Namespace) -> int:
    return _grading(args, "gradescope")


def _grading(args: argparse.Namespace, command: str) -> int:
    from embconf.grading import command as grading
    from embconf.grading.session import GradeUsageError
    from embconf.untrusted.write import OutputError

    try:
        return getattr(grading, command)(args, _isolation(args))
    except (GradeUsageError, OutputError) as exc:
        raise UsageError(str(exc)) from None


def cmd_bench(args: argparse.Namespace) -> int:
    from embconf.bench.command import BenchUsageError, bench

    try:
        return bench(args)
    except BenchUsageError as exc:
        raise UsageError(str(exc)) from None


COMMANDS = {"run": cmd_run, "list": cmd_list, "show": cmd_show, "validate": cmd_validate, "regenerate": cmd_regenerate,
            "mutants": cmd_mutants, "explain": cmd_explain, "grade": cmd_grade, "gradescope": cmd_gradescope,
            "matrix": cmd_matrix, "bench": cmd_bench}


def main(argv: Optional[Sequence[str]] = None) -> int:
    from embconf.untrusted.write import ConsoleStream
    from embconf.untrusted.bounds import one_line

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage error
        return EXIT_USAGE if exc.code else EXIT_OK
    from embconf.processes.lifetime import Terminated, ending_descendants

    stdout = sys.stdout
    sys.stdout = ConsoleStream(stdout)  # any encoding, and `embconf list | head`: the reader may leave
    try:
        with ending_descendants():
            return COMMANDS[args.command](args)
    except Terminated as exc:
        print(f"embconf: terminated ({exc})", file=sys.stderr)
        return exc.code
    except UsageError as exc:
        print(f"embconf: {one_line(str(exc), 2000)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("embconf: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout


if __name__ == "__main__":
    sys.exit(main())
