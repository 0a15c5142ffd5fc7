"""Headless Chromium for the tests of HTML pages (Debian's package ``chromium``; a test that needs it skips
with the reason where it is absent): run it on a page, or measure a page by a test-only script."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (Debian package 'chromium'; .ci/run installs it)"
)
CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MEASURED = "embconf-measured"


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium with a fresh profile, no network of its own, and ``args`` (a page last)."""
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *CHROME_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )


def measure(page: str, script: str, workdir: Path, window: str = "1400,900") -> Any:
    """What ``script`` (a JavaScript expression) evaluates to, as JSON, on ``page`` (HTML text) laid out in a
    window of ``window`` pixels. The script is added to a copy of the page, never to the page under test."""
    copy = workdir / "measured.html"
    probe = f"<script>document.body.insertAdjacentHTML('beforeend','<pre id=\"{MEASURED}\"></pre>');"
    probe += f"let measured;try{{measured={script}}}catch(e){{measured={{script_error:String(e)}}}}"
    probe += f"document.getElementById('{MEASURED}').textContent=JSON.stringify(measured);</script>"
    head, _, tail = page.rpartition("</body>")
    copy.write_text(head + probe + "</body>" + tail, encoding="utf-8")
    done = chromium(workdir / "profile-measure", f"--window-size={window}", "--dump-dom", copy.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    text = done.stdout.rsplit(f'<pre id="{MEASURED}">', 1)[1].split("</pre>", 1)[0]
    measured = json.loads(text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert not (isinstance(measured, dict) and "script_error" in measured), measured
    return measured
