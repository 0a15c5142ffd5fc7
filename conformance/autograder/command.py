"""``embconf autograder``: its options and command (``embconf.cli`` only dispatches here)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from embconf import __version__
from embconf.autograder.build import AutograderError, Recipe, base_files, build, check_wheel, write

DEFAULT_SUITE = f"embedding-conformance=={__version__}"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "autograder", help="write the Gradescope autograder zip (setup.sh, run_autograder, suite, base, rubric)"
    )
    parser.add_argument("--out", type=Path, required=True, help="the zip to write, e.g. autograder.zip")
    parser.add_argument(
        "--suite",
        default=DEFAULT_SUITE,
        help=f"a wheel of this suite (put into the zip) or a pip requirement (default {DEFAULT_SUITE})",
    )
    parser.add_argument(
        "--base",
        type=Path,
        help="folder holding the tinytorch/ package modules and notebooks are graded on (default: the suite's example student, in a checkout)",
    )
    parser.add_argument("--rubric", type=Path, help="YAML rubric (default: the suite's TinyTorch module 11 rubric)")
    parser.add_argument(
        "--module-name",
        default="embeddings.py",
        metavar="FILE",
        help="in an upload of several files, the module graded when no notebook exports core.embeddings",
    )
    parser.add_argument(
        "--run-timeout", type=float, help="seconds one submission may take (default: embconf gradescope's)"
    )
    parser.set_defaults(handler=autograder)


def autograder(args: argparse.Namespace) -> int:
    recipe = _recipe(args)
    data = build(recipe)
    write(args.out, data)
    print(
        f"wrote {args.out} ({len(data) // 1024 + 1} kB): suite {Path(recipe.suite).name if recipe.wheel else recipe.suite}, "
        f"base {recipe.base}, rubric {args.rubric or 'the default'}; upload it as the Gradescope autograder (docs/autograder.md)"
    )
    return 0


def _recipe(args: argparse.Namespace) -> Recipe:
    """Everything checked before anything is written: AutograderError (one line, exit 2) otherwise."""
    from embconf.corpus.fixtures import load_corpus
    from embconf.grading.rubric import DEFAULT_RUBRIC, load
    from embconf.grading.submissions import default_base

    base = args.base if args.base is not None else default_base()
    if base is None:
        raise AutograderError("no base package: give --base PATH (a folder holding the course's tinytorch/ package)")
    base_files(base)
    rubric = args.rubric or DEFAULT_RUBRIC
    load(rubric, load_corpus().cases)  # RubricError (one line) when it does not load
    suite = args.suite
    if suite.endswith(".whl"):
        check_wheel(Path(suite))
        suite = str(Path(suite).resolve())
    if "/" in args.module_name or not args.module_name.endswith(".py"):
        raise AutograderError(f"--module-name {args.module_name!r}: expected a file name ending in .py")
    if args.run_timeout is not None and args.run_timeout <= 0:
        raise AutograderError("--run-timeout must be positive")
    return Recipe(base.resolve(), Path(rubric).read_text(encoding="utf-8"), suite, args.module_name, args.run_timeout)
