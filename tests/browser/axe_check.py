"""axe-core in the page (tests/browser/axe, pinned; .ci/run installs it with `npm ci --prefix tests/browser/axe`):
the serious and critical violations of the page as it stands."""
import os
from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page) -> list[dict]:
    """Every violation of impact serious or critical: rule id, impact and the first few nodes' selectors."""
    if not AXE.exists():
        if os.environ.get("GAVEL_REQUIRE_SERVICES"):
            pytest.fail(f"{AXE} is missing: npm ci --prefix tests/browser/axe", pytrace=False)
        pytest.skip(f"{AXE} is missing: npm ci --prefix tests/browser/axe")
    # Evaluated through the DevTools protocol, not as a <script>: the page's CSP (script-src 'self') stays on.
    page.evaluate("source => { (0, eval)(source); return typeof window.axe; }", AXE.read_text(encoding="utf-8"))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n["target"] for n in v["nodes"][:5]]}
            for v in result["violations"] if v["impact"] in ("serious", "critical")]
