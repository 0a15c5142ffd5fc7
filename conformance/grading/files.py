"""Every file grading writes goes through :func:`write_text`, which writes through the suite's safe writer (:mod:`embconf.untrusted.write`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from embconf.untrusted import write as output

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a cell a spreadsheet would run as a formula


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a reader, or an interrupted run, never leaves half a file), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(path, text)


def write_json(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def check_writable(directory: Path) -> str:
    """'' when ``directory`` can be created and written, else the reason (one line)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".embconf-probe-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        return f"cannot write to {directory}: {exc.strerror or exc}"
    return ""


def csv_cell(text: str) -> str:
    """Text a spreadsheet shows as text (a leading ' disarms a formula)."""
    return f"'{text}" if text.startswith(FORMULA_START) else text
