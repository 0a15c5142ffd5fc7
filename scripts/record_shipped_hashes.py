"""Write conformance/corpus/shipped.py from fixtures/MANIFEST.json: the fixture hashes this version of the
suite ships with. Run it after `embconf regenerate` changes a golden on purpose (tests/corpus checks that
the two agree)."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "conformance" / "corpus" / "shipped.py"

HEADER = '''"""The SHA-256 of every fixture file this version of the suite ships with (written by
``scripts/record_shipped_hashes.py`` from ``fixtures/MANIFEST.json``).

The manifest travels with the fixtures, so a golden edited together with its manifest hash passes the
manifest check; these hashes travel with the code. A corpus that differs from them still runs (a
deliberate local corpus is allowed), but ``embconf run`` warns and the report lists the files
(``fixtures.differs_from_shipped``).
"""

from __future__ import annotations

SHIPPED_SHA256: dict[str, str] = {
'''


def main() -> None:
    files = json.loads((ROOT / "fixtures" / "MANIFEST.json").read_text())["files"]
    lines = [f'    "{name}": "{entry["sha256"]}",\n' for name, entry in sorted(files.items())]
    TARGET.write_text(HEADER + "".join(lines) + "}\n\n\n" + FUNCTION)
    print(f"wrote {len(lines)} hashes to {TARGET.relative_to(ROOT)}")


FUNCTION = '''def differs_from_shipped(hashes: dict[str, str]) -> list[str]:
    """The fixture files (name -> SHA-256 of the bytes read) that are not as shipped: changed, added or missing."""
    names = sorted(set(hashes) | set(SHIPPED_SHA256))
    return [name for name in names if hashes.get(name) != SHIPPED_SHA256.get(name)]
'''

if __name__ == "__main__":
    main()
