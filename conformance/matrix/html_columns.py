"""What the HTML page knows of each column beyond the matrix document: its grid position, short name, kind
(the ``--impl`` kind: ``torch``, ``transformers``, ``subprocess``...), language, pass share, and which failing
cases the framework documents; the in-page anchors every link of the page points at."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Any

from embconf.matrix.model import anchor, short_names, slug, title
from embconf.model.impl import Impl
from embconf.model.outcomes import NOT_APPLICABLE, PASS


def code_text(markdown: str) -> str:
    """Escaped text, with the spec's `code` spans as <code>."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(markdown))


def plain(markdown: str) -> str:
    """The text without its `code` marks (for a title attribute)."""
    return markdown.replace("`", "")


@dataclass(frozen=True)
class ColumnView:
    column: dict[str, Any]
    index: int  # 0-based position in the grid
    short: str
    documented_cases: frozenset[str]

    @property
    def impl(self) -> str:
        return str(self.column["impl"])

    @property
    def slug(self) -> str:
        return str(self.column["slug"])

    @property
    def title(self) -> str:
        return title(self.column)

    @property
    def kind(self) -> str:
        return Impl.read(self.impl).kind

    @property
    def language(self) -> str:
        return str(self.column.get("language") or "unknown")

    @property
    def classes(self) -> str:
        """The filter classes of everything that belongs to this column outside the grid."""
        return f"k-{slug(self.kind)} l-{slug(self.language)}"

    @property
    def passed(self) -> int:
        return int(self.column["summary"].get(PASS, 0))

    @property
    def applicable(self) -> int:
        return int(self.column["applicable"])

    @property
    def share(self) -> float:
        """The share of applicable cases that passed, 0..1 (0 when none was applicable)."""
        return self.passed / self.applicable if self.applicable else 0.0

    @property
    def nth_child(self) -> int:
        """The column's cells' position in a grid row (the requirement header is the first)."""
        return self.index + 2

    @property
    def details_id(self) -> str:
        return f"col-{self.slug}"

    @property
    def summary_id(self) -> str:
        return f"sum-{self.slug}"

    def deviation_id(self, number: int) -> str:
        return f"dev-{self.slug}-{number}"


def anchor_of(view: ColumnView, requirement: str) -> str:
    """The id of the column's list of failing cases of ``requirement`` (the Markdown's anchor too)."""
    return anchor(view.column, requirement)


def column_views(doc: dict[str, Any]) -> list[ColumnView]:
    columns = doc["implementations"]
    short = short_names(columns)
    return [
        ColumnView(
            column,
            index,
            short[column["impl"]],
            frozenset(case for d in column["deviations"] if d.get("documented") for case in d["cases"]),
        )
        for index, column in enumerate(columns)
    ]


def cell_class(view: ColumnView, cell: dict[str, Any]) -> str:
    """``p`` pass, ``g`` pass with passes the adapter's glue decided, ``f`` fail, ``d`` fail where every failing
    case is the framework's documented choice, ``n`` not applicable."""
    if cell["status"] == "fail":
        return "d" if set(cell["failing"]) <= view.documented_cases else "f"
    if cell["status"] == "pass":
        return "g" if cell["glue"] else "p"
    return "n"


def cell_title(view: ColumnView, requirement: str, cell: dict[str, Any]) -> str:
    """What a cell's hover says: ``EMB-IDX-2 · torch: 3 of 12 cases fail (2 documented choices); 9 pass``."""
    counts = cell["counts"]
    ran = sum(n for outcome, n in counts.items() if outcome != NOT_APPLICABLE)
    passed = counts.get(PASS, 0)
    if cell["status"] == "fail":
        documented = len(set(cell["failing"]) & view.documented_cases)
        text = f"{len(cell['failing'])} of {ran} cases fail" + (
            f" ({documented} the framework's documented choice{'s' if documented != 1 else ''})" if documented else ""
        )
        text += f"; {passed} pass" if passed else ""
    elif cell["status"] == "pass":
        text = f"{passed} case{'s' if passed != 1 else ''} pass" + (
            f" ({cell['glue']} decided by the adapter's glue)" if cell["glue"] else ""
        )
    else:
        text = "not applicable"
    return f"{requirement} · {view.short}: {text}"


def share_text(view: ColumnView) -> str:
    """The pass share in whole percent, rounded down so that 99.6 % is never shown as 100."""
    return str(int(view.share * 100)) if view.applicable else "–"


def share_class(view: ColumnView) -> str:
    """``s4`` every applicable case passed ... ``s0`` under half of them; ``sn`` nothing applicable."""
    if not view.applicable:
        return "sn"
    share = view.share
    return "s4" if share == 1 else "s3" if share >= 0.9 else "s2" if share >= 0.75 else "s1" if share >= 0.5 else "s0"
