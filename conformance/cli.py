"""The ``embconf`` command line: builds the parser from each feature's command module and dispatches.

Exit codes: 0 every applicable case passed (xfails allowed); 1 a case failed, errored, crashed or timed
out (or xpassed under --strict); 2 bad usage, a missing implementation or a fixture problem, with a
one-line reason (any :class:`~embconf.model.errors.UserError`); 130 interrupted; 128 + N ended by signal N (143:
SIGTERM). They are named once, in :mod:`embconf.model.exits`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

# Each module registers its commands and their options (``register(subparsers)``), in the order --help lists them,
# under the command names it registers: a command line naming one imports that module alone (start-up; the names
# are checked against what each module registers by tests/test_architecture.py).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "embconf.run.command": ("run",),
    "embconf.run.report": ("report",),
    "embconf.corpus.command": ("list", "show", "validate", "regenerate", "coverage"),
    "embconf.mutation.command": ("mutants", "explain"),
    "embconf.matrix.command": ("matrix",),
    "embconf.explore.command": ("explore",),
    "embconf.grading.command": ("grade", "gradescope"),
    "embconf.autograder.command": ("autograder",),
    "embconf.bench.command": ("bench",),
}


def build_parser(argv: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the one command ``argv`` names (any other line: all of them)."""
    parser = argparse.ArgumentParser(prog="embconf", description="Conformance suite for embedding layers.")
    sub = parser.add_subparsers(dest="command", required=True)
    named = [module for module, commands in COMMAND_MODULES.items() if argv and argv[0] in commands]
    for module in named or COMMAND_MODULES:
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    from embconf.model import exits
    from embconf.model.errors import UserError
    from embconf.processes.lifetime import Terminated, ending_descendants
    from embconf.untrusted.text import one_line
    from embconf.untrusted.write import ConsoleStream, open_standard_streams

    open_standard_streams()  # before anything is opened: `embconf run >&-` loses no report
    try:
        arguments = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(arguments).parse_args(arguments)
    except SystemExit as exc:  # argparse has printed the usage error
        return exits.USAGE if exc.code else exits.OK
    except KeyboardInterrupt:  # Ctrl-C while the commands are still being imported
        print("embconf: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    stdout = sys.stdout
    sys.stdout = ConsoleStream(stdout)  # any encoding, and `embconf list | head`: the reader may leave
    try:
        with ending_descendants():
            return args.handler(args)
    except Terminated as exc:
        print(f"embconf: terminated ({exc})", file=sys.stderr)
        return exc.code
    except UserError as exc:
        print(f"embconf: {one_line(str(exc), 2000)}", file=sys.stderr)
        return exits.USAGE
    except KeyboardInterrupt:
        print("embconf: interrupted", file=sys.stderr)
        return exits.INTERRUPTED
    finally:
        sys.stdout = stdout


def entry() -> None:
    """The ``embconf`` command (and ``python -m embconf``): :func:`main` with one BLAS thread a process, then the
    process ends at once."""
    from embconf.processes.lifetime import exit_now
    from embconf.processes.threads import one_blas_thread

    one_blas_thread()
    exit_now(main())


if __name__ == "__main__":
    entry()
