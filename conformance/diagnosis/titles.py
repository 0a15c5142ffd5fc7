"""One title for the cases of one verdict entry, true of each of them.

Each case states its cause in words measured on that case; the entry's title must not carry one case's words to
all. Titles that agree are said once; titles that differ only in their numbers are said once with each number as
the measured range ("1.33 to 2.83 times"), or a few whole numbers each ("D = 1, 3, 7"); titles that differ in words are each said with how many of the cases
show them ("...: in 5 of 6 cases; ...: in 1 of 6 cases").
"""

from __future__ import annotations

import re
from collections import Counter

NUMBER = re.compile(r"(?<![\w.:])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
SHOWN = 3  # distinct readings a title lists at most
LISTED = 5  # distinct whole numbers (sizes) a title lists one by one instead of as a range


def merged_title(per_case: list[str]) -> str:
    """The title of an entry whose cases measured ``per_case`` (one title per case, in the entry's order)."""
    counts = Counter(per_case)
    if len(counts) <= 1:
        return per_case[0] if per_case else ""
    ranged = _ranged(list(counts))
    if ranged:
        return ranged
    total = len(per_case)
    ordered = counts.most_common()
    parts = [f"{title} (in {n} of {total} cases)" for title, n in ordered[:SHOWN]]
    rest = sum(n for _, n in ordered[SHOWN:])
    if rest:
        parts.append(f"other readings in {rest} of {total} cases")
    return "; ".join(parts)


def _ranged(titles: list[str]) -> str:
    """The titles as one, each differing number as its range, when they differ in nothing but numbers."""
    skeletons = {NUMBER.sub("#", t) for t in titles}
    if len(skeletons) != 1:
        return ""
    columns = list(zip(*(NUMBER.findall(t) for t in titles)))
    pieces = NUMBER.split(titles[0])
    out = pieces[0]
    for values, piece in zip(columns, pieces[1:]):
        as_said = {float(v): v for v in values}  # each number as its case printed it (with the digits it needed)
        numbers = sorted(as_said)
        if len(numbers) == 1:
            out += values[0]
        elif all(n.is_integer() for n in numbers) and len(numbers) <= LISTED:  # sizes: each one, not a range
            out += ", ".join(as_said[n] for n in numbers)
        else:
            out += f"{as_said[numbers[0]]} to {as_said[numbers[-1]]}"
        out += piece
    return out
