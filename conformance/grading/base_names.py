"""Whether a module or notebook imports from the base package a name the base lacks, read from the source without
running it. With the default base (the suite's example student, used when no ``--base`` is given) such a name
is the course's configuration, not the student's mistake: ``grade`` and ``gradescope`` stop with one line
naming ``--base`` instead of scoring every such student 0. With a base the course gave, it stays the student's
own import error."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterable, Optional, Sequence

from embconf.grading.notebook import NotebookError, export
from embconf.grading.submissions import Submission
from embconf.model.errors import UserError

PACKAGE = "tinytorch"
GRADED_PACKAGE = ("tinytorch", "core")  # where module 11 sits unless its layout says (core/ or text/)


BASE_HINT = "give --base PATH, the folder holding your course's tinytorch/ package"


class DefaultBaseError(UserError):
    """The default base lacks what submissions import: the course's configuration (one line, exit 2)."""


def lacking(
    source: str, base: Path, helpers: Iterable[str] = (), package: tuple[str, ...] = GRADED_PACKAGE
) -> list[str]:
    """'Function from tinytorch.core.tensor' for each name ``source`` imports from ``base``'s tinytorch package
    that the base does not define (``helpers``: module names the upload itself places; never lacking;
    ``package``: where the graded module sits, from which its relative imports start)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []  # the student's own mistake, said when it is run
    own = set(helpers)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node.module, node.level, package)
            if module is None or module[-1] in own:
                continue
            names = [alias.name for alias in node.names if alias.name != "*"]
            if _file(base, module) is None:
                found.append(f"module {'.'.join(module)}")
            else:
                found += [f"{name} from {'.'.join(module)}" for name in _missing(base, module, names, own)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = tuple(alias.name.split("."))
                if parts[0] == PACKAGE and parts[-1] not in own and _file(base, parts) is None:
                    found.append(f"module {alias.name}")
    return list(dict.fromkeys(found))


def _absolute(module: Optional[str], level: int, package: tuple[str, ...]) -> Optional[tuple[str, ...]]:
    parts = tuple(module.split(".")) if module else ()
    if level == 0:
        return parts if parts and parts[0] == PACKAGE else None
    if level > len(package):
        return None
    return package[: len(package) - level + 1] + parts


def _missing(base: Path, module: tuple[str, ...], names: list[str], own: set[str]) -> list[str]:
    path = _file(base, module)
    defined = _defined(path) if path is not None else None
    if defined is None:  # a star import or a module __getattr__: cannot tell without running it
        return []
    folder = base.joinpath(*module)
    return [
        name
        for name in names
        if name not in defined
        and name not in own
        and not (folder / f"{name}.py").is_file()
        and not (folder / name).is_dir()
    ]


def _file(base: Path, module: tuple[str, ...]) -> Optional[Path]:
    for path in (base.joinpath(*module).with_suffix(".py"), base.joinpath(*module, "__init__.py")):
        if path.is_file():
            return path
    return None


def _defined(path: Path) -> Optional[set[str]]:
    """The names a module defines at its top level (in if/try blocks too); None when it cannot be told."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return None
    names: set[str] = set()
    body = list(tree.body)
    while body:
        node = body.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            body += node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", [])
            body += [stmt for handler in getattr(node, "handlers", []) for stmt in handler.body]
    return None if "__getattr__" in names else names


def require_default_base_suffices(subs: Sequence[Submission], base: Path) -> None:
    """DefaultBaseError, before anything runs, when a module or notebook imports from the default base a name it
    lacks: one line for the class, naming ``--base``."""
    found = {}
    for sub in subs:
        if sub.needs_base and not sub.problem and sub.source is not None:
            missing = lacking(_source(sub), base, (helper.stem for helper in sub.helpers), sub.module.parent.parts)
            if missing:
                found[sub.name] = missing
    if found:
        names = ", ".join(list(found)[:3]) + (", ..." if len(found) > 3 else "")
        first = next(iter(found.values()))[0]
        raise DefaultBaseError(
            f"{len(found)} submission(s) ({names}) import what the default base package (the suite's example "
            f"student) lacks ({first}): {BASE_HINT}"
        )


def _source(sub: Submission) -> str:
    assert sub.source is not None
    if sub.kind == "module":
        return sub.source.read_text(encoding="utf-8", errors="replace")
    try:
        return export(sub.source).source
    except NotebookError:
        return ""  # the student's own problem, said when it is graded
