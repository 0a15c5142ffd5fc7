"""``embconf grade`` and ``embconf gradescope``: their options and commands (``embconf.cli`` only dispatches here)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from embconf.grading.base_names import BASE_HINT, lacks_from_base
from embconf.grading.job import LOST, is_lost
from embconf.grading.pool import run_jobs
from embconf.grading.rubric import RubricError, load
from embconf.grading.session import (
    GradeUsageError,
    Options,
    check_base,
    default_jobs,
    grade_folder,
    merge,
    parse_shard,
)
from embconf.grading.submissions import BASED_KINDS, classify, content_hash, default_base
from embconf.grading.uploads import MODULE_NAME
from embconf.isolation import IsolationOptions, isolation_options
from embconf.model import exits
from embconf.processes.options import Limits, add_limits
from embconf.untrusted.arguments import typed

GRADE_RUN_TIMEOUT = 600.0  # seconds one submission may take


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rubric", type=Path, help="YAML rubric (default: the suite's TinyTorch module 11 rubric; see README)"
    )
    parser.add_argument(
        "--base",
        type=Path,
        help="folder holding the tinytorch/ package that single modules and notebooks are graded on (default: the suite's example student)",
    )
    parser.add_argument(
        "--module-name",
        default=MODULE_NAME,
        metavar="FILE",
        help=f"in an upload of several files, the module graded when no notebook exports core.embeddings (default {MODULE_NAME})",
    )
    parser.add_argument("--fixtures", type=Path, help="fixture directory (default: the suite's own)")
    add_limits(parser, GRADE_RUN_TIMEOUT, in_process=False, run_scope="one submission")  # always isolated


def add_grade(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", type=Path, nargs="?", help="folder with one entry per submission")
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        help="output folder (gradebook.csv, feedback/, results/, records/, report.html)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=default_jobs(),
        help="submissions graded side by side (default: the machine's cores)",
    )
    parser.add_argument("--force", action="store_true", help="regrade submissions whose content is unchanged")
    parser.add_argument(
        "--shard", metavar="I/N", help="grade only the I-th of N deterministic shards of the submissions"
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="OUT_DIR",
        help="merge the outputs of shards into --out instead of grading",
    )
    parser.add_argument(
        "--roster",
        type=Path,
        help="students' ids and emails (a CSV: submission, sid, email, student; or submission_metadata.yml): gradebook columns and grades.csv",
    )
    parser.add_argument(
        "--bench", action="store_true", help="add embconf bench's figures (size small) as ungraded gradebook columns"
    )
    add_common(parser)


def add_gradescope(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--submission",
        type=Path,
        default=Path("/autograder/submission"),
        help="the submission folder (default /autograder/submission)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=Path("/autograder/results/results.json"),
        help="where results.json goes (default /autograder/results/results.json)",
    )
    parser.add_argument(
        "--withhold",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="a folder or file whose text never reaches results.json (the base and the rubric always are; "
        "run_autograder gives its own source folder)",
    )
    add_common(parser)


@dataclass(frozen=True)
class Common:
    """The options ``grade`` and ``gradescope`` share (:func:`add_common`), as given."""

    rubric: Optional[Path]
    base: Optional[Path]
    module_name: str
    fixtures: Optional[Path]
    limits: Limits

    @classmethod
    def read(cls, args: argparse.Namespace) -> Common:
        return typed(cls, args, limits=Limits.read(args))


@dataclass(frozen=True)
class GradeOptions:
    """``embconf grade``'s options as given."""

    common: Common
    submissions: Optional[Path]
    out: Path
    jobs: int
    force: bool
    shard: Optional[str]
    merge: Optional[list[Path]]
    roster: Optional[Path]
    bench: bool


@dataclass(frozen=True)
class GradescopeOptions:
    """``embconf gradescope``'s options as given."""

    common: Common
    submission: Path
    results: Path
    withhold: list[Path]


def _prepared(common: Common, out: Path, isolation: IsolationOptions) -> Options:
    """Options with the rubric and the fixtures loaded: every usage problem is raised here, before anything runs."""
    from embconf.corpus.fixtures import FixtureError, load_corpus
    from embconf.model.vocabulary import FIXTURES_DIR

    fixtures = common.fixtures or FIXTURES_DIR
    try:
        corpus = load_corpus(fixtures)
    except FixtureError as exc:
        raise GradeUsageError(f"fixture problem: {exc}") from None
    try:
        rubric = load(common.rubric, corpus.cases)
    except RubricError as exc:
        raise GradeUsageError(str(exc)) from None
    base = common.base if common.base is not None else default_base()
    if common.base is not None and not (common.base / "tinytorch" / "core").is_dir():
        raise GradeUsageError(f"--base {common.base}: no tinytorch/core package in it")
    if "/" in common.module_name or not common.module_name.endswith(".py"):
        raise GradeUsageError(f"--module-name {common.module_name!r}: expected a file name ending in .py")
    return Options(
        out,
        rubric,
        fixtures,
        tuple(rubric.case_ids(corpus.cases)),
        corpus.manifest_sha256,
        isolation,
        base.resolve() if base else None,
        module_name=common.module_name,
        default_base=common.base is None,
    )


def register(sub: Any) -> None:
    grade_parser = sub.add_parser(
        "grade", help="grade a folder of submissions: gradebook, feedback, Gradescope results, class report"
    )
    add_grade(grade_parser)
    grade_parser.set_defaults(handler=lambda args: grade(typed(GradeOptions, args, common=Common.read(args))))
    gradescope_parser = sub.add_parser(
        "gradescope", help="grade one submission in Gradescope's container (writes results.json)"
    )
    add_gradescope(gradescope_parser)
    gradescope_parser.set_defaults(
        handler=lambda args: gradescope(typed(GradescopeOptions, args, common=Common.read(args)))
    )


def grade(given: GradeOptions) -> int:
    isolation = isolation_options(given.common.limits)
    if given.jobs < 1:
        raise GradeUsageError("--jobs must be at least 1")
    if (given.submissions is None) == (given.merge is None):
        raise GradeUsageError("give either SUBMISSIONS_DIR or --merge OUT_DIR...")
    options = _prepared(given.common, given.out, isolation)
    options.jobs, options.force, options.bench = given.jobs, given.force, given.bench
    if given.roster is not None:
        from embconf.grading.roster import load_roster

        options.roster = load_roster(given.roster)
    options.shard = parse_shard(given.shard) if given.shard else None
    records = grade_folder(given.submissions, options) if given.submissions else merge(given.merge or [], options)
    problems = sum(r["status"] != "graded" for r in records)
    print(
        f"{len(records)} submissions, {problems} not gradable: {given.out / 'gradebook.csv'}, {given.out / 'report.html'}"
    )
    lacking = [
        r["name"]
        for r in records
        if options.default_base and r["kind"] in BASED_KINDS and lacks_from_base(r.get("reason", ""), options.base)
    ]
    if lacking:  # what the reading of the sources could not see: said once for the class, exit 2
        names = ", ".join(lacking[:3]) + (", ..." if len(lacking) > 3 else "")
        raise GradeUsageError(
            f"{len(lacking)} submission(s) ({names}) cannot import from the default base package what they name: {BASE_HINT}"
        )
    return _ungraded(records)


def _ungraded(records: list[dict[str, Any]]) -> int:
    """FAILED, said in one line, when a submission's grading process was lost (the next run grades it again)."""
    lost = [r["name"] for r in records if is_lost(r)]
    if not lost:
        return exits.OK
    names = ", ".join(lost[:3]) + (", ..." if len(lost) > 3 else "")
    print(f"{len(lost)} submission(s) could not be graded ({names}): {LOST}; the next run grades them again")
    return exits.FAILED


def gradescope(given: GradescopeOptions) -> int:
    """One submission (Gradescope's container): /autograder/submission in, results.json out."""
    from embconf.grading.feedback import feedback
    from embconf.grading.files import check_writable, write_json
    from embconf.grading.job import Job, record_of
    from embconf.grading.outputs import gradescope_results
    from embconf.grading.score import score
    from embconf.grading.withheld import withheld

    isolation = isolation_options(given.common.limits)
    if not given.submission.is_dir():
        raise GradeUsageError(f"--submission {given.submission}: not a folder")
    reason = check_writable(given.results.parent)
    if reason:
        raise GradeUsageError(reason)
    with tempfile.TemporaryDirectory(prefix="embconf-gradescope-") as tmp:
        options = _prepared(given.common, Path(tmp), isolation)
        sub = classify(given.submission, options.rule())  # UnreadableSubmission: the TA's to fix, exit 2
        sub.name = "submission"
        check_base([sub], options)
        digest = content_hash(sub, options.base, "")
        job = Job(sub, digest, Path(tmp) / "work", options.base, options.fixtures, options.case_ids, isolation)
        if sub.problem:
            record = record_of(sub, digest, reason=sub.problem)
        else:
            with closing(run_jobs([job], 1)) as graded:  # the pool shut down here, not when collected
                record = next(graded)
    if options.default_base and sub.needs_base and lacks_from_base(record.get("reason", ""), options.base):
        raise GradeUsageError(f"the submission {record['reason']} on the default base package: {BASE_HINT}")
    result = score(record, options.rubric)
    private = [options.base] if options.base is not None else []
    rubric = [given.common.rubric] if given.common.rubric else []
    secret = withheld([*private, *rubric, *given.withhold], [given.submission])
    write_json(given.results, secret.redact(gradescope_results(result)))
    sys.stdout.write(feedback(result, options.rubric.title) + "\n")
    return _ungraded([record])
