"""The suite as the autograder ships it: a wheel of the running suite (built from a checkout, or packed again
from an installed distribution), and any wheel with the example student's graded module replaced by the stub,
so no solution travels in a zip a submission can read.

A wheel's ``RECORD`` lists every member with its sha256 and size; :func:`pack` writes it anew, with every member
at a fixed time, so the same suite gives the same bytes.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Optional

from embconf.autograder.stub import STUB
from embconf.model.errors import UserError
from embconf.model.version import __version__

DISTRIBUTION = "embedding-conformance"
WHEEL_NAME = f"embedding_conformance-{__version__}-py3-none-any.whl"
EXAMPLE_MODULE = "embconf/example_student_data/tinytorch/core/embeddings.py"
STAMP = (1980, 1, 1, 0, 0, 0)
# PEP 427: name-version(-build)?-python-abi-platform.whl, each part without '-' or anything a shell reads
VALID_NAME = re.compile(r"[A-Za-z0-9_.]+-[A-Za-z0-9_.!+]+(-[0-9][A-Za-z0-9_.]*)?(-[A-Za-z0-9_.]+){3}\.whl")
CHECKOUT_PARTS = (
    "pyproject.toml",
    "README.md",
    "conformance",
    "reference",
    "spec",
    "fixtures",
    "examples/tinytorch_student",
)
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info")


class WheelError(UserError):
    """No wheel of the running suite can be made: one line, exit 2."""


def is_valid_name(name: str) -> bool:
    return VALID_NAME.fullmatch(name) is not None


def running_suite(folder: Path) -> Path:
    """A wheel of the suite this Python runs, written into ``folder``; WheelError when none can be made."""
    checkout = running_checkout()
    if checkout is not None:
        return _build(checkout, folder)
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise WheelError(_refusal("the running suite is neither a checkout nor an installed distribution")) from None
    members = {
        str(name): Path(str(distribution.locate_file(name))).read_bytes()
        for name in distribution.files or ()
        if not str(name).startswith("..")
        and "__pycache__" not in str(name)
        and not str(name).endswith(".pyc")
        and Path(str(name)).name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
    }
    if "embconf/cli.py" not in members:
        raise WheelError(_refusal("the installed distribution lists no embconf/cli.py"))
    target = folder / WHEEL_NAME
    target.write_bytes(pack(members))
    return target


def running_checkout() -> Optional[Path]:
    """The checkout this suite runs from (``conformance/`` beside ``pyproject.toml``), or None when installed."""
    package = Path(__file__).resolve().parents[1]
    return package.parent if package.name == "conformance" and (package.parent / "pyproject.toml").is_file() else None


def without_solution(data: bytes) -> bytes:
    """The wheel ``data`` with the example student's graded module replaced by the stub (RECORD written anew)."""
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        members = {
            info.filename: wheel.read(info)
            for info in wheel.infolist()
            if not info.is_dir() and not info.filename.endswith(".dist-info/RECORD")
        }
    if EXAMPLE_MODULE in members:
        members[EXAMPLE_MODULE] = STUB.encode()
    return pack(members)


def pack(members: dict[str, bytes]) -> bytes:
    """A wheel of ``members`` (``name.dist-info/`` among them), its RECORD listing each with its hash and size."""
    info_dir = next(name.split("/")[0] for name in members if name.split("/")[0].endswith(".dist-info"))
    lines = [f"{name},sha256={_digest(content)},{len(content)}" for name, content in sorted(members.items())]
    members = {**members, f"{info_dir}/RECORD": ("\n".join(lines + [f"{info_dir}/RECORD,,"]) + "\n").encode()}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name in sorted(members, key=lambda n: (".dist-info/" in n, n)):  # dist-info last, as the spec asks
            info = zipfile.ZipInfo(name, STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16
            wheel.writestr(info, members[name])
    return buffer.getvalue()


def _digest(content: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()


def _build(checkout: Path, folder: Path) -> Path:
    """``pip wheel`` of a copy of the checkout's packaged parts (the checkout itself is left clean)."""
    source = folder / "source"
    for part in CHECKOUT_PARTS:
        origin = checkout / part
        if origin.is_dir():
            shutil.copytree(origin, source / part, ignore=IGNORED)
        elif origin.is_file():
            source.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(origin, source / part)
    command = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(folder), str(source)]
    env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}
    done = None
    # offline with this Python's setuptools first; else in pip's isolated build (a setuptools from the index)
    for attempt in (["--no-build-isolation"], []):
        try:
            done = subprocess.run(
                command + attempt, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=600
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise WheelError(_refusal(f"pip cannot run: {exc}")) from None
        built = sorted(folder.glob("embedding_conformance-*.whl"))
        if done.returncode == 0 and built:
            return built[0]
    assert done is not None
    last = (done.stderr.strip().splitlines() or [f"pip exited {done.returncode}"])[-1]
    raise WheelError(_refusal(f"pip wheel failed: {last[:200]}"))


def _refusal(why: str) -> str:
    return (
        f"--suite: cannot make a wheel of the running suite ({why}); build one from a checkout "
        "(pip wheel --no-deps .) and give --suite WHEEL"
    )
