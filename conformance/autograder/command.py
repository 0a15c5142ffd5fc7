"""``embconf autograder``: its options and command (``embconf.cli`` only dispatches here)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from embconf.autograder.build import (
    AutograderError,
    Recipe,
    base_files,
    build,
    check_wheel,
    requirements_text,
    write,
)
from embconf.model import exits
from embconf.processes.limits import LimitError, checked_seconds
from embconf.untrusted.arguments import typed
from embconf.untrusted.write import OutputError, OutputTarget


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "autograder", help="write the Gradescope autograder zip (setup.sh, run_autograder, suite, base, rubric)"
    )
    parser.add_argument("--out", type=Path, required=True, help="the zip to write, e.g. autograder.zip")
    parser.add_argument(
        "--suite",
        help="a wheel of this suite or a pip requirement (default: a wheel of the running suite, put into the zip)",
    )
    parser.add_argument(
        "--base",
        type=Path,
        help="folder holding the course's tinytorch/ package modules and notebooks are graded on "
        "(default: none shipped; the installed suite's example student, checked as a default base)",
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
    parser.add_argument(
        "--requirements",
        type=Path,
        metavar="FILE",
        help="the course's own dependencies (a pip requirements file, e.g. scipy for a course whose autograd uses it): "
        "shipped in the zip and installed by setup.sh",
    )
    parser.set_defaults(handler=lambda args: autograder(typed(AutograderOptions, args)))


@dataclass(frozen=True)
class AutograderOptions:
    """``embconf autograder``'s options as given."""

    out: Path
    suite: Optional[str]
    base: Optional[Path]
    rubric: Optional[Path]
    module_name: str
    run_timeout: Optional[float]
    requirements: Optional[Path]


def autograder(options: AutograderOptions) -> int:
    try:
        OutputTarget.check(options.out)
    except OutputError as exc:
        raise AutograderError(f"--out {exc}") from None
    recipe = _recipe(options)
    with tempfile.TemporaryDirectory(prefix="embconf-autograder-") as tmp:
        if options.suite is None:
            from embconf.autograder.wheel import running_suite

            wheel = running_suite(Path(tmp))  # WheelError (one line) when none can be made
            check_wheel(wheel)
            recipe = replace(recipe, suite=str(wheel))
        data = build(recipe)
    write(options.out, data)
    print(
        f"wrote {options.out} ({len(data) // 1024 + 1} kB): suite {Path(recipe.suite).name if recipe.wheel else recipe.suite}, "
        f"base {recipe.base or 'the example student (no --base)'}, rubric {options.rubric or 'the default'}; "
        "upload it as the Gradescope autograder (docs/autograder.md)"
    )
    return exits.OK


def _recipe(options: AutograderOptions) -> Recipe:
    """Everything checked before anything is written: AutograderError (one line, exit 2) otherwise."""
    from embconf.corpus.fixtures import load_corpus
    from embconf.grading.rubric import DEFAULT_RUBRIC, load, rubric_text

    base = options.base
    if base is not None:
        base_files(base)
    rubric = options.rubric or DEFAULT_RUBRIC
    load(rubric, load_corpus().cases)  # RubricError (one line) when it does not load
    suite = options.suite or ""  # "": a wheel of the running suite, made once everything else is checked
    if suite.startswith("-"):
        raise AutograderError(f"--suite {suite!r}: expected a wheel or a requirement, not a pip option")
    if suite.endswith(".whl"):
        check_wheel(Path(suite))
        suite = str(Path(suite).resolve())
    if "/" in options.module_name or not options.module_name.endswith(".py"):
        raise AutograderError(f"--module-name {options.module_name!r}: expected a file name ending in .py")
    if options.run_timeout is not None:
        try:
            checked_seconds("--run-timeout", options.run_timeout)  # what embconf gradescope accepts
        except LimitError as exc:
            raise AutograderError(str(exc)) from None
    return Recipe(
        base.resolve() if base is not None else None,
        rubric_text(Path(rubric)),
        suite,
        options.module_name,
        options.run_timeout,
        requirements_text(options.requirements) if options.requirements is not None else None,
    )
