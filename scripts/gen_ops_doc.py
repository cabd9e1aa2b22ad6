"""Write docs/ops.md, the ops catalog's reference page, from rules/ops_catalog/.

Usage: python scripts/gen_ops_doc.py [--check]
With --check, exit 1 when docs/ops.md is out of date (tests/rules/test_ops_catalog.py checks too).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kmigrate.rules.ops_catalog import catalog_markdown  # noqa: E402

TARGET = ROOT / "docs" / "ops.md"


def main(argv: list[str]) -> int:
    text = catalog_markdown()
    if "--check" in argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET.relative_to(ROOT)} is out of date: run python scripts/gen_ops_doc.py")
            return 1
        return 0
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
