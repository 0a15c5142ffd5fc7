"""The SHA-256 of every fixture file this version of the suite ships with, and of its JSON form (written by
``scripts/record_shipped_hashes.py`` from ``fixtures/MANIFEST.json`` and the forms), and reading a shipped file
from its JSON form.

The manifest travels with the fixtures, so a golden edited together with its manifest hash passes the
manifest check; these hashes travel with the code. A corpus that differs from them still runs (a
deliberate local corpus is allowed), but ``embconf run`` warns and the report lists the files
(``fixtures.differs_from_shipped``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Optional

from embconf.model.vocabulary import json_name
from embconf.untrusted.read import InputError, read_bounded

SHIPPED_SHA256: dict[str, str] = {
    "embedding_layer.yaml": "519535d86d8ee397a6de04649d76280c0a151ee8add05abc93dd581e3adbea53",
    "half_precision.yaml": "3a108d17cccb2590b1f6d02edbd58aa56914591b1c33437e41ac354296be06f0",
    "learned_positions.yaml": "16abb18ad4574d2a7064b226819003e7f5dd0a8dafb0702ad01bb5aef1c9f381",
    "lookup_options.yaml": "37dd73b8699b40bb3b36b60f9e63dd6e50c281ebd8558e73fc9eff9fe5b6d73a",
    "memory.yaml": "a8a79b61b28308c6b698e38bda852aad256dd00ea4e50af0b25f8439e2619db5",
    "rope.yaml": "cec75de9b980f46dd27fbbe611601d7192d49c368cb88d659f3c4f8adf1fc549",
    "sinusoidal.yaml": "18f4974ffdd4be639a0ce6516be7c19c92b181761e68e59757a37ccbfb39802e",
    "token_lookup.yaml": "d16993ef68a559ca83ef7f90a214dffd4a37068b0721b68599ca3551f6e892b0",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "embedding_layer.json": "f31efe88fdeea6b54c1df0e752bd519026d3c61bab4492142917ab844649156a",
    "half_precision.json": "8260465d613233f99180a78516ca02269f432d85e11e28ffcfa4aeb93bbb327c",
    "learned_positions.json": "92c7cd40d02b38df738f9cf24d45a2ff49e49ea764d779837c88631dfacff445",
    "lookup_options.json": "342ac7ce32278d2a545d814624345ba9d3b3e236f7c9a8a65e4e23900c7fc52e",
    "memory.json": "dbec6e75ffabf65fe663328fffb7cfc0b68c5914844595d73d527416a155b8ab",
    "rope.json": "5f2912ed5c20edaf4371b4a4b9c62d1a0649cabe427d1adc44287974bc2dbe0b",
    "sinusoidal.json": "de23224a0197e952d2cb566b6fcd0bb5801ca40b687723fcf40868faa26768c6",
    "token_lookup.json": "cfe89189d406e03a99df39893f7bfb91271850dc8f507f675859272ae6c12b6f",
}


def differs_from_shipped(hashes: dict[str, str]) -> list[str]:
    """The fixture files (name -> SHA-256 of the bytes read) that are not as shipped: changed, added or missing."""
    names = sorted(set(hashes) | set(SHIPPED_SHA256))
    return [name for name in names if hashes.get(name) != SHIPPED_SHA256.get(name)]


def shipped_json_form(directory: Path, name: str, sha256: str, limit: int) -> Optional[Any]:
    """The document of the fixture file ``name`` (whose bytes hash to ``sha256``) read from its JSON form
    (``<area>.json``, written with it by ``embconf regenerate``: the same document, read four times faster)
    when both are exactly as this suite shipped them; else None, and the YAML file is read. A form missing,
    modified, larger than ``limit`` bytes or unreadable changes nothing but the time taken."""
    form = json_name(name)
    if sha256 != SHIPPED_SHA256.get(name) or form not in SHIPPED_JSON_SHA256:
        return None
    try:
        raw = read_bounded(directory / form, limit, "fixture file")
        return json.loads(raw) if hashlib.sha256(raw).hexdigest() == SHIPPED_JSON_SHA256[form] else None
    except (OSError, InputError, ValueError, RecursionError):
        return None
