"""embedding-conformance: the conformance runner (``embconf``) for the embedding spec in ``spec/``.

The room plan, by floors, the ground floor first. A package imports its own modules and the floors below its
own, never a package of its own floor or above (``tests/test_architecture.py`` holds it). Mechanism packages
serve the floors above them and hold no command; each command lives in the feature package it serves.

1. ``model``: the spec's nouns (vocabulary, dtypes, outcomes, the run record, the adapter contract, ``Impl``).
2. ``reference`` (the NumPy reference, ``reference/``), ``untrusted`` (everything read from or written to outside).
3. ``processes`` (child processes, their limits and lifetime), ``corpus`` (the golden cases, selection,
   expectations; its commands, ``list``/``show``/``validate``/``regenerate``/``coverage``, need nothing above
   this floor).
4. ``judging`` (one case called and judged into one outcome), ``adapters`` (naming an implementation, the
   in-process adapters, the input guard).
5. ``isolation`` (an adapter in a child worker), ``protocol`` (a peer in any language), ``mutants`` (the catalogue
   of known mistakes).
6. ``diagnosis``: why a case failed, replaying the catalogue and measuring symptoms; it returns causes and a
   verdict and writes no record.
7. ``session``: the one pipeline (plan, run, repeat, diagnose), the only writer of the run record.
8. ``reports``: the record rendered (console, JSON lines, JUnit).
9. Features: ``matrix`` (``embconf matrix``), ``bench`` (``embconf bench``), ``mutation`` (``embconf mutants``,
   ``embconf explain``), ``explore`` (``embconf explore``: a search of the input domains for what the goldens
   miss).
10. Features: ``run`` (``embconf run``, ``embconf report``), ``grading`` (``grade``, ``gradescope``,
    ``embconf.check``; it measures with the bench).
11. ``autograder`` (``embconf autograder``: builds Gradescope's zip around grading).
12. Entry points, imported by nothing: this package, ``__main__``, ``cli`` (a pure dispatcher: it names each
    command's module and imports only the one asked for), ``pytest_plugin``.

No import runs up a floor: the TinyTorch layout rule (``adapters.tinytorch_layouts``), one rule for grading and
for ``--impl tinytorch:FOLDER``, lives with the adapter, and grading reads it from below.
"""

from __future__ import annotations

from typing import Any

from embconf.model.errors import Decline
from embconf.model.version import __version__

__all__ = ["Decline", "__version__", "check"]


def __getattr__(name: str) -> Any:
    """``embconf.check``, the grading package's own function (its signature and docstring in ``help``), loaded on
    first use: ``import embconf`` never loads the grading package."""
    if name == "check":
        from embconf.grading.check import check

        return check
    raise AttributeError(f"module 'embconf' has no attribute {name!r}")
