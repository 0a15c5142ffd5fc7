"""Choosing cases: by id glob, by requirement (id or glob) and by feature (``none``: untagged)."""

from __future__ import annotations

import fnmatch
from typing import Iterable, Sequence

from embconf.corpus.fixtures import Case


def select(
    cases: Iterable[Case], globs: Sequence[str] = (), requirements: Sequence[str] = (), features: Sequence[str] = ()
) -> list[Case]:
    """The cases that match every given filter (each filter: any of its values)."""
    chosen = []
    for case in cases:
        if globs and not any(fnmatch.fnmatchcase(case.id, g) for g in globs):
            continue
        if requirements and not any(fnmatch.fnmatchcase(r, want) for r in case.requirements for want in requirements):
            continue
        if features and not any((f in case.features) or (f == "none" and not case.features) for f in features):
            continue
        chosen.append(case)
    return chosen
