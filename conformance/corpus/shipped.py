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
    "bags.yaml": "4d03a20e38025d7432a627b64b39699fc9ef6adfb9f45248637c0fa42f10ad85",
    "embedding_layer.yaml": "d3d72674e06c974f959f1dc55c4f4aa1df57aa091352083b0e288c7e33933475",
    "half_precision.yaml": "362e6c4128f5b21eacc3b6b319a354952c49f1ef03beeaed2ae9599d92d883a3",
    "learned_positions.yaml": "f3379939232c540bd0eacdf0446d066e73ee5f395243c783cd7bd42ac36b56ef",
    "lookup_options.yaml": "6b29cdbfd3d9f639d1ab6a1d08c55635f32a3e508a2e26379a2055f50f192b95",
    "memory.yaml": "03f18dca1e03654632cada5831ff5ef7b76bc2e3e66f0c43815d1627d79341e5",
    "rope.yaml": "25ee036bf5266f89f9e59b3c84854fcc5aac6e0e258fcab73bff7626f71e4896",
    "sinusoidal.yaml": "4bcf170115702ef423b3b6faf1335e55b5085b4950134ab6a4f2417ea0317192",
    "stateful.yaml": "08eb7d3b3e93c076c3cd0384f316d49f4b109b6fed38b7365cb56b909b45890f",
    "token_lookup.yaml": "7f077fd5d9dfc5176341a6fc6cf06a9f475b89fc1a83df447f253da13822e971",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "bags.json": "0c70dcfcdd6cc4f3a0c6621b3bc96589aa40a4c9070010472859f20a60e396a6",
    "embedding_layer.json": "c58436b5d5d78b96100a921ddbb97324e1827204841e743ac77c92043131d253",
    "half_precision.json": "f10b2fca905c91fa653c41fe315bdf8dd116446266c18bcf6ecb63d5b54beca1",
    "learned_positions.json": "64187b603752d825eb3a15052c520c66e6e89335953171d0666689c31f232cf8",
    "lookup_options.json": "906b31e9c047d12ccfc72a30dc91db87e5902135b333aa9bb18d32e0c61e29c4",
    "memory.json": "1b556e034da73f0b6fea1df3a83fe8940d1acc37506971244591483d64a2e259",
    "rope.json": "105b17f8528f38506e7279652e7b5b4849223358fd97114e4d9b1f96278c8fed",
    "sinusoidal.json": "08cf3aed38ea4faed4675698c694ac96b08b0a78b2983876552af8b9dbcf2b3c",
    "stateful.json": "3ff210378c4235c589dfc28ec2aa2595e1a657105023677ace3367f845e3fa61",
    "token_lookup.json": "9b6a1dcddde7f3d10536372d60e9489c3ec27f91d9d92ea30c8f95be4460f409",
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
