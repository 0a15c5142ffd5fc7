"""What the framework adapters (torch, flax, keras, tinygrad, transformers, paddle, mlx, haiku, equinox, onnxruntime,
mindspore) share.

- :func:`import_framework`: a framework module imported on first use, or an
  :class:`~embconf.adapters.ImplementationError` (exit 2) naming the ``pip install`` line to run;
- :func:`refusals`: the framework's own refusals (an exception type and a text in its message) as the spec's
  error kinds;
- :func:`glue_checks`: marks a typed error raised by the adapter's own code (not the framework's)
  as ``decided_by: glue``, so a report says which verdicts the framework did not earn;
- :class:`FrameworkAdapter`: an in-process adapter (by declaration, :mod:`embconf.adapters.common`) that names the
  framework and its version. Tensors cross through :mod:`embconf.adapters.convert`.
"""

from __future__ import annotations

import importlib
import re
import shlex
from contextlib import contextmanager
from types import ModuleType
from typing import Any, ClassVar, Iterable, Iterator, Optional, Union

from embconf.adapters import ImplementationError
from embconf.adapters.common import InProcessAdapter, module_version
from embconf.adapters.loading import describe_exception
from embconf.model.contract import Capabilities
from embconf.reference.errors import EmbeddingError

GLUE = "glue"


TORCH_CPU = "pip install torch --index-url https://download.pytorch.org/whl/cpu"  # PyTorch's own CPU-only index


def install_line(extra: str) -> str:
    """The pip line that installs the extra's packages, from a checkout and from a wheel alike (the suite is on no
    package index: ``embedding-conformance[EXTRA]`` would not resolve); torch's CPU build first where it is needed."""
    from importlib import metadata

    try:
        listed = metadata.requires("embedding-conformance") or []
    except metadata.PackageNotFoundError:
        listed = []
    marker = f'extra == "{extra}"'
    packages = [line.split(";")[0].strip() for line in listed if marker in line]
    if not packages:
        return f"from a checkout: pip install -e '.[{extra}]'"
    others = [p for p in packages if re.split(r"[<>=!~ \[]", p)[0] != "torch"]  # torchtune, torchrec's ... stay
    line = "pip install " + " ".join(shlex.quote(p) for p in others)
    if len(others) == len(packages):
        return line
    return f"{TORCH_CPU} (the CPU build is enough)" + (f", then {line}" if others else "")


def import_framework(module: str, extra: str, needs: str = "") -> ModuleType:
    """``module`` imported; ImplementationError with the install line when it (or a dependency) is missing."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.split(".")[0] == exc.name.split(".")[0]:
            raise ImplementationError(f"{module} is not installed; {install_line(extra)}{needs}") from None
        raise ImplementationError(
            f"{module} does not import ({describe_exception(exc)}); {install_line(extra)}{needs}"
        ) from None
    except Exception as exc:  # a broken installation, reported in one line
        raise ImplementationError(f"{module} does not import: {describe_exception(exc)}") from None


def package_version(distribution: str) -> str:
    """The installed version of a distribution ('' when it is not installed): for packages whose module carries none."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return ""


@contextmanager
def glue_checks() -> Iterator[None]:
    """Typed errors raised inside are the adapter's own checks: mark them ``decided_by: glue``."""
    try:
        yield
    except EmbeddingError as exc:
        exc.decided_by = GLUE  # type: ignore[attr-defined]
        raise


@contextmanager
def refusals(
    exception: Union[type[BaseException], tuple[type[BaseException], ...]],
    *rules: tuple[Union[str, Iterable[str]], str],
) -> Iterator[None]:
    """The framework's own refusals as the spec's error kinds: an ``exception`` whose message contains the text (or
    one of the texts) of a rule ``(texts, kind)`` is an EmbeddingError of that kind; anything else stays as it is."""
    try:
        yield
    except exception as exc:
        message = str(exc)
        for texts, kind in rules:
            if any(text in message for text in ((texts,) if isinstance(texts, str) else texts)):
                raise EmbeddingError(kind, f"{type(exc).__name__}: {exc}") from exc
        raise


class FrameworkAdapter(InProcessAdapter):
    """An adapter over one framework: reports carry the framework's display name and version."""

    display_name = ""
    targets: ClassVar[Optional[tuple[str, ...]]] = ("",)  # no target unless the adapter declares its own

    def __init__(
        self,
        target: str,
        framework: ModuleType,
        capabilities: Capabilities,
        display_name: str = "",
        parts: Iterable[object] = (),
    ) -> None:
        super().__init__(target, capabilities, module_version(framework), parts)
        self.display_name = display_name or self.display_name or self.kind

    def describe(self) -> dict[str, Any]:
        return {"name": self.display_name, "version": self._version, "language": "python"}
