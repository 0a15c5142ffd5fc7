"""``feedback/NAME.html``: the feedback Markdown as a page a browser shows (the class report links to it).

Only the Markdown :mod:`.feedback` writes is rendered: ``#`` to ``###`` headings, ``-`` bullets with their
indented continuation lines, indented fenced code blocks, paragraphs, ``code`` and ``**bold**``. Every
text is HTML-escaped first, so nothing a submission's messages hold becomes markup. The page is
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


def inline(text: str) -> str:
    """Escaped text with ``code`` and **bold** marked up."""
    escaped = html.escape(text, quote=False)
    escaped = re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", escaped)


def page(markdown: str) -> str:
    lines = markdown.splitlines()
    out: list[str] = []
    title = lines[0].lstrip("# ").strip() if lines else "feedback"
    in_list = in_code = False
    for line in lines:
        stripped = line.strip()
        if in_code:
            if stripped == "```":
                out.append("</pre>")
                in_code = False
            else:
                out.append(html.escape(line[2:] if line.startswith("  ") else line, quote=False))
            continue
        if stripped == "```":
            out.append("<pre>")
            in_code = True
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
    out += ["</pre>"] if in_code else []
    out += ["</ul>"] if in_list else []
    return PAGE.format(title=html.escape(title), body="\n".join(out))
