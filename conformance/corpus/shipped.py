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
    "bags.yaml": "d80ec42d3d68105260083f11af813d0f0af16b1dafc784a863dc516ddc0132f5",
    "embedding_layer.yaml": "4cb9a9c1daccfac83003888737f2a884bc54de71b55c15a1bb7e84238516578b",
    "half_precision.yaml": "362e6c4128f5b21eacc3b6b319a354952c49f1ef03beeaed2ae9599d92d883a3",
    "learned_positions.yaml": "f94ff9a2d87a7e18e17b94e3c218f51d361b6999f0ce0b7d518de5d55c0fddd6",
    "lookup_options.yaml": "6b29cdbfd3d9f639d1ab6a1d08c55635f32a3e508a2e26379a2055f50f192b95",
    "memory.yaml": "d3c10bc707b1c929a15cae62d382a90716bb201dadf04b8aa20798e24962513f",
    "quantized.yaml": "3ec78ef650e3cc514409b967173ad9cfc402c38919c25bc034d6c405d7562877",
    "rope.yaml": "0176aaaa69507be02cf3aeaccede22fcf6e2e2183e8d77c0a5776afda7c9a250",
    "sinusoidal.yaml": "ee7e3a50da2d6ddbafa264f1e1bdd42722354a9aabd5ae3642fb73d1ec71570c",
    "stateful.yaml": "08eb7d3b3e93c076c3cd0384f316d49f4b109b6fed38b7365cb56b909b45890f",
    "token_lookup.yaml": "5209d9672795252faf322a9a6e90f385146172f94916fc3f5cebe820f93d08f9",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "bags.json": "5bfacf442ec3e9b88159e6d681964f3eaee0ef57e0e4a828a72d78e28585532f",
    "embedding_layer.json": "47d0e463ecc4c21fbe8fc61cc20f3019f238e74d59fc10ee1618b8d73cda9f40",
    "half_precision.json": "f10b2fca905c91fa653c41fe315bdf8dd116446266c18bcf6ecb63d5b54beca1",
    "learned_positions.json": "a1aed3406a92614df03c5e669986c012df42399279cf6aabd827db6c98a9a91b",
    "lookup_options.json": "906b31e9c047d12ccfc72a30dc91db87e5902135b333aa9bb18d32e0c61e29c4",
    "memory.json": "57657c3dbc4849fe4bd6aabbcfba4620d5b3a96a29283443725d37d488f7f9ec",
    "quantized.json": "9b8f8ade8f80e8a37fa68f7b224022b0fe041196dbab8567357f560a799b20f6",
    "rope.json": "fb6b2d5165299a4e0a500eddd1aec26002f2bf33bfc0f8c8e946bf6e906e1363",
    "sinusoidal.json": "d07c81c97778658697dbaabfcc9e596dc083f15f025e8cd1fcf853765a52da4d",
    "stateful.json": "3ff210378c4235c589dfc28ec2aa2595e1a657105023677ace3367f845e3fa61",
    "token_lookup.json": "93b36da5634cf557bc4a5e34ca3b91673b9a305fd4b129c4cd30dbb031537789",
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
