"""The SHA-256 of every fixture file this version of the suite ships with (written by
``scripts/record_shipped_hashes.py`` from ``fixtures/MANIFEST.json``).

The manifest travels with the fixtures, so a golden edited together with its manifest hash passes the
manifest check; these hashes travel with the code. A corpus that differs from them still runs (a
deliberate local corpus is allowed), but ``embconf run`` warns and the report lists the files
(``fixtures.differs_from_shipped``).
"""

from __future__ import annotations

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


def differs_from_shipped(hashes: dict[str, str]) -> list[str]:
    """The fixture files (name -> SHA-256 of the bytes read) that are not as shipped: changed, added or missing."""
    names = sorted(set(hashes) | set(SHIPPED_SHA256))
    return [name for name in names if hashes.get(name) != SHIPPED_SHA256.get(name)]
