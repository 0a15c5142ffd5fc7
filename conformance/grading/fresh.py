"""Calling a function in a fresh interpreter, from anywhere: a notebook kernel, ``python -i``, or a script
without ``if __name__ == "__main__":``.

:func:`call` starts ``python -c`` (never re-imports the caller's ``__main__``, which ``multiprocessing``'s
spawn does), hands it the function, its arguments and the caller's ``sys.path`` pickled through a file,
and returns what the function returned, or re-raises what it raised. Nothing the caller imported (another
``tinytorch``) is in the fresh interpreter. Its output is captured; a fresh interpreter that dies is
:class:`FreshError` with its last line of stderr. Ctrl-C in the caller ends it.
"""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

CHILD = "import sys; from embconf.grading.fresh import _child; _child(sys.argv[1])"


class FreshError(Exception):
    """The fresh interpreter ended without an answer: one line."""


def call(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` run in a fresh interpreter (the function must be a module-level name)."""
    with tempfile.TemporaryDirectory(prefix="embconf-fresh-") as tmp:
        exchange = Path(tmp) / "exchange.pickle"
        exchange.write_bytes(pickle.dumps((function.__module__, function.__qualname__, args, list(sys.path))))
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(exchange)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
        try:
            status, value = pickle.loads(exchange.read_bytes())
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            status, value = "lost", None
    if status == "returned":
        return value
    if status == "raised":
        raise value
    last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    raise FreshError(f"the checking process ended without an answer ({last[:300]})")


def _child(exchange: str) -> None:
    path = Path(exchange)
    module, name, args, caller_path = pickle.loads(path.read_bytes())
    path.write_bytes(b"")  # an answer is written below, or none
    sys.path[:] = caller_path + [entry for entry in sys.path if entry not in caller_path]
    function: Any = importlib.import_module(module)
    for part in name.split("."):
        function = getattr(function, part)
    try:
        answer = ("returned", function(*args))
    except Exception as exc:  # handed to the caller, which raises it
        answer = ("raised", exc)
    try:
        data = pickle.dumps(answer)
    except Exception as exc:  # an answer that cannot travel
        data = pickle.dumps(("raised", FreshError(f"the answer cannot be sent back ({type(exc).__name__}: {exc})")))
    path.write_bytes(data)
