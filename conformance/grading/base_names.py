"""Whether a module or notebook imports from the base package a name the base lacks, read from the source without
running it. With the default base (the suite's example student, used when no ``--base`` is given) such a name
is the course's configuration, not the student's mistake: ``grade`` and ``gradescope`` stop with one line
naming ``--base`` instead of scoring every such student 0. A name that misspells one the base defines
(``Tensr`` for ``Tensor``) is the student's typo, which no ``--base`` mends: it costs only that submission, whose
reason says it does not import. With a base the course gave, it stays the student's own import error."""

from __future__ import annotations

import ast
import difflib
import re
from pathlib import Path
from typing import Iterable, Optional, Sequence

from embconf.grading.notebook import NotebookError, export
from embconf.grading.submissions import Submission
from embconf.model.errors import UserError

PACKAGE = "tinytorch"
GRADED_PACKAGE = ("tinytorch", "core")  # where module 11 sits unless its layout says (core/ or text/)


BASE_HINT = "give --base PATH, the folder holding your course's tinytorch/ package"
TYPO = 0.8  # how alike (difflib's ratio) a lacking name and one the base defines are for the name to be a typo
# a module or notebook that cannot import from the base what it names (found when it runs, if not before)
RUN_LACKS = re.compile(
    r"does not import: (?:ImportError: cannot import name '(\w+)' from '(tinytorch[\w.]*)'"
    r"|ModuleNotFoundError: No module named '(tinytorch[\w.]*)')"
)


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
                found += [] if _misspelt(base, module) else [f"module {'.'.join(module)}"]
            else:
                missing = _missing(base, module, names, own)
                found += [f"{name} from {'.'.join(module)}" for name in missing if not _misspelt(base, module, name)]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = tuple(alias.name.split("."))
                if parts[0] == PACKAGE and parts[-1] not in own and _file(base, parts) is None:
                    found += [] if _misspelt(base, parts) else [f"module {alias.name}"]
    return list(dict.fromkeys(found))


def lacks_from_base(reason: str, base: Optional[Path]) -> bool:
    """Whether a submission's reason is an import from the base package that the base cannot satisfy and that is
    no typo of a name it defines (the course's configuration when the base is the default one)."""
    found = RUN_LACKS.match(reason)
    if not found or base is None:
        return False
    name, module, missing_module = found.groups()
    if missing_module:
        return not _misspelt(base, tuple(missing_module.split(".")))
    return not _misspelt(base, tuple(module.split(".")), name)


def _misspelt(base: Path, module: tuple[str, ...], name: str = "") -> bool:
    """Whether ``name`` (of ``module``), or with no name the last part of ``module``, nearly spells what the base
    defines there (a name of the module, a module beside it): a typo, not a name the base lacks."""
    if name:
        path = _file(base, module)
        defined = (_defined(path) or set()) if path is not None else set()
        folder, wanted = base.joinpath(*module), name
    else:
        defined, folder, wanted = set(), base.joinpath(*module[:-1]), module[-1]
    if folder.is_dir():
        defined |= {p.stem for p in folder.iterdir() if p.suffix == ".py" or p.is_dir()}
    return bool(difflib.get_close_matches(wanted, sorted(defined - {wanted}), n=1, cutoff=TYPO))


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
