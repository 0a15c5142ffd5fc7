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
    "bags.yaml": "96c75e537b119c9eb1867c3c484bff12ff0fd8fcf77917f76a31cebeb7066148",
    "embedding_layer.yaml": "20813a779b9f072a6b0f8a5af132fe43d20a09927596d485a242cc640e79541c",
    "half_precision.yaml": "0982cb18dad4063c622b0d71067761a0b6d7d4d41cd8033f9fe5d64ca52fbecf",
    "learned_positions.yaml": "1c4d20018c6a5d2827ad095e0bc45d93e43067c498800ffad4ffce42f168753a",
    "lookup_options.yaml": "f867d93f93de07ddfe1712ec277902438e9b85bdd551bbaab2a02af9ff9c02d1",
    "memory.yaml": "3bcb640d3095326a2b8135fd0360651250e214bb5bed0bbcf5ba8536824c220a",
    "rope.yaml": "6943cf9648c4931f7fd922b998a09fe7bdce4a15a2f861cfe670f276c364b2f6",
    "sinusoidal.yaml": "6ccbf2702f915d26e57280f05ca9ca0d29e3180b1ea9c7be28fd38b82168c100",
    "stateful.yaml": "8b069ae40ffe46a46abf15ddbe336f140c16b103c158dce37b97e9f0899dfa2f",
    "token_lookup.yaml": "ab56852138b9c13d417b610055448cb737ad3402309c644c24fdea747d9a1471",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "bags.json": "9927020a2f9f8eb82d2b529b0120c81ee93d7c60a21a7bafe9ffc8167d7b2450",
    "embedding_layer.json": "8b57d1746521f3e48493e0585cd90993542ba89250d28d1cbd674320194cf78c",
    "half_precision.json": "86b566059807bd03ebe63b2671c0eb8e7d6068022ee480fef66d8df7963fdadb",
    "learned_positions.json": "5a203538a5962cb6153b7c01cfb2745b941fc67c20a5153b264aca5fe23c3731",
    "lookup_options.json": "33b102989f03dec4905f46876319cf76741b8ad4d81a8564a06555cc9da4bf1e",
    "memory.json": "3f31a4abb4285e5a71809b3cfab3b5f2afa42bb9e7e3a12cc15821fb7e89007a",
    "rope.json": "69374e16bbb668f8294df3801b8a9fee55d26b1673bc3186f5c778266e913ad8",
    "sinusoidal.json": "eb0b732a88529f5837ba7035c51140fa4574517dcf41833caee63f7b4e3cd2e2",
    "stateful.json": "566c708092da0c41cc3687e3ccc38f4b69d8bdbd79f55bb286e197a75d6248b7",
    "token_lookup.json": "42f60c0e600a2f34b9ded919a87cba56914afbebe773f13654da5375d14fa299",
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
