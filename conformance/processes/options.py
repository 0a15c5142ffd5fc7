"""The options that say where and under which limits an implementation runs, defined once for every command
that runs one (``run``, ``matrix``, ``grade``, ``gradescope``), and read back into typed values (:class:`Limits`,
which :func:`embconf.isolation.options.isolation_options` turns into where and how the implementation runs). Registering them imports nothing heavy: a command's
parser is built before the runner imports NumPy (a protocol peer starts meanwhile: :mod:`embconf.protocol.early`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable, Optional

from embconf.processes.limits import DEFAULT_CASE_TIMEOUT, DEFAULT_MEMORY_LIMIT_MB, DEFAULT_RUN_TIMEOUT

Option = tuple[tuple[str, ...], dict[str, Any]]  # (flags, argparse keywords): one command-line option


@dataclass(frozen=True)
class Limits:
    """The limit options as a command was given them (:func:`limit_options`; ``case_timeout`` None: not given)."""

    case_timeout: Optional[float] = None
    run_timeout: float = DEFAULT_RUN_TIMEOUT
    memory_limit: int = DEFAULT_MEMORY_LIMIT_MB
    in_process: bool = False

    @classmethod
    def given(cls, option: Callable[[str], Any]) -> Limits:
        """The limits ``option(dest)`` gives for each option's ``dest`` (a parsed command line's, a pytest option's)."""
        return cls(option("case_timeout"), option("run_timeout"), option("memory_limit"), option("in_process"))

    @classmethod
    def read(cls, args: argparse.Namespace) -> Limits:
        """The limits of a parsed command line (:func:`add_limits` registered them)."""
        return cls.given(lambda dest: getattr(args, dest))


def limit_options(
    run_timeout: float = DEFAULT_RUN_TIMEOUT, in_process: bool = True, run_scope: str = "the whole run"
) -> list[Option]:
    """--case-timeout, --run-timeout, --memory-limit (and --in-process unless ``in_process`` is False), each
    with its default and help: the one definition every command and the pytest plugin register."""
    options: list[Option] = [
        (
            ("--case-timeout", "--timeout"),
            dict(
                dest="case_timeout",
                type=float,
                metavar="SECONDS",
                help=f"seconds each case may take before the implementation's process is killed and restarted, plus "
                f"an allowance for the case's work (0.5 us per unit, a lookup's V*N*D; default {DEFAULT_CASE_TIMEOUT:g}; "
                "subprocess implementations: also $EMBCONF_TIMEOUT)",
            ),
        ),
        (
            ("--run-timeout",),
            dict(
                dest="run_timeout",
                type=float,
                default=run_timeout,
                metavar="SECONDS",
                help=f"seconds {run_scope} may take, all --repeat runs included; later cases time out (default {run_timeout:g})",
            ),
        ),
        (
            ("--memory-limit",),
            dict(
                dest="memory_limit",
                type=int,
                default=DEFAULT_MEMORY_LIMIT_MB,
                metavar="MB",
                help="resident memory the implementation's processes (worker or protocol peer, and their children) "
                f"may hold, in MB; 0 for none (default {DEFAULT_MEMORY_LIMIT_MB})",
            ),
        ),
    ]
    if in_process:
        options.append(
            (
                ("--in-process",),
                dict(
                    dest="in_process",
                    action="store_true",
                    help="run the implementation inside the runner, not in a worker process (for debugging: no "
                    "timeouts, no crash protection)",
                ),
            )
        )
    return options


REPEAT: Option = (
    ("--repeat",),
    dict(
        dest="repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every case N times and report cases whose result changes (a failure with --strict)",
    ),
)


def add_limits(
    parser: argparse.ArgumentParser,
    run_timeout: float = DEFAULT_RUN_TIMEOUT,
    in_process: bool = True,
    run_scope: str = "the whole run",
) -> None:
    """Register :func:`limit_options` on a command's parser."""
    for flags, keywords in limit_options(run_timeout, in_process, run_scope):
        parser.add_argument(*flags, **keywords)
    if not in_process:
        parser.set_defaults(in_process=False)
