"""``feedback/NAME.html``: the feedback Markdown as a page a browser shows (the class report links to it).

Only the Markdown :mod:`.feedback` writes is rendered: ``#`` to ``###`` headings, ``-`` bullets with their
indented continuation lines, indented fenced code blocks (closed by their own fence), paragraphs, ``code``
and ``**bold**``, and the backslash escapes of :mod:`.markdown`. Every text is HTML-escaped, so nothing a
submission's messages hold becomes markup. The page is
self-contained (no scripts, no external resources).
"""

from __future__ import annotations

import html
import re

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{title}</title>
<style>body {{ font: 15px/1.5 system-ui, sans-serif; max-width: 60em; margin: 2em auto; padding: 0 1em; color: #222; }}
pre {{ background: #f6f6f6; padding: 0.6em; overflow-x: auto; }} code {{ background: #f3f3f3; padding: 0 0.2em; }}
h3 {{ margin-top: 1.4em; }}</style></head>
<body>
{body}
</body></html>
"""


INLINE = re.compile(r"\\([!-/:-@\[-`{-~])|(`+) ?(.*?) ?\2(?!`)|\*\*")  # an escape, a code span, a bold mark
FENCE = re.compile(r"^\s*(`{3,})\s*$")


def inline(text: str) -> str:
    """Escaped text with ``code`` and **bold** marked up and backslash escapes read."""
    out, position, bold = [], 0, False
    for found in INLINE.finditer(text):
        out.append(html.escape(text[position : found.start()], quote=False))
        if found.group(1) is not None:
            out.append(html.escape(found.group(1), quote=False))
        elif found.group(2) is not None:
            out.append(f"<code>{html.escape(found.group(3), quote=False)}</code>")
        else:
            out.append("</b>" if bold else "<b>")
            bold = not bold
        position = found.end()
    out.append(html.escape(text[position:], quote=False) + ("</b>" if bold else ""))
    return "".join(out)


def page(markdown: str) -> str:
    lines = markdown.splitlines()
    out: list[str] = []
    title = lines[0].lstrip("# ").strip() if lines else "feedback"
    in_list, fence = False, ""
    for line in lines:
        stripped = line.strip()
        if fence:
            if stripped == fence:
                out.append("</pre>")
                fence = ""
            else:
                out.append(html.escape(line[2:] if line.startswith("  ") else line, quote=False))
            continue
        opening = FENCE.match(line)
        if opening:
            out.append("<pre>")
            fence = opening.group(1)
            continue
        if line.startswith("- "):
            if not in_list:
                out.append("<ul>")
                in_list = True
            out.append(f"<li>{inline(line[2:])}")
            continue
        if line.startswith("  ") and in_list and stripped:
            out.append(f"<br>{inline(stripped)}")
            continue
        if in_list and not line.startswith("  "):
            out.append("</ul>")
            in_list = False
        heading = re.match(r"^(#{1,3}) (.*)$", line)
        if heading:
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif stripped:
            out.append(f"<p>{inline(stripped)}</p>")
    out += ["</pre>"] if fence else []
    out += ["</ul>"] if in_list else []
    return PAGE.format(title=html.escape(title), body="\n".join(out))
