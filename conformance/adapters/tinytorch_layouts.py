"""Where TinyTorch's module 11 is in what a student hands in: the one layout rule of ``embconf grade``,
``embconf gradescope``, ``embconf.check`` and ``--impl tinytorch:``.

The rule, first match wins (every search goes at most :data:`MAX_DEPTH` folders into the upload):

1. **A tinytorch package holding module 11**: a folder ``tinytorch/`` with ``core/embeddings.py`` (today's
   TinyTorch exports there: ``#| default_exp core.embeddings``) or else ``text/embeddings.py`` (its export
   until late 2025). The student's whole package is graded, on its own ``Tensor`` and autograd, its module
   imported under its dotted name (so ``from ..core.tensor import Tensor`` works). Two such packages are
   ambiguous; nbdev sources beside the package are not graded (the package is what ``import tinytorch`` runs).
2. **The course repository's module folder**: ``modules/11_embeddings/`` (where a student works), else
   ``src/11_embeddings/`` (today's source), else ``modules/source/11_embeddings/`` (autumn 2025). Its files
   are chosen as in 3; a tinytorch package in the upload without module 11 (the student's earlier modules)
   is the package the chosen file is graded in, else the base package.
3. **The files at the top of the upload** (a zip or folder wrapping one folder is looked into), by
   :func:`embconf.grading.uploads.choose`: the nbdev notebook exporting module 11 (``.ipynb`` or percent-format
   ``.py``, whatever its ``default_exp`` of :data:`EXPORT_NAMES`; of a jupytext pair ``NAME.ipynb`` + ``NAME.py``
   the ``.ipynb``, the file a student opens), else the module named ``--module-name`` (``embeddings.py``),
   else the one ``.py`` or ``.ipynb`` file there.

A package's ``__init__.py`` is never the graded module. A notebook's export is placed where its
``default_exp`` says (``tinytorch/text/embeddings.py`` for ``text.embeddings``); a plain module is placed
as ``tinytorch/core/embeddings.py``. The gradebook's ``graded`` column says which file and which rule.
"""

from __future__ import annotations

import importlib.machinery
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Optional

MAX_DEPTH = 4  # folders between the upload's top and tinytorch/ or NN_embeddings/
EXPORT_NAMES = ("core.embeddings", "text.embeddings")  # nbdev default_exp of module 11, newest first
COURSE_FOLDERS = ("modules/11_embeddings", "src/11_embeddings", "modules/source/11_embeddings")
INIT = "__init__.py"
SKIPPED = frozenset({"__MACOSX", "__pycache__", ".ipynb_checkpoints", ".git", "node_modules", ".venv", "venv"})
WHY_EXPORT = {
    "core.embeddings": "module 11 where TinyTorch exports it",
    "text.embeddings": "module 11 where TinyTorch exported it until late 2025",
}


class LayoutProblem(Exception):
    """An upload whose layout the rule cannot decide (two packages): one line."""


def module_path(export: str) -> PurePosixPath:
    """``tinytorch/text/embeddings.py`` for the export name ``text.embeddings`` (or ``tinytorch.text.embeddings``)."""
    parts = export.split(".")
    return PurePosixPath("tinytorch", *parts[1:] if parts[0] == "tinytorch" else parts).with_suffix(".py")


def is_export(name: str) -> bool:
    """Whether an nbdev export name (``core.embeddings``, ``tinytorch.text.embeddings``) is module 11."""
    return name.removeprefix("tinytorch.") in EXPORT_NAMES


@dataclass(frozen=True)
class Package:
    """A student's tinytorch package: the folder holding ``tinytorch/``, and module 11 in it (or None)."""

    root: Path
    module: Optional[PurePosixPath]

    @property
    def why(self) -> str:
        assert self.module is not None
        export = ".".join(self.module.with_suffix("").parts[1:])
        return f"the student's tinytorch package; {WHY_EXPORT[export]}"


def package_at(root: Path) -> Optional[Package]:
    """The tinytorch package ``root/tinytorch`` (one with ``core/``), its module 11 found by the rule, or None."""
    if not (root / "tinytorch" / "core").is_dir():
        return None
    modules = [module_path(e) for e in EXPORT_NAMES if (root / module_path(e)).is_file()]
    return Package(root, modules[0] if modules else None)


def packages(folder: Path) -> list[Package]:
    """Every tinytorch package in ``folder``, at most MAX_DEPTH folders down."""
    found = (package_at(package.parent) for package in _folders(folder, "tinytorch"))
    return [package for package in found if package is not None]


def find_package(folder: Path) -> Optional[Package]:
    """The package holding module 11 (rule 1), None when there is none; LayoutProblem when two do."""
    holding = [p for p in packages(folder) if p.module is not None]
    if len(holding) > 1:
        names = ", ".join((p.root / p.module).relative_to(folder).as_posix() for p in holding[:3] if p.module)
        names += ", ..." if len(holding) > 3 else ""
        raise LayoutProblem(f"ambiguous: {len(holding)} tinytorch packages hold module 11 ({names}); hand in one")
    return holding[0] if holding else None


def course_folder(folder: Path) -> Optional[Path]:
    """The course repository's module-11 folder (rule 2), by the order of :data:`COURSE_FOLDERS`."""
    for wanted in COURSE_FOLDERS:
        parts = tuple(wanted.split("/"))
        for candidate in _folders(folder, parts[-1]):
            if candidate.relative_to(folder).parts[-len(parts) :] == parts:
                return candidate
    return None


def own_package(folder: Path) -> Optional[Path]:
    """The folder holding the upload's one tinytorch package without module 11 (rule 2's home), or None."""
    found = packages(folder)
    return found[0].root if len(found) == 1 else None


def graded_candidates(files: list[Path]) -> list[Path]:
    """The files of a folder the rule may grade: never a package's ``__init__.py``."""
    return [f for f in files if f.name != INIT]


def paired_notebooks(exporting: list[Path]) -> tuple[list[Path], list[Path]]:
    """(kept, dropped): of a jupytext pair (``NAME.ipynb`` and percent ``NAME.py``) the ``.ipynb`` is kept."""
    stems = {f.stem for f in exporting if f.suffix == ".ipynb"}
    dropped = [f for f in exporting if f.suffix == ".py" and f.stem in stems]
    return [f for f in exporting if f not in dropped], dropped


def module_of(folder: Path) -> Optional[Path]:
    """Module 11 of the package ``folder`` is (a ``tinytorch/``) or holds (directly, else by :func:`find_package`)."""
    found = package_at(folder.parent) if folder.name == "tinytorch" else None
    found = found or package_at(folder) or find_package(folder)
    return found.root / found.module if found is not None and found.module is not None else None


def _folders(folder: Path, name: str) -> list[Path]:
    """Folders called ``name`` at most MAX_DEPTH levels under ``folder`` (hidden and tool folders skipped)."""
    found, level = [], [folder]
    for _ in range(MAX_DEPTH + 1):
        below = []
        for parent in level:
            try:
                entries = sorted(e for e in parent.iterdir() if e.is_dir() and not e.is_symlink())
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name in SKIPPED:
                    continue
                below.append(entry)
                if entry.name == name:
                    found.append(entry)
        level = below
    return found


def importable_module(search: list[str]) -> Optional[Path]:
    """Module 11 of the ``tinytorch`` package found on ``search`` (a sys.path), by rule 1, without importing it."""
    try:
        spec = importlib.machinery.PathFinder.find_spec("tinytorch", search)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        found = module_of(Path(location))
        if found is not None:
            return found
    return None


def module_target(target: str, search: list[str]) -> str:
    """What ``--impl tinytorch:TARGET`` runs: a folder names its package's module 11; the default (no target, or
    ``tinytorch.core.embeddings``) is ``tinytorch.text.embeddings`` when the tinytorch found on ``search`` holds
    only that one. Anything else is itself. LayoutProblem for a folder without module 11, or with two."""
    default, text = (f"tinytorch.{name}" for name in EXPORT_NAMES)
    if target in ("", default):
        found = importable_module(search)
        return text if found is not None and found.parent.name == "text" else default
    folder = Path(target).expanduser()
    if not folder.is_dir():
        return target
    module = module_of(folder.resolve())
    if module is None:
        paths = " or ".join(str(module_path(name)) for name in EXPORT_NAMES)
        raise LayoutProblem(f"no tinytorch package holding module 11 in it ({paths})")
    return str(module)
