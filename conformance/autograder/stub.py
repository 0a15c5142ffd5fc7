"""What stands in the graded module's place in everything the autograder ships: the base package in the zip, the
example student in the bundled wheel and, after ``setup.sh``, in the installed suite. Each submission's module
is put there when it is graded; a submission that reads the file finds no solution."""

from __future__ import annotations

from pathlib import Path

STUB = '''"""The graded module's place in the base package: each submission's own module is put here when it is graded.

embconf autograder ships no solution: it replaced this package's own file with this stub."""
'''


def strip_installed_example() -> None:
    """Replace the installed suite's example student's graded module by the stub (``setup.sh`` runs this); a
    checkout's example is left alone."""
    from embconf.grading.submissions import EXAMPLE_BASE, INSTALLED_EXAMPLE, MODULE_PATH

    module = EXAMPLE_BASE / MODULE_PATH
    if EXAMPLE_BASE == INSTALLED_EXAMPLE and module.is_file():
        Path(module).write_text(STUB, encoding="utf-8")
