"""Write the fixture hashes this version of the suite ships with into conformance/corpus/shipped.py: those of
fixtures/MANIFEST.json, and those of each file's JSON form (``<area>.json``, hashed as it is); only the
``SHIPPED_SHA256`` and ``SHIPPED_JSON_SHA256`` literals are rewritten, the module's code stays as written there.
Run it after `embconf regenerate` changes a golden on purpose (tests/isolation checks that they agree)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "conformance" / "corpus" / "shipped.py"


def _rewritten(module: str, name: str, hashes: dict[str, str]) -> str:
    """``module`` with the dict literal assigned to ``name`` holding ``hashes``, sorted by file name."""
    literal = re.compile(rf"^{name}: dict\[str, str\] = \{{\n.*?^\}}\n", re.MULTILINE | re.DOTALL)
    if not literal.search(module):
        raise SystemExit(f"{TARGET.relative_to(ROOT)} holds no {name} literal to rewrite")
    lines = "".join(f'    "{file}": "{digest}",\n' for file, digest in sorted(hashes.items()))
    return literal.sub(lambda _: f"{name}: dict[str, str] = {{\n{lines}}}\n", module, count=1)


def main() -> None:
    fixtures = ROOT / "fixtures"
    files = json.loads((fixtures / "MANIFEST.json").read_text())["files"]
    forms = {
        form: hashlib.sha256((fixtures / form).read_bytes()).hexdigest()
        for form in (name.removesuffix(".yaml") + ".json" for name in files)
    }
    module = _rewritten(TARGET.read_text(), "SHIPPED_SHA256", {name: entry["sha256"] for name, entry in files.items()})
    TARGET.write_text(_rewritten(module, "SHIPPED_JSON_SHA256", forms))
    print(f"wrote {len(files) + len(forms)} hashes to {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
