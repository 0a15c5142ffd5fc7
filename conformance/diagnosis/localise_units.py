"""The units and columns of each family's outputs, by the inputs' own structure (``localise``'s vocabulary).

- a lookup's output (``output`` of the lookup, the max-norm lookup and the layer): one unit per position of the
  ids, described by the id it holds, whether that id repeats, and its place in the sequence;
- a table's gradient (``grad_weight``, ``grad_token_weight``): one unit per row, described by the id (V-1,
  padding_idx, 0), how often the ids use it (never, once, more than once);
- a position table's gradient, learned positions, a sinusoid table and a rotary input: one unit per position,
  described by its range (against the table's length, or the original context of a scaled rotary embedding);
- a bag's output: one unit per bag (empty, of one id, holding padding_idx, weighted, holding an id, the last);
  a bag's weight gradient: one unit per position, by its bag's kind and its id;
- columns: the sine or cosine columns of a sinusoid, a rotation's pairs (by frequency), the pass-through features.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Optional

import numpy as np

from embconf.diagnosis.localise import (
    COMMON,
    FEW_COLUMNS,
    INDEX,
    KIND,
    NO_ID,
    RANGE,
    SHOWN,
    Found,
    Holding,
    Units,
    listed,
    runs,
)

LOOKUPS = ("embedding_forward", "embedding_forward_max_norm", "embedding_layer_forward")
TABLE_GRADIENTS = {"grad_weight": ("weight", "ids"), "grad_token_weight": ("token_weight", "tokens")}
COMMONER = {"of one id": COMMON}  # a bag kind most bags have: said after the named ids
POSITION_OUTPUTS = {("learned_positions_forward", "output"), ("learned_positions_backward", "grad_x")}
POSITION_GRADIENTS = ("grad_table", "grad_position_table")
ROTATIONS = ("rope_forward", "rope_backward", "rope_apply", "rope_apply_backward")


def _ids(inputs: Mapping[str, Any]) -> Optional[np.ndarray]:
    ids = inputs.get("ids", inputs.get("tokens"))
    return ids if isinstance(ids, np.ndarray) and ids.dtype.kind in "iu" else None


def _vocab(inputs: Mapping[str, Any]) -> Optional[int]:
    for key in ("weight", "token_weight"):
        if isinstance(inputs.get(key), np.ndarray) and inputs[key].ndim == 2:
            return int(inputs[key].shape[0])
    config = inputs.get("config")
    return int(config["vocab_size"]) if isinstance(config, Mapping) and "vocab_size" in config else None


def _padding(inputs: Mapping[str, Any], vocab: Optional[int]) -> Optional[int]:
    value = inputs.get("padding_idx")
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        return None
    return int(value) + vocab if value < 0 and vocab is not None else int(value)


def units_of(
    operation: str, inputs: Mapping[str, Any], name: str, shape: tuple[int, ...], rows: Optional[list[int]]
) -> Optional[Units]:
    """The units of output ``name`` (of ``shape``) of a case of ``operation``, with their predicates; None when
    the family names none."""
    if operation.startswith("embedding_bag"):
        return _bag_units(operation, inputs, name, shape)
    if operation in LOOKUPS and name == "output":
        return _lookup_units(inputs, shape)
    if name in TABLE_GRADIENTS:
        return _row_units(inputs, name, shape)
    if (operation, name) in POSITION_OUTPUTS and len(shape) == 3:
        start = int(inputs.get("start_pos") or 0)
        return _position_units((1,), start + np.arange(shape[1]), _table_rows(inputs), "the table's rows")
    if name in POSITION_GRADIENTS and len(shape) == 2:
        return _used_positions(inputs, shape[0])
    if operation == "sinusoidal_table" and len(shape) == 2:
        positions = np.asarray(rows, dtype=np.int64) if rows is not None else np.arange(shape[0])
        return _position_units((0,), positions, None, "")
    if operation in ROTATIONS or operation == "rope_tables":
        return _rotary_units(operation, inputs, shape)
    return None


def _lookup_units(inputs: Mapping[str, Any], shape: tuple[int, ...]) -> Optional[Units]:
    ids = _ids(inputs)
    if ids is None or tuple(shape[:-1]) != ids.shape or ids.ndim == 0:
        return None
    vocab = _vocab(inputs)
    units = Units("position", tuple(range(ids.ndim)))
    flat = ids.reshape(-1)
    _, inverse, counts = np.unique(flat, return_inverse=True, return_counts=True)
    repeated = counts[inverse.reshape(-1)] > 1
    units.add(
        "at the positions whose id occurs more than once", "at the positions whose id repeats", repeated, "repeated ids"
    )
    units.add(
        "at the positions whose id occurs once", "at the positions whose id occurs once", ~repeated, "ids once", COMMON
    )
    units.holding = Holding(
        flat[:, None], "at the positions holding", "at the positions holding", vocab, _padding(inputs, vocab)
    )
    start = inputs.get("start_pos")
    offset = int(start) if isinstance(start, (int, np.integer)) and not isinstance(start, bool) else 0
    place = np.broadcast_to(np.arange(ids.shape[-1]), ids.shape).reshape(-1) + offset
    units.ordered.append(("at the sequence positions", place, RANGE))
    if ids.ndim >= 2:
        units.ordered.append(
            ("in the sequences of the batch", np.repeat(np.arange(ids.shape[0]), flat.size // ids.shape[0]), INDEX)
        )
    return units


def _row_units(inputs: Mapping[str, Any], name: str, shape: tuple[int, ...]) -> Optional[Units]:
    ids = inputs.get(TABLE_GRADIENTS[name][1])
    if not isinstance(ids, np.ndarray) or ids.dtype.kind not in "iu" or len(shape) != 2:
        return None
    vocab = shape[0]
    used = ids.reshape(-1)
    counts = np.bincount(used[(used >= 0) & (used < vocab)], minlength=vocab)[:vocab]
    units = Units("row", (0,))
    units.add("in the rows no id uses", "in the rows no id uses", counts == 0, "unused rows")
    units.add(
        "in the rows of the ids that occur more than once",
        "in the rows of the repeated ids",
        counts > 1,
        "repeated ids",
    )
    units.add(
        "in the rows of the ids that occur once",
        "in the rows of the ids that occur once",
        counts == 1,
        "ids once",
        COMMON,
    )
    rows = np.arange(vocab)
    units.holding = Holding(rows[:, None], "in the row of", "in the rows of", vocab, _padding(inputs, vocab))
    units.ordered.append(("in the rows", rows, INDEX))
    return units


def _table_rows(inputs: Mapping[str, Any]) -> Optional[int]:
    table = inputs.get("table")
    return int(table.shape[0]) if isinstance(table, np.ndarray) and table.ndim == 2 else None


def _used_positions(inputs: Mapping[str, Any], rows: int) -> Units:
    """A position table's gradient: one unit per row, the rows the case's positions use (start_pos .. start_pos +
    T - 1) and the others."""
    units = _position_units((0,), np.arange(rows), None, "")
    source = inputs.get("x", inputs.get("tokens"))
    start = inputs.get("start_pos")
    if isinstance(source, np.ndarray) and source.ndim >= 1 and isinstance(start, (int, np.integer)):
        length = source.shape[-2] if "x" in inputs and source.ndim >= 2 else source.shape[-1]
        used = (np.arange(rows) >= int(start)) & (np.arange(rows) < int(start) + length)
        units.add("in the rows the positions use", "in the rows the positions use", used, "rows the positions use")
        units.add("in the rows no position uses", "in the rows no position uses", ~used, "rows no position uses")
    return units


def _position_units(axes: tuple[int, ...], positions: np.ndarray, length: Optional[int], against: str) -> Units:
    units = Units("position", axes)
    if length is not None:
        units.add(
            f"at the positions past {against}",
            f"at the positions {length} and above (past {against})",
            positions >= length,
            f"positions past {against}",
        )
    units.ordered.append(("at the positions", positions, RANGE))
    return units


def _rotary_units(operation: str, inputs: Mapping[str, Any], shape: tuple[int, ...]) -> Optional[Units]:
    positions = inputs.get("position_ids")
    if not isinstance(positions, np.ndarray) or positions.ndim != 1 or len(shape) < 2:
        return None
    axis = 0 if operation == "rope_tables" else len(shape) - 2
    if shape[axis] != positions.size:
        return None
    units = Units("position", (axis,))
    scaling = inputs.get("scaling")
    original = scaling.get("original_max_position_embeddings") if isinstance(scaling, Mapping) else None
    if isinstance(original, (int, np.integer)) and not isinstance(original, bool):
        units.add(
            "at the positions past the original context length",
            f"at the positions {int(original)} and above (past the original context of {int(original)})",
            positions >= int(original),
            "positions past the original context",
        )
        units.add(
            "at the positions within the original context length",
            f"at the positions below {int(original)} (the original context)",
            positions < int(original),
            "positions within the original context",
            COMMON,
        )
    units.ordered.append(("at the positions", positions.astype(np.int64), RANGE))
    if operation != "rope_tables":  # a rotation leaves position 0 as it is, whatever its angles
        units.silent = positions == 0
    return units


def _bag_units(operation: str, inputs: Mapping[str, Any], name: str, shape: tuple[int, ...]) -> Optional[Units]:
    from embconf.reference.bag import bag_ranges

    ids = _ids(inputs)
    if ids is None:
        return None
    if name == "grad_weight":
        return _row_units(inputs, name, shape)
    bounds = bag_ranges(ids, inputs.get("offsets"), bool(inputs.get("include_last_offset") or False))
    flat = ids.reshape(-1)
    vocab = _vocab(inputs)
    padding = _padding(inputs, vocab)
    weights = inputs.get("per_sample_weights")
    weights = weights.reshape(-1) if isinstance(weights, np.ndarray) and weights.size == flat.size else None
    bag_of = np.full(flat.size, -1)
    for b, (start, end) in enumerate(bounds):
        bag_of[start:end] = b
    kinds = {
        "empty": [end == start for start, end in bounds],
        "of one id": [end - start == 1 for start, end in bounds],
        "holding padding_idx": [padding is not None and bool(np.any(flat[s:e] == padding)) for s, e in bounds],
        "weighted (a weight other than 1)": [
            weights is not None and bool(np.any(weights[s:e] != 1)) for s, e in bounds
        ],
        "whose ids are all padding_idx": [
            padding is not None and e > s and bool(np.all(flat[s:e] == padding)) for s, e in bounds
        ],
    }
    if name == "output" and shape[:1] == (len(bounds),):
        units = Units("bag", (0,))
        for kind, mask in kinds.items():
            units.add(f"in the bags {kind}", f"in the bags {kind}", mask, f"bags {kind}", COMMONER.get(kind, KIND))
        holding = np.full((len(bounds), max([e - s for s, e in bounds] + [1])), NO_ID)
        for b, (s, e) in enumerate(bounds):
            holding[b, : e - s] = flat[s:e]
        units.holding = Holding(holding, "in the bags holding", "in the bags holding", vocab, padding)
        units.ordered.append(("in the bags", np.arange(len(bounds)), INDEX))
        return units
    if name == "grad_per_sample_weights" and tuple(shape) == ids.shape:
        units = Units("position", tuple(range(ids.ndim)))
        for kind, mask in kinds.items():
            by_position = np.array([bag >= 0 and mask[bag] for bag in bag_of], dtype=bool)
            units.add(
                f"at the positions of the bags {kind}",
                f"at the positions of the bags {kind}",
                by_position,
                f"bags {kind}",
                COMMONER.get(kind, KIND),
            )
        units.holding = Holding(flat[:, None], "at the positions holding", "at the positions holding", vocab, padding)
        units.ordered.append(("at the positions of the bags", bag_of, INDEX))
        return units
    return None


Columns = Callable[[np.ndarray], Optional[Found]]


def columns_of(operation: str, inputs: Mapping[str, Any], shape: tuple[int, ...]) -> Columns:
    """How a mask of differing columns (the last axis) of a case of ``operation`` is described, when one
    description separates them: the sine or cosine columns of a sinusoid, a rotation's pass-through features or a
    band of its pairs, else one band of columns or a few listed."""
    width = shape[-1] if shape else 0
    pair = _pairs(operation, inputs, width)

    def described(wide: np.ndarray) -> Optional[Found]:
        columns = np.arange(width)
        if operation == "sinusoidal_table":
            for parity, words in (
                (0, "sine columns (the even columns 2k)"),
                (1, "cosine columns (the odd columns 2k+1)"),
            ):
                if np.array_equal(wide, columns % 2 == parity):
                    return Found(f"in the {words}", f"in the {words}")
        if pair is not None:
            found = _pair_band(pair, wide)
            if found is not None:
                return found
        chosen = [int(c) for c in np.flatnonzero(wide)]
        if len(chosen) == 1:
            return Found("in one column", f"in column {chosen[0]} of 0..{width - 1}")
        if chosen[-1] - chosen[0] + 1 == len(chosen):
            return Found("in one band of columns", f"in columns {runs(chosen)} of 0..{width - 1}")
        if len(chosen) <= SHOWN:
            return Found(FEW_COLUMNS, f"in columns {listed(chosen)} of 0..{width - 1}")
        return None

    return described


def _pairs(operation: str, inputs: Mapping[str, Any], width: int) -> Optional[np.ndarray]:
    """Each column's rotation pair k (-1 for a pass-through feature), or None outside the rotary family."""
    if operation == "rope_tables":
        return np.arange(width)
    if operation not in ROTATIONS:
        return None
    pairing, rotary = inputs.get("pairing"), inputs.get("rotary_dim", width)
    if not isinstance(rotary, (int, np.integer)) or isinstance(rotary, bool) or not 2 <= rotary <= width:
        return None
    rotary, columns = int(rotary), np.arange(width)
    pair = np.full(width, -1)
    pair[:rotary] = columns[:rotary] // 2 if pairing == "interleaved" else columns[:rotary] % (rotary // 2)
    return pair


def _pair_band(pair: np.ndarray, wide: np.ndarray) -> Optional[Found]:
    """The pass-through features, or one band lo..hi of pairs k (every column of those pairs), when exactly those
    columns differ: the highest-frequency pairs (k from 0), the lowest (up to h-1) or a band between."""
    width, pairs = pair.size, int(pair.max()) + 1
    if np.array_equal(wide, pair < 0):
        first = int(np.flatnonzero(pair < 0)[0])
        return Found(
            "in the pass-through features (past rotary_dim)",
            f"in the pass-through features {first}..{width - 1} (rotary_dim = {first})",
        )
    if np.any(wide & (pair < 0)):
        return None
    chosen = np.unique(pair[wide])
    lo, hi = int(chosen.min()), int(chosen.max())
    mask = (pair >= lo) & (pair <= hi)
    if not np.array_equal(mask, wide) or (lo == 0 and hi == pairs - 1):
        return None
    end = "the highest-frequency" if lo == 0 else "the lowest-frequency" if hi == pairs - 1 else "a band of"
    columns = runs([int(c) for c in np.flatnonzero(mask)])
    title = (
        f"in {end} pairs"
        if lo == 0 or hi == pairs - 1
        else "in a band of pairs between the highest and lowest frequencies"
    )
    return Found(
        title,
        f"in the pairs k = {runs(list(range(lo, hi + 1)))} of 0..{pairs - 1} ({end} pairs; columns {columns})",
    )
