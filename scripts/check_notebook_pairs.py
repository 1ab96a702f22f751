"""Refuse to sync a notebook pair whose two files were both edited and disagree.

`jupytext --sync` keeps the newer of notebooks/NN_name.py and NN_name.ipynb and overwrites the other, so when both
were edited (say the .ipynb in JupyterLab, then the .py after a `git pull`) the older edit would be lost without a
word. "Edited" means changed against git's HEAD (or untracked). Exit 1 and say which file is newer; exit 0 when
nothing would be lost. Usage: python scripts/check_notebook_pairs.py [notebooks/]
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import jupytext


def edited(path: Path) -> bool:
    """Changed against git's HEAD (or untracked). A notebook whose cells' sources are HEAD's is not edited: run_all.sh
    writes its outputs into the committed .ipynb, and that is no edit of what the pair holds."""
    res = subprocess.run(["git", "status", "--porcelain", "--", path.name], cwd=path.parent, capture_output=True,
                         text=True)
    if res.returncode != 0 or not res.stdout.strip():
        return False
    if path.suffix == ".ipynb":
        head = subprocess.run(["git", "show", f"HEAD:./{path.name}"], cwd=path.parent, capture_output=True, text=True)
        if head.returncode == 0:
            try:
                return cells(jupytext.reads(head.stdout, fmt="ipynb")) != cells(jupytext.read(path))
            except Exception:  # noqa: BLE001  (HEAD's copy unreadable: count it as edited, as before)
                return True
    return True


def cells(notebook) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source.strip()) for c in notebook.cells]


def same_content(py: Path, nb: Path) -> bool:
    return cells(jupytext.read(py)) == cells(jupytext.read(nb))


def damaged(folder: Path) -> list[str]:
    """The .ipynb files that are not notebooks (truncated, or garbage), named, with what to do."""
    import json

    out = []
    for nb in sorted(folder.glob("[0-9]*.ipynb")):
        try:
            if "cells" not in json.loads(nb.read_text()):
                raise ValueError("no cells")
        except (ValueError, UnicodeDecodeError) as err:
            out.append(f"{nb} is not a readable notebook ({type(err).__name__}); restore it with `git checkout -- "
                       f"{nb.name}` in {nb.parent}, or delete it and run `jupytext --sync {nb.with_suffix('.py').name}` "
                       f"to rebuild it from its .py")
    return out


def conflicts(folder: Path) -> list[str]:
    out = damaged(folder)
    if out:  # jupytext would stop on them with a traceback that names no file
        return out
    for py in sorted(folder.glob("[0-9]*.py")):
        nb = py.with_suffix(".ipynb")
        if nb.exists() and edited(py) and edited(nb) and not same_content(py, nb):
            newer, older = (py, nb) if py.stat().st_mtime >= nb.stat().st_mtime else (nb, py)
            out.append(f"{py.name} and {nb.name} were both edited and differ; {newer.name} is newer. Syncing would "
                       f"overwrite {older.name}. Keep one edit (copy it into the other file, or `git checkout` the "
                       f"one to drop), then run again.")
    return out


def main() -> int:
    found = conflicts(Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks"))
    for line in found:
        print(f"notebook pair: {line}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
