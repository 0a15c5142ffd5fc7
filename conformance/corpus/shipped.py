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
    "bags.yaml": "e540c40fece27b0faaac3edb215559f66488fe832ac379221d095a1663c42a80",
    "embedding_layer.yaml": "8e93d8b4bbbe28a7f67e7189366f5dc772d409e15227d6ff30bdd094f95246bb",
    "half_precision.yaml": "030b9e5207a77a222cef2d6155186652cf72d62f7bfa5c5efba414b019f74d2a",
    "learned_positions.yaml": "bae71755198457c8e1947b8b793d8c044341ddd93a749ac36737c5acce67bc00",
    "lookup_options.yaml": "d5725e97eb894288adeec9707883be4f8e60a2c5254e245aaa320573db82d388",
    "memory.yaml": "b23bb7478bd0ff6d3dc96b8973185f854b83ac88f450e931e2e067b57724702c",
    "rope.yaml": "94a21d3396250dc7ccdb83b681e402491faf4eee682dcce55719fe988b0ac720",
    "sinusoidal.yaml": "efd6183cf6fe312046eec60364815384fbe8bb2a854fec1d70bd706377b50fab",
    "stateful.yaml": "f283db450d60b51b82f65998d74128de13e02027fc0565d5c7045f63352a1313",
    "token_lookup.yaml": "beeef6d0124cec659ca0520aff79b7a107a9625f5138c514d6048679dd588151",
}


# The JSON form of each (``embconf regenerate`` writes it beside the file): read instead of the YAML file when
# both are as shipped (shipped_json_form).
SHIPPED_JSON_SHA256: dict[str, str] = {
    "bags.json": "2cb45071e31b2de78bad6c46dbb758e2c0361310401b31e6707ff7652d48b671",
    "embedding_layer.json": "017e20ac25907d637dc5df68e5f07d60c4a66d99222fc0c2867117b58deb8ca5",
    "half_precision.json": "7170fa7a30fde380d38b36b1dd3556949dc040d22723944fcc68ed77ebd68f65",
    "learned_positions.json": "ff2d0530ddc7296372ba745386ae355cda33365707d30ef8d32a7f52ff26171e",
    "lookup_options.json": "78ce5e0e64f6fe75621d3be70b15422feee9e4f372aab71b1469e65266f74967",
    "memory.json": "e15a68fcec6fa8289b3816b7724de45604d63683009cb9ee4dde16cbfe0f6c86",
    "rope.json": "32f76c3c5d673d48e386a6486164898df727b8802f10c79cf75e180aa8199211",
    "sinusoidal.json": "cd4205dd527eccb037503649a6c4ac23ce1f0d1300aadb38c5904a6559881695",
    "stateful.json": "29c842d0dc81fd263aa1dd1a8ef78bfc05c40498c8301f023f2bc02608806866",
    "token_lookup.json": "0bab531b3e6adf81bafbd457b0b575bdfe8a95ef420ed929ae4c5fc3aee10cd8",
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
