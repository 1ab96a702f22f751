"""What the committed notebooks show (their kept outputs, as the book and JupyterLab show them): a missing value reads
"-" or says why, never `nan` or `None` in a table cell or a printed line (ux_round6: 14 nan rows in notebook 02's
tables, "ours None against None" in every ledger line of a claim not run yet)."""
from __future__ import annotations

import json
import re

import pytest

from fedlib import paths

NOTEBOOKS = sorted((paths.project_root() / "notebooks").glob("[0-9]*.ipynb"))


def _shown_lines(nb: dict) -> list[str]:
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            text = o.get("text") if "text" in o else o.get("data", {}).get("text/plain", "")
            out += ("".join(text) if isinstance(text, list) else str(text)).splitlines()
    return out


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_committed_output_shows_nan_or_none(notebook):
    lines = _shown_lines(json.loads(notebook.read_text()))
    bad = [line for line in lines if re.search(r"\bnan\b|\bNone\b", line)]
    assert not bad, f"{notebook.name}: {len(bad)} lines, e.g. {bad[0][:200]!r}"
