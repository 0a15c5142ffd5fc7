"""The pairwise goldens (2.3.0): rows of boundaries chosen once as a covering array by ``scripts/cover_pairs.py``
and committed in ``covering_rows.json`` (each row: a case id ``<area>.pairs.<operation>.NNN``, the boundaries it is
at, its description, requirements, features and pinned rows), each built here with
:func:`~embconf.reference.cases.domains.case_at`. Together with the hand-written cases they put a golden at every
pair of boundaries the spec allows together, at the triples where three options meet in one formula, and at every
error boundary (``embconf coverage``). The rows are data, never searched for again: a change of the domains adds
rows, it never moves a released case. :func:`derived_features` and :func:`sample_rows` are what the script wrote
into each row."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from embconf.model.bag import implied_features
from embconf.model.family import family_of
from embconf.model.rope import LAYER_FEATURE, LAYER_REFUSED_FEATURE, Pairing
from embconf.model.vocabulary import features as vocabulary_features
from embconf.reference.cases import CaseSpec
from embconf.reference.cases.domain_kinds import ABSENT, array, value_of
from embconf.reference.cases.domains import case_at
from embconf.reference.cases.domains_lookup import LARGE_ROWS
from embconf.reference.cases.quantized import implied_features as quantized_features
from embconf.reference.cases.rope import features_of
from embconf.reference.cases.sinusoidal import FULL_ROWS_LIMIT, sampled_rows

ROWS_PATH = Path(__file__).with_name("covering_rows.json")
HALF_OR_WIDE = ("float64", "float16", "bfloat16")
ARRAYS = ("weight", "token_weight", "table", "x")  # the input whose dtype is the case's
TRIPLES: dict[str, tuple[tuple[str, str, str], ...]] = {  # the options that meet in one formula: every triple covered
    "embedding_bag_forward": (("mode", "per_sample_weights", "padding_idx"), ("mode", "offsets", "ids.count")),
    "embedding_bag_backward": (("mode", "per_sample_weights", "padding_idx"), ("mode", "offsets", "ids.count")),
    "rope_tables": (("scaling", "position_ids.span", "dtype"),),
    "rope_forward": (("scaling", "position_ids.span", "x.dtype"),),
    "rope_backward": (("scaling", "position_ids.span", "x.dtype"),),
}


@cache
def _rows() -> dict[str, list[dict[str, Any]]]:
    return json.loads(ROWS_PATH.read_text(encoding="utf-8"))["rows"]


def cases(area: str) -> list[CaseSpec]:
    """The area's covering rows, built."""
    built = []
    for row in _rows().get(area, []):
        spec = case_at(row["operation"], row["at"], row["id"], row["description"], tuple(row["requirements"]),
                       tuple(row["features"]))
        pinned = {name: list(rows) for name, rows in row.get("sample_rows", {}).items()}
        built.append(CaseSpec(spec.id, spec.description, spec.requirements, spec.operation, spec.inputs,
                              spec.features, spec.error, pinned))
    return built


def _dtype(spec: CaseSpec) -> str:
    named = spec.inputs.get("dtype")
    if spec.operation == "sinusoidal_table" and isinstance(named, str):
        return named
    given = next((array(spec.inputs, name) for name in ARRAYS if array(spec.inputs, name) is not None), None)
    return "" if given is None else str(given.dtype)


def _ids_features(spec: CaseSpec) -> list[str]:
    ids = next((array(spec.inputs, name) for name in ("ids", "tokens") if array(spec.inputs, name) is not None), None)
    if ids is None or spec.operation in ("gradient_bytes",):
        return []
    return ["int32_ids"] if ids.dtype == np.int32 else ["float_ids"] if ids.dtype.kind == "f" else []


def _lookup_features(spec: CaseSpec) -> list[str]:
    found = {"embedding_forward_max_norm": ["max_norm"], "embedding_backward_sparse": ["row_sparse_grad"]}.get(
        spec.operation, [])
    found += ["padding_idx"] if value_of(spec.inputs, "padding_idx") is not ABSENT else []
    found += ["padding_idx"] if value_of(spec.inputs, "config.padding_idx") is not ABSENT else []
    return found + (["scale_grad_by_freq"] if "scale_grad_by_freq" in spec.inputs else [])


def _layer_features(spec: CaseSpec) -> list[str]:
    """A rope layer's pairing (or the refusal's feature), a stored sinusoid table, model-size counts."""
    pos, found = value_of(spec.inputs, "config.pos_encoding"), []
    if pos == "rope" and LAYER_FEATURE not in spec.features:
        found.append(LAYER_REFUSED_FEATURE)
    pairing = value_of(spec.inputs, "config.rope_pairing")
    pairing = "half_split" if pairing is ABSENT else pairing
    if pos == "rope" and LAYER_FEATURE in spec.features and pairing in {p.value for p in Pairing} and spec.operation != "parameter_count":
        found.append(Pairing(pairing).feature)
    if spec.operation == "parameter_count":
        if pos == "sinusoidal" and "sinusoid_computed" not in spec.features:
            found.append("sinusoid_stored")
        sizes = [value_of(spec.inputs, f"config.{k}") for k in ("vocab_size", "embed_dim", "max_seq_len")]
        if any(isinstance(v, int) and v > 2**53 for v in sizes):
            found.append("large_tables")
    return found


def derived_features(spec: CaseSpec) -> tuple[str, ...]:
    """The features a case at these inputs needs: its conventions' (from its boundaries), its dtype's, its ids',
    and its family's own (a bag's mode and options, a rotation's pairing and scaling, a lookup's options, a
    quantized table's format and canonical markers)."""
    area, found = family_of(spec.operation).area, list(spec.features)
    if area == "bags":
        conventions = [f for f in spec.features if f.startswith("bag-")]
        found += sorted(implied_features(spec.operation, spec.inputs, spec.error, conventions))
    elif area == "rope":
        found += list(features_of(spec.operation, dict(spec.inputs), spec.error))
    elif area == "quantized":
        found += list(quantized_features(spec.operation, dict(spec.inputs), spec.features))
    else:
        found += _lookup_features(spec) + _layer_features(spec)
    if area != "memory" and spec.operation != "sharded_table_bytes":
        found += [d for d in (_dtype(spec),) if d in HALF_OR_WIDE] + _ids_features(spec)
    known = vocabulary_features()
    return tuple(f for f in dict.fromkeys(found) if f in known)


def sample_rows(spec: CaseSpec) -> dict[str, list[int]]:
    """For a table of 2^16 + 1 rows, the rows an output of that many rows pins: the first and last two, the rows
    the ids reference and the padding row (the rest is zero or unchanged and would make the golden megabytes); for
    a long sinusoid table, the rows the hand-written ones pin."""
    if spec.operation == "sinusoidal_table" and spec.error is None:  # pinned as the hand-written long tables are
        length, width = int(spec.inputs["max_len"]), int(spec.inputs["embed_dim"])
        return {"table": sampled_rows(length)} if length * width > FULL_ROWS_LIMIT else {}
    weight = array(spec.inputs, "weight")
    if weight is None or weight.shape[0] < LARGE_ROWS or spec.error is not None:
        return {}
    v = weight.shape[0]
    ids = array(spec.inputs, "ids")
    referenced = [] if ids is None else [int(i) % v for i in ids.reshape(-1).astype(np.int64)]
    pad = value_of(spec.inputs, "padding_idx")
    padding = [int(pad) % v] if pad is not ABSENT else []
    rows = sorted({0, 1, v - 2, v - 1, *referenced, *padding})
    name = {"embedding_backward": "grad_weight", "embedding_forward_max_norm": "weight_after",
            "embedding_bag_backward": "grad_weight"}.get(spec.operation)
    return {name: rows} if name else {}
