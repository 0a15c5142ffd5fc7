"""How much a search of one area may spend (:class:`Budget`), and the defaults ``embconf explore`` gives it:
read by the command's options without loading Hypothesis."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_CASES = 3000  # a search of an area: at most this many cases...
DEFAULT_SECONDS = 30.0  # ...and this long, then as long again at most to shrink a failure


@dataclass(frozen=True)
class Budget:
    """How much one area's search may spend: cases drawn, and seconds (shrinking a failure gets as long)."""

    cases: int = DEFAULT_CASES
    seconds: float = DEFAULT_SECONDS
