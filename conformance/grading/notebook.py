"""The cells nbdev would export to module 11 (``tinytorch.core.embeddings``, or ``tinytorch.text.embeddings`` as
TinyTorch exported it until late 2025: :data:`embconf.adapters.tinytorch_layouts.EXPORT_NAMES`), from a notebook, without running it.

Two notebook forms are read: Jupyter ``.ipynb`` (JSON) and jupytext percent-format ``.py`` (cells
start at lines ``# %%``; ``# %% [markdown]`` cells are prose). A code cell is exported when one of its
leading directive lines is ``#| export`` (or ``exports``/``exporti``), to the module the directive
names or else to the notebook's ``#| default_exp``. Only cells exported to module 11 (the first such
name the notebook exports to) are kept, in notebook order (their directive lines stay, as comments). Nothing in the notebook is executed here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from embconf.adapters.tinytorch_layouts import EXPORT_NAMES, is_export

TARGET = EXPORT_NAMES[0]
PERCENT_CELL = re.compile(r"^# ?%%(?!%)(.*)$")
DIRECTIVE = re.compile(r"^\s*#\s*\|\s*([A-Za-z_]+)\s*(.*?)\s*$")
EXPORTS = frozenset({"export", "exports", "exporti"})


class NotebookError(Exception):
    """The notebook cannot be graded (not valid JSON, no exported cells ...): one line."""


@dataclass
class Exported:
    """The module text nbdev would write, and where each of its lines came from."""

    source: str
    cells: list[tuple[int, int]] = field(default_factory=list)  # (first line in source, notebook cell number)
    default_exp: str = ""
    module: str = TARGET  # the module 11 export name the cells go to (core.embeddings, text.embeddings)

    def locate(self, line: int) -> str:
        """'line L of exported cell C' for a line number of ``source`` (1-based)."""
        for start, cell in reversed(self.cells):
            if line >= start:
                return f"line {line - start + 1} of notebook cell {cell}"
        return f"line {line}"


def is_percent_notebook(text: str) -> bool:
    """A ``.py`` file is a percent notebook when it has ``# %%`` cell markers."""
    return any(PERCENT_CELL.match(line) for line in text.splitlines())


def read_cells(path: Path) -> list[tuple[str, str]]:
    """(cell type, source) of every cell, in order."""
    if path.suffix == ".ipynb":
        return _ipynb_cells(path)
    return _percent_cells(path.read_text(encoding="utf-8", errors="replace"))


def _ipynb_cells(path: Path) -> list[tuple[str, str]]:
    try:
        document = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotebookError(f"not a valid notebook: not valid JSON ({str(exc).splitlines()[0][:120]})") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotebookError("not a valid notebook: the .ipynb has no list of cells")
    found = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else str(source)
        found.append((str(cell.get("cell_type", "code")), text))
    return found


def _percent_cells(text: str) -> list[tuple[str, str]]:
    cells: list[tuple[str, list[str]]] = []
    kind, lines = "code", list[str]()
    for line in text.splitlines():
        marker = PERCENT_CELL.match(line)
        if marker:
            if lines or cells:
                cells.append((kind, lines))
            kind = "markdown" if re.search(r"\[\s*(markdown|md|raw)\s*\]", marker.group(1)) else "code"
            lines = []
        else:
            lines.append(line)
    cells.append((kind, lines))
    return [(k, "\n".join(body)) for k, body in cells]


def export(path: Path) -> Exported:
    """The exported cells of the notebook at ``path``; NotebookError when it has none."""
    cells = read_cells(path)
    default_exp = ""
    chosen: list[tuple[int, str, str]] = []
    for number, (kind, source) in enumerate(cells, 1):
        if kind != "code":
            continue
        directives = _directives(source)
        for name, argument in directives:
            if name == "default_exp":
                default_exp = argument.split()[0] if argument else ""
        targets = [argument.split()[0] if argument else "" for name, argument in directives if name in EXPORTS]
        if targets:
            chosen.append((number, targets[0], source))
    goes_to = [(number, (target or default_exp).removeprefix("tinytorch."), body) for number, target, body in chosen]
    names = [name for _, name, _ in goes_to if is_export(name)]
    kept = [(number, body) for number, name, body in goes_to if names and name == names[0]]
    if not kept:
        where = f" (default_exp is {default_exp!r})" if default_exp and not is_export(default_exp) else ""
        raise NotebookError(
            f"no exported cells: no code cell marked '#| export' for {' or '.join(EXPORT_NAMES)}{where}"
        )
    exported = Exported("", default_exp=default_exp, module=names[0])
    parts, line = [f"# Exported from {path.name}: the '#| export' cells for {names[0]}, in notebook order.\n"], 2
    for number, body in kept:
        exported.cells.append((line + 1, number))
        block = f"\n{body.rstrip()}\n"  # directive lines stay (comments), so cell line numbers hold
        parts.append(block)
        line += block.count("\n")
    exported.source = "".join(parts)
    return exported


def _directives(source: str) -> list[tuple[str, str]]:
    """The ``#|`` directives at the top of a cell (before its first line of code), as (name, argument)."""
    found = []
    for line in source.splitlines():
        match = DIRECTIVE.match(line)
        if match:
            found.append((match.group(1), match.group(2)))
        elif line.strip() and not line.lstrip().startswith("#"):
            break
    return found
