"""Write the fixture hashes this version of the suite ships with into conformance/corpus/shipped.py, from
fixtures/MANIFEST.json: only its ``SHIPPED_SHA256`` literal is rewritten; the module's code stays as written
there. Run it after `embconf regenerate` changes a golden on purpose (tests/isolation checks that the two agree)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "conformance" / "corpus" / "shipped.py"
LITERAL = re.compile(r"^SHIPPED_SHA256: dict\[str, str\] = \{\n.*?^\}\n", re.MULTILINE | re.DOTALL)


def main() -> None:
    files = json.loads((ROOT / "fixtures" / "MANIFEST.json").read_text())["files"]
    lines = "".join(f'    "{name}": "{entry["sha256"]}",\n' for name, entry in sorted(files.items()))
    module = TARGET.read_text()
    if not LITERAL.search(module):
        raise SystemExit(f"{TARGET.relative_to(ROOT)} holds no SHIPPED_SHA256 literal to rewrite")
    TARGET.write_text(LITERAL.sub(lambda _: "SHIPPED_SHA256: dict[str, str] = {\n" + lines + "}\n", module, count=1))
    print(f"wrote {len(files)} hashes to {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
