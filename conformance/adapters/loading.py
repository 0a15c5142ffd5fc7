"""Importing the module an ``--impl`` target names: a dotted module name or a path to a ``.py`` file.

A file inside a package tree (its directory holds ``__init__.py``) is imported
under its dotted name with the package root on ``sys.path``, so the package's
own absolute imports (``from tinytorch.core.tensor import Tensor``) work. A
plain file is loaded as a script would be: its directory goes first on
``sys.path`` and it is executed from its location. A dotted name is imported
from ``sys.path`` with the working directory appended (as ``python -m`` would
see it, but after installed packages). Every failure becomes one
:class:`~embconf.adapters.ImplementationError` line naming the target and the
exception, never a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Callable, Optional

from embconf.adapters import ImplementationError

_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def is_path(target: str) -> bool:
    """A target is a file path when it ends in ``.py`` or contains a path separator."""
    return target.endswith(".py") or "/" in target or os.sep in target


def load_module(target: str) -> ModuleType:
    """The module ``target`` names, imported; ImplementationError with a one-line reason otherwise."""
    if not target:
        raise ImplementationError("no target given: name a module (pkg.module) or a .py file")
    if is_path(target):
        return _load_file(target)
    if not _DOTTED.match(target):
        raise ImplementationError(f"{target!r} is neither a dotted module name nor a path to a .py file")
    _ensure_on_path(os.getcwd(), first=False)  # `python -m` would see the working directory too
    return _guarded(target, lambda: importlib.import_module(target))


def _load_file(target: str) -> ModuleType:
    path = Path(target).expanduser().resolve()
    if not path.is_file():
        reason = "a directory, not a .py file" if path.is_dir() else "no such file"
        raise ImplementationError(f"cannot load {target!r}: {reason}")
    if path.suffix != ".py":
        raise ImplementationError(f"cannot load {target!r}: not a .py file")
    root, dotted = package_location(path)
    if dotted is None:
        return _guarded(target, lambda: _exec_plain_file(path))
    _ensure_on_path(str(root), first=True)
    module = _guarded(target, lambda: importlib.import_module(dotted))
    _check_origin(target, module, path, dotted)
    return module


def package_location(path: Path) -> tuple[Path, Optional[str]]:
    """(root, dotted name) of a file inside a package tree, or (its directory, None) for a plain file."""
    parts = [path.stem] if path.name != "__init__.py" else []
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    if directory == path.parent:
        return directory, None
    return directory, ".".join(parts)


def _exec_plain_file(path: Path) -> ModuleType:
    """Execute a stand-alone file under a private module name, its directory first on sys.path."""
    _ensure_on_path(str(path.parent), first=True)
    name = "embconf_target_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot create an import spec for {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered first, as import does, so dataclasses and pickling work
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _check_origin(target: str, module: ModuleType, path: Path, dotted: str) -> None:
    """The dotted name must resolve to the file asked for, not to another package of the same name."""
    found = getattr(module, "__file__", None)
    if found is None or Path(found).resolve() != path:
        top = dotted.split(".")[0]
        raise ImplementationError(
            f"cannot load {target!r}: the name {dotted!r} resolves to {found}, another {top!r} package "
            f"shadows it; name the module instead, with its package root on PYTHONPATH"
        )


def _ensure_on_path(directory: str, first: bool) -> None:
    if directory in sys.path:
        return
    if first:
        sys.path.insert(0, directory)
    else:
        sys.path.append(directory)


def _guarded(target: str, load: Callable[[], ModuleType]) -> ModuleType:
    """Run ``load``; any failure, including a SystemExit at import, becomes one ImplementationError line."""
    try:
        return load()
    except ImplementationError:
        raise
    except (Exception, SystemExit) as exc:
        raise ImplementationError(f"cannot import {target!r}: {describe_exception(exc)}{importer(exc)}") from None


def importer(exc: BaseException) -> str:
    """' (imported by FILE line N)': the implementation's own line whose import found no module, else ''."""
    if not isinstance(exc, ModuleNotFoundError):
        return ""
    ours = Path(__file__).resolve().parents[1]
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<") and ours not in Path(f.filename).resolve().parents
    ]
    return f" (imported by {frames[-1].filename} line {frames[-1].lineno})" if frames else ""


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line (the first line of the message)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
