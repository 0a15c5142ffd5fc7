"""The command line read into typed values: each command's options become a dataclass in the command's own
argument-parsing function, so the parsed ``argparse.Namespace`` goes no further (the commands, the session and
every mechanism below take the dataclass)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def typed(kind: type[T], args: argparse.Namespace, **given: Any) -> T:
    """The dataclass ``kind`` with each field the option of its name in ``args`` (or the value ``given`` for it)."""
    names = [field.name for field in dataclasses.fields(kind)]  # type: ignore[arg-type]
    return kind(**{name: given[name] if name in given else getattr(args, name) for name in names})
