"""A submission that imports a module no one has, said in one line: the grading environment lacks a package the
course uses (a student's ``autograd.py`` importing SciPy), or a module of the student's own ``tinytorch`` package
was not handed in (``tinytorch.core.activations``, in neither the submission nor the base package)."""

from __future__ import annotations

import re
from typing import Optional

# "No module named 'X'" with the line that imported it (embconf.adapters.loading.importer)
NOT_FOUND = re.compile(r"^No module named '([\w.]+)'(?: \(imported by (.+) line (\d+)\))?$")
PACKAGE = "tinytorch"  # the student's own package
DISTRIBUTIONS = {"sklearn": "scikit-learn", "cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml"}  # pip names


def missing_module(text: str, based: bool, grading: bool = True) -> Optional[str]:
    """The reason for a ModuleNotFoundError's ``text`` (``based``: the submission runs in a base package;
    ``grading``: said to course staff by grade and gradescope, else to a student by check), or None when the text
    is not one."""
    found = NOT_FOUND.match(text.strip())
    if not found:
        return None
    module, importer, line = found.groups()
    by = f", imported by {importer} line {line}" if importer else ""
    top = module.split(".")[0]
    if top == PACKAGE:
        holders = "neither the submission nor the base package holds it" if based else "the submission does not hold it"
        return f"ModuleNotFoundError: No module named '{module}'{by}: {holders} (hand in {module.replace('.', '/')}.py)"
    package = DISTRIBUTIONS.get(top, top)
    lacks = f"lacks the package '{package}' (No module named '{module}'{by})"
    if not grading:
        return f"this Python environment {lacks}: install it (pip install {package})"
    return (
        f"the grading environment {lacks}: install it where embconf grade runs, or add it to the autograder with "
        "embconf autograder --requirements FILE"
    )
