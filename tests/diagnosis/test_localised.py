"""Where the differences sit, said by the inputs' own structure and only where it separates: each sentence template
generated on outputs where its predicate holds (exactly the units it names differ) and where it does not (one more
unit differs, or one of them does not), and said only in the first."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from embconf.diagnosis.difference import differing
from embconf.diagnosis.localise import where
from embconf.reference.bag import embedding_bag_backward, embedding_bag_forward
from embconf.reference.lookup import embedding_forward
from embconf.reference.sinusoid import sinusoidal_table

SETTINGS = settings(max_examples=30, deadline=None)


def _said(operation: str, inputs: dict[str, Any], name: str, want: np.ndarray, got: np.ndarray) -> str:
    found = where(operation, inputs, name, differing(want, got))
    return "" if found is None else f"{found.title} | {found.said}"


def _moved(want: np.ndarray, where_: np.ndarray) -> np.ndarray:
    """``want`` with the elements of the boolean mask ``where_`` changed (each by one and a half times itself + 1)."""
    got = want.astype(np.float64).copy()
    got[where_] = got[where_] * 1.5 + 1.0
    return got.astype(want.dtype)


@st.composite
def bags(draw: Any) -> dict[str, Any]:
    """A bag call of 2..6 bags of 0..4 ids each over a table of 8 rows."""
    sizes = draw(st.lists(st.integers(0, 4), min_size=2, max_size=6))
    ids = np.array(draw(st.lists(st.integers(0, 7), min_size=sum(sizes), max_size=sum(sizes))), dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    weight = np.random.default_rng(len(ids)).standard_normal((8, 4)).astype(np.float32)
    return {"weight": weight, "ids": ids, "offsets": offsets, "mode": "sum"}


def _holding(inputs: dict[str, Any], value: int) -> np.ndarray:
    ids, offsets = inputs["ids"], list(inputs["offsets"]) + [inputs["ids"].size]
    return np.array([value in ids[a:b] for a, b in zip(offsets, offsets[1:])])


@SETTINGS
@given(inputs=bags(), extra=st.integers(0, 5))
def test_the_bags_holding_v_minus_1_are_said_only_when_exactly_they_differ(inputs, extra) -> None:
    want = embedding_bag_forward(**inputs)
    held = _holding(inputs, 7)
    if not held.any() or held.all():
        return  # nothing separates: every bag, or no bag, holds it
    said = _said("embedding_bag_forward", inputs, "output", want, _moved(want, np.repeat(held[:, None], 4, axis=1)))
    assert "in the bags holding id V-1" in said and "id 7 (V-1)" in said, said
    other = held.copy()
    other[extra % held.size] = not other[extra % held.size]  # one bag more, or one fewer
    if other.any():
        said = _said(
            "embedding_bag_forward", inputs, "output", want, _moved(want, np.repeat(other[:, None], 4, axis=1))
        )
        assert "id 7 (V-1)" not in said or np.array_equal(other, _holding(inputs, 7)), said


@SETTINGS
@given(inputs=bags())
def test_the_empty_bags_are_said_only_when_exactly_they_differ(inputs) -> None:
    want = embedding_bag_forward(**inputs)
    offsets = list(inputs["offsets"]) + [inputs["ids"].size]
    empty = np.array([a == b for a, b in zip(offsets, offsets[1:])])
    if not empty.any() or empty.all():
        return
    said = _said("embedding_bag_forward", inputs, "output", want, _moved(want, np.repeat(empty[:, None], 4, axis=1)))
    assert "in the bags empty" in said, said
    more = empty | (np.arange(empty.size) == int(np.argmin(empty)))  # one non-empty bag differs too
    said = _said("embedding_bag_forward", inputs, "output", want, _moved(want, np.repeat(more[:, None], 4, axis=1)))
    assert "in the bags empty" not in said, said


@SETTINGS
@given(inputs=bags(), row=st.integers(0, 7), also=st.integers(0, 7))
def test_one_row_of_a_bag_gradient_is_said_only_when_it_alone_differs(inputs, row, also) -> None:
    grad = np.random.default_rng(row).standard_normal((len(inputs["offsets"]), 4)).astype(np.float32)
    want, _ = embedding_bag_backward(**inputs, grad_output=grad)
    rows = np.arange(8) == row
    said = _said("embedding_bag_backward", inputs, "grad_weight", want, _moved(want, np.repeat(rows[:, None], 4, 1)))
    assert any(w in said for w in (f"in the row of id {row} ", "no id uses", "repeated ids", "occur once")), said
    if also != row:
        two = rows | (np.arange(8) == also)
        said = _said("embedding_bag_backward", inputs, "grad_weight", want, _moved(want, np.repeat(two[:, None], 4, 1)))
        assert f"in the row of id {row} " not in said, said


@SETTINGS
@given(ids=st.lists(st.integers(0, 5), min_size=3, max_size=10))
def test_the_positions_of_repeated_ids_are_said_only_when_exactly_they_differ(ids) -> None:
    inputs = {"weight": np.arange(24, dtype=np.float32).reshape(6, 4) + 1, "ids": np.array(ids, dtype=np.int64)}
    want = embedding_forward(inputs["weight"], inputs["ids"])
    flat = np.array(ids)
    repeated = np.array([ids.count(i) > 1 for i in ids])
    if not repeated.any() or repeated.all():
        return
    said = _said("embedding_forward", inputs, "output", want, _moved(want, np.repeat(repeated[:, None], 4, 1)))
    assert "whose id occurs more than once" in said, said
    lone = repeated.copy()
    lone[int(np.flatnonzero(repeated)[0])] = False  # one repeated id's position matches: not all of them differ
    if lone.any() and not (np.isin(flat, flat[lone]) == lone).all():
        said = _said("embedding_forward", inputs, "output", want, _moved(want, np.repeat(lone[:, None], 4, 1)))
        assert "occurs more than once" not in said, said


@SETTINGS
@given(length=st.integers(4, 40), start=st.integers(1, 39), width=st.sampled_from([4, 6, 8]), hole=st.integers(0, 39))
def test_a_range_of_positions_is_said_only_when_exactly_it_differs(length, start, width, hole) -> None:
    start = start % length or 1
    inputs = {"max_len": length, "embed_dim": width, "dtype": "float32"}
    want = sinusoidal_table(length, width, "float32")
    rows = np.arange(length) >= start
    said = _said("sinusoidal_table", inputs, "table", want, _moved(want, np.repeat(rows[:, None], width, 1)))
    assert f"at the positions {start} and above" in said or (start == length - 1 and f"position {start}" in said), said
    gap = rows & (np.arange(length) != start + hole % max(length - start, 1))  # one position inside matches
    if gap.any() and gap.sum() < rows.sum() and not gap[start]:
        said = _said("sinusoid_table", inputs, "table", want, _moved(want, np.repeat(gap[:, None], width, 1)))
        assert f"at the positions {start} and above" not in said, said


@SETTINGS
@given(width=st.sampled_from([4, 6, 8, 16]), parity=st.integers(0, 1), stray=st.integers(0, 15))
def test_the_sine_or_cosine_columns_are_said_only_when_exactly_they_differ(width, parity, stray) -> None:
    inputs = {"max_len": 6, "embed_dim": width, "dtype": "float32"}
    want = sinusoidal_table(6, width, "float32")
    columns = np.arange(width) % 2 == parity
    words = "sine columns" if parity == 0 else "cosine columns"
    said = _said("sinusoidal_table", inputs, "table", want, _moved(want, np.repeat(columns[None], 6, 0)))
    assert words in said, said
    other = columns.copy()
    other[stray % width] = not other[stray % width]
    said = _said("sinusoidal_table", inputs, "table", want, _moved(want, np.repeat(other[None], 6, 0)))
    assert words not in said, said


def _rope(d: int, rotary: int, pairing: str, positions: np.ndarray, original: Optional[int] = None) -> dict[str, Any]:
    scaling: dict[str, Any] = {"rope_type": "default"}
    if original is not None:
        scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": original}
    x = np.random.default_rng(d).standard_normal((2, positions.size, d)).astype(np.float32)
    return {
        "x": x,
        "position_ids": positions,
        "rotary_dim": rotary,
        "base": 10000.0,
        "scaling": scaling,
        "pairing": pairing,
    }


@SETTINGS
@given(
    d=st.sampled_from([8, 16]),
    pairing=st.sampled_from(["half_split", "interleaved"]),
    lo=st.integers(0, 7),
    span=st.integers(0, 7),
)
def test_a_band_of_rotation_pairs_is_said_only_when_exactly_its_columns_differ(d, pairing, lo, span) -> None:
    inputs = _rope(d, d, pairing, np.arange(6))
    half = d // 2
    lo, hi = lo % half, min(lo % half + span, half - 1)
    if lo == 0 and hi == half - 1:
        return  # every pair: nothing to locate
    columns = np.arange(d)
    pair = columns // 2 if pairing == "interleaved" else columns % half
    band = (pair >= lo) & (pair <= hi)
    want = inputs["x"].copy()
    said = _said("rope_forward", inputs, "output", want, _moved(want, np.broadcast_to(band, want.shape)))
    assert f"in the pairs k = {lo}" in said, said
    one = band & (columns != int(np.flatnonzero(band)[0]))  # one column of a pair matches: no band of pairs
    said = _said("rope_forward", inputs, "output", want, _moved(want, np.broadcast_to(one, want.shape)))
    assert "in the pairs k" not in said, said


@SETTINGS
@given(original=st.integers(2, 14), stray=st.integers(0, 15))
def test_the_positions_past_the_original_context_are_said_only_when_exactly_they_differ(original, stray) -> None:
    positions = np.arange(16)
    inputs = _rope(8, 8, "half_split", positions, original)
    want = inputs["x"].copy()
    past = np.broadcast_to((positions >= original)[:, None], want.shape[1:])
    said = _said("rope_forward", inputs, "output", want, _moved(want, np.broadcast_to(past, want.shape)))
    assert "past the original context" in said, said
    other = positions >= original
    other[stray] = not other[stray]
    if other.any() and not other.all():
        moved = _moved(want, np.broadcast_to(other[:, None], want.shape[1:]) & np.ones(want.shape, bool))
        assert "past the original context" not in _rope_said(inputs, want, moved)


def _rope_said(inputs: dict[str, Any], want: np.ndarray, got: np.ndarray) -> str:
    return _said("rope_forward", inputs, "output", want, got)


def test_nothing_is_said_where_every_unit_differs_or_none_does() -> None:
    inputs = {"weight": np.ones((4, 2), np.float32), "ids": np.array([3, 3, 1], np.int64)}
    want = embedding_forward(inputs["weight"], inputs["ids"])
    assert _said("embedding_forward", inputs, "output", want, want) == ""
    assert _said("embedding_forward", inputs, "output", want, want * 2 + 1) == ""


@SETTINGS
@given(first=st.integers(1, 7))
def test_position_0_of_a_rotation_says_nothing_by_matching(first) -> None:
    inputs = _rope(8, 8, "half_split", np.arange(8))
    want = inputs["x"].copy()
    every_turned = np.broadcast_to((np.arange(8) >= 1)[:, None], want.shape[1:])  # every angle wrong: 0 stays
    assert _rope_said(inputs, want, _moved(want, np.broadcast_to(every_turned, want.shape))) == ""
    later = np.broadcast_to((np.arange(8) >= first)[:, None], want.shape[1:])
    said = _rope_said(inputs, want, _moved(want, np.broadcast_to(later, want.shape)))
    located = f"at the positions {first} and above" in said or f"at the position {first} (" in said
    assert located == (first > 1), said


@SETTINGS
@given(start=st.integers(0, 8), length=st.integers(1, 7), stray=st.integers(0, 15))
def test_the_rows_the_positions_use_are_said_only_when_exactly_they_differ(start, length, stray) -> None:
    x = np.ones((2, length, 4), np.float32)
    inputs = {"table": np.ones((16, 4), np.float32), "x": x, "start_pos": start, "grad_output": x}
    want = np.zeros((16, 4), np.float32)
    used = (np.arange(16) >= start) & (np.arange(16) < start + length)
    said = _said("learned_positions_backward", inputs, "grad_table", want, _moved(want, np.repeat(used[:, None], 4, 1)))
    assert "in the rows the positions use" in said, said
    other = used.copy()
    other[stray] = not other[stray]
    if other.any():
        said = _said(
            "learned_positions_backward", inputs, "grad_table", want, _moved(want, np.repeat(other[:, None], 4, 1))
        )
        assert "in the rows the positions use" not in said, said
