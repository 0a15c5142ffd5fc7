"""Type-check the package ``embconf`` with mypy, as it is installed: ``conformance/`` is ``embconf`` and
``reference/`` is ``embconf.reference`` (pyproject.toml's package-dir), which mypy cannot follow through an
editable install. This lays the two folders out as one package of symlinks in a temporary directory, runs
mypy on it with the configuration in pyproject.toml, and reports paths of the checkout.

mypy's incremental cache is kept in the checkout's ``.mypy_cache/`` (mypy writes a .gitignore there):
the frameworks mypy follows (torch alone is some 1 400 modules) are analysed once, not on every run. A module
whose source or dependencies changed, and every module with an error, is checked again, so a warm run reports
exactly what a cold one does; ``--no-cache`` checks everything from scratch.

    python scripts/typecheck.py             # exit 0 when mypy finds nothing
    python scripts/typecheck.py --no-cache  # the same, without reading or writing the cache
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".mypy_cache"


def main(argv: list[str]) -> int:
    cache = os.devnull if "--no-cache" in argv else str(CACHE)
    with tempfile.TemporaryDirectory(prefix="embconf-types-") as tmp:
        package = Path(tmp) / "embconf"
        package.mkdir()
        for entry in (ROOT / "conformance").iterdir():
            if entry.name != "__pycache__":
                (package / entry.name).symlink_to(entry)
        (package / "reference").symlink_to(ROOT / "reference")
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", cache]
            + ["-p", "embconf"],
            cwd=tmp,
            capture_output=True,
            text=True,
            env={"MYPYPATH": tmp, "PATH": "/usr/bin:/bin"},
        )
    out = (done.stdout + done.stderr).replace("embconf/reference/", "reference/").replace("embconf/", "conformance/")
    sys.stdout.write(out)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
