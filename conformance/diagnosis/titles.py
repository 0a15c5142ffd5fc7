"""One title for the cases of one verdict entry, true of each of them.

Each case states its cause in words measured on that case; the entry's title must not carry one case's words to
all. Titles that agree are said once; titles that differ only in their numbers are said once with each number as
the measured range ("1.33 to 2.83 times"), or a few whole numbers each ("D = 1, 3, 7"); titles that differ in one
name are said once with each name and its count ("should be rejected with index_out_of_range (in 2
of 5 cases) or invalid_offsets (in 3 of 5 cases) before it is used"); titles that differ otherwise are each said
with how many of the cases show them ("...: in 5 of 6 cases; ...: in 1 of 6 cases").
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Optional

NUMBER = re.compile(r"(?<![\w.:])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
SHOWN = 3  # distinct readings a title lists at most
LISTED = 5  # distinct whole numbers (sizes) a title lists one by one instead of as a range
WORD = re.compile(r"[a-z]+(?:_[a-z0-9]+)+")  # a name of the spec's (an error kind, an operation)


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
    spanned = _one_span(ordered, total)
    if spanned:
        return spanned
    parts = [f"{title} (in {n} of {total} cases)" for title, n in ordered[:SHOWN]]
    rest = sum(n for _, n in ordered[SHOWN:])
    if rest:
        parts.append(f"other readings in {rest} of {total} cases")
    return "; ".join(parts)


def _one_span(ordered: list[tuple[str, int]], total: int) -> str:
    """The titles as one when they differ in one name only (the error kind a check should have raised, the
    operation that let it through): the shared words once, each name with how many of the cases show it."""
    if len(ordered) > SHOWN + 1:
        return ""
    split = _split([title for title, _ in ordered])
    if split is None:
        return ""
    head, spans, tail = split
    said = [f"{span} (in {n} of {total} cases)" for span, (_, n) in zip(spans, ordered)]
    return head + ", ".join(said[:-1]) + " or " + said[-1] + tail


def merged_hint(hints: list[str]) -> str:
    """The hint of an entry whose members' hints are ``hints`` (the first is its representative's): one that
    differs from the others in one name says each ("raise the spec's index_out_of_range, invalid_offsets or
    shape_mismatch"), else the representative's."""
    distinct = list(dict.fromkeys(h for h in hints if h))
    split = _split(distinct) if 1 < len(distinct) <= SHOWN + 1 else None
    if split is None:
        return hints[0] if hints else ""
    head, spans, tail = split
    return head + ", ".join(spans[:-1]) + " or " + spans[-1] + tail


def _split(texts: list[str]) -> Optional[tuple[str, list[str], str]]:
    """(the shared head, each text's differing name, the shared tail), when the texts differ in one name only."""
    head = os.path.commonprefix(texts)
    head = head[: head.rfind(" ") + 1]
    tail = os.path.commonprefix([t[len(head) :][::-1] for t in texts])[::-1]
    tail = tail[tail.find(" ") :] if " " in tail else ""
    spans = [t[len(head) : len(t) - len(tail)] for t in texts]
    if not all(WORD.fullmatch(span) for span in spans):  # a snake_case name of the spec's, never a number or a word
        return None
    return head, spans, tail


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
