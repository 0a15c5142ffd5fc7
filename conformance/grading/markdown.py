"""Text a submission controls (its file names, its messages, its load errors), written into Markdown that Gradescope
renders and a student opens: never markup. Inline text is backslash-escaped (no raw HTML, link, image or code span
starts in it); a code span or fenced block is delimited by more backticks than the text holds, so nothing closes it
early. :mod:`.feedback_html` reads the same escapes back when it renders the page."""

from __future__ import annotations

import re

SPECIAL = re.compile(
    r"([\\`*<>&])|(?<=\])(\()|(!)(?=\[)"
)  # HTML, an entity, a code span, emphasis; a link's ( or image's !
ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash escape, as CommonMark reads it


def text(value: object) -> str:
    """``value`` as inline Markdown that shows exactly its characters (on one line)."""
    return SPECIAL.sub(lambda found: "\\" + found.group(0), " ".join(str(value).splitlines()))


def code(value: object) -> str:
    """``value`` as an inline code span."""
    shown = " ".join(str(value).splitlines())
    fence = "`" * (_longest_run(shown) + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def block(lines: list[str], indent: str = "") -> list[str]:
    """``lines`` as a fenced code block (each line under ``indent``)."""
    fence = "`" * max(3, _longest_run("\n".join(lines)) + 1)
    return [f"{indent}{fence}", *(f"{indent}{line}" for line in lines), f"{indent}{fence}"]


def _longest_run(value: str) -> int:
    return max((len(run) for run in re.findall(r"`+", value)), default=0)
