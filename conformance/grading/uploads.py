"""Uploads as students make them: a zip (unpacked by :mod:`embconf.untrusted.archive`) and a folder
holding more than one file, with the explicit rule that says which file is graded.

The rule, for the ``.py`` and ``.ipynb`` files of a folder (rule 3 of :mod:`embconf.adapters.tinytorch_layouts`, which says where that
folder is; never a package's ``__init__.py``):

1. the notebook nbdev would export to module 11 (its ``#| default_exp core.embeddings`` or
   ``text.embeddings``, or cells marked ``#| export core.embeddings``): the notebook is the source, its
   exported ``.py`` beside it is not graded; of a jupytext pair (``NAME.ipynb`` and ``NAME.py``) the ``.ipynb``;
2. else the module with the configured file name (``embeddings.py`` unless ``--module-name`` says otherwise);
3. else the one ``.py`` or ``.ipynb`` file there is.

Anything else is a problem naming the files and the rule. The other ``.py`` files are helpers: they are
placed beside the graded module (never over a file of the base package). What was chosen and why is
said in the submission's note.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from embconf.adapters.tinytorch_layouts import graded_candidates, paired_notebooks
from embconf.grading.contained import OUTSIDE, Tree, inside
from embconf.grading.notebook import NotebookError, export, is_percent_notebook
from embconf.untrusted.archive import ArchiveRefused, unpack

MODULE_NAME = "embeddings.py"
SKIPPED_NAMES = frozenset({"__MACOSX", "__pycache__", ".ipynb_checkpoints"})
SOURCE_SUFFIXES = (".py", ".ipynb")


class UploadProblem(Exception):
    """An upload that cannot be graded as handed in: one line for the gradebook and the student."""


@dataclass(frozen=True)
class UploadRule:
    """How uploads are read: the graded module's file name, and where zips are unpacked (None: not opened)."""

    module_name: str = MODULE_NAME
    scratch: Optional[Path] = None


DEFAULT_RULE = UploadRule()


@dataclass(frozen=True)
class Choice:
    """The file an upload folder is graded by, why, and the helper modules beside it."""

    file: Path
    why: str
    helpers: tuple[Path, ...] = ()
    left_out: str = ""  # the note naming the files that are links out of the upload (never graded nor placed)


def unzip(archive: Path, rule: UploadRule, name: str) -> Path:
    """The folder ``archive`` unpacks to (under ``rule.scratch``); UploadProblem saying what was refused."""
    if rule.scratch is None:
        raise UploadProblem("a zip archive, and zips are not opened here: unpack it first")
    dest = rule.scratch / name
    try:
        unpack(archive, dest)
    except ArchiveRefused as exc:
        raise UploadProblem(f"zip refused: {exc}") from None
    return dest


def content_root(folder: Path) -> Path:
    """``folder``, or the one folder it wraps (a zip of a folder), up to two levels down."""
    for _ in range(2):
        entries = visible(folder)
        if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
            folder = entries[0]
        else:
            break
    return folder


def visible(folder: Path) -> list[Path]:
    return [e for e in sorted(folder.iterdir()) if not e.name.startswith(".") and e.name not in SKIPPED_NAMES]


def choose(folder: Path, rule: UploadRule, root: Optional[Path] = None) -> Choice:
    """The graded file of a folder without a tinytorch package, by the rule above (a link out of ``root``, the
    upload, is never a candidate); UploadProblem otherwise."""
    sources = [f for f in visible(folder) if f.is_file() and f.suffix in SOURCE_SUFFIXES]
    outside = [f for f in sources if not inside(f, root or folder)]
    files = graded_candidates([f for f in sources if f not in outside])
    left_out = _left_out(outside, folder)
    if not files:
        raise UploadProblem(
            "not a submission: no tinytorch/core/embeddings.py or tinytorch/text/embeddings.py, "
            "no .py module or notebook in it" + (f"; {left_out}" if left_out else "")
        )
    exports = {f: _exports(f) for f in files}
    exporting, paired = paired_notebooks([f for f in files if exports[f]])
    if len(exporting) > 1:
        names = ", ".join(f.name for f in exporting[:4])
        raise UploadProblem(f"ambiguous: {len(exporting)} notebooks export module 11 ({names}); hand in one")
    if exporting:
        chosen, why = exporting[0], f"the notebook exporting {exports[exporting[0]]}"
    elif (folder / rule.module_name).is_file():
        chosen, why = folder / rule.module_name, f"the module named {rule.module_name}"
    elif len(files) == 1:
        chosen, why = files[0], "the only module or notebook"
    else:
        names = ", ".join(f.name for f in files[:4]) + (", ..." if len(files) > 4 else "")
        raise UploadProblem(
            f"{len(files)} .py/.ipynb files ({names}) and none is graded by the rule: name the module "
            f"{rule.module_name}, or hand in the notebook with '#| default_exp core.embeddings'"
        )
    exported = {rule.module_name, f"{chosen.stem}.py"} if exporting else set()  # what nbdev or jupytext wrote from it
    exported |= {f.name for f in paired}
    skipped = [f.name for f in files if f != chosen and f.name in exported]
    if skipped:
        why += f"; {', '.join(skipped)} beside it is not graded"
    helpers = tuple(f for f in files if f != chosen and f.suffix == ".py" and f.name not in exported and not exports[f])
    return Choice(chosen, why, helpers, left_out)


def _left_out(links: list[Path], folder: Path) -> str:
    """'ignored a link out of the submission (...): embeddings.py', or ''."""
    return Tree(left_out=[(link.relative_to(folder).as_posix(), OUTSIDE) for link in links]).note()


def describe(choice: Choice, top: Path, origin: str = "") -> str:
    """'graded hw/embeddings.ipynb in alice.zip (the notebook exporting core.embeddings); helpers: utils.py'."""
    graded = choice.file.relative_to(top).as_posix() if choice.file.is_relative_to(top) else choice.file.name
    helpers = f"; helpers: {', '.join(h.name for h in choice.helpers)}" if choice.helpers else ""
    return f"graded {graded}{origin} ({choice.why}){helpers}"


def _exports(path: Path) -> str:
    """The module 11 export name a notebook (``.ipynb`` or percent ``.py``) writes cells to, or ""."""
    if path.suffix == ".py":
        try:
            if not is_percent_notebook(path.read_text(encoding="utf-8", errors="replace")):
                return ""
        except OSError:
            return ""
    try:
        return export(path).module
    except (NotebookError, OSError):
        return ""
