"""Every file grading writes goes through :func:`write_text` (swap it for the suite's safe report writer)."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_text(path: Path, text: str) -> None:
    """Write ``text`` atomically (a reader, or an interrupted run, never leaves half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


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
