"""The papers' own words that the claims quote, checked against the papers' text.

A claims row of the papers' own kinds (`claim`, `reproduction`, `marker`) quotes the words or number it tests. The
papers' texts are not shipped with the workbook; `python -m fedlib.papers.quotes PAPERS_DIR` looks up every quote (in the
committed claims files and in the papers' modules) in its paper's text, ignoring case and runs of whitespace, and
records the digest of each one found in fedlib/papers/quotes_verified.json. A test then checks, with or without the
texts, that every quote of a committed row is one of those verified (and, where the texts are at hand, finds each in
its paper again).
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from ..claims import normalized  # lower case, every run of whitespace one space: how a quote is looked up

VERIFIED = Path(__file__).resolve().parent / "quotes_verified.json"


def digest(paper: str, quote: str) -> str:
    return hashlib.sha256(f"{paper}\n{normalized(quote)}".encode()).hexdigest()[:20]


def default_papers_dir() -> Path:
    from ..paths import project_root

    return project_root().parent / "shared" / "seeds"


def paper_files() -> dict[str, str]:
    """Each registered paper's text, as the project's seeds folder names it (../shared/seeds beside the checkout)."""
    from . import PAPERS

    return {name: paper.text for name, paper in PAPERS.items() if paper.text}


def code_quotes() -> list[tuple[str, str]]:
    """(paper, quote) of every quote the papers' modules hold (each registered paper's `quotes`: its QUOTES and the
    tables' cells)."""
    from . import PAPERS

    return [(name, q) for name, paper in PAPERS.items() for q in paper.quotes()]


def row_quotes(folder: Path | None = None) -> list[tuple[str, str]]:
    """(paper, quote) of every committed claims row of the papers' own kinds."""
    from ..claims import PAPER_KINDS, read
    from ..paths import figures_dir

    folder = folder or figures_dir() / "claims"
    return [(r["paper"], r["quote"]) for p in sorted(folder.glob("*.csv")) for r in read(p)
            if r.get("kind") in PAPER_KINDS]


def missing(pairs: list[tuple[str, str]], papers_dir: Path) -> list[tuple[str, str]]:
    """The (paper, quote) pairs not found in their paper's text."""
    texts = {name: normalized((papers_dir / f).read_text()) for name, f in paper_files().items()}
    return [(paper, q) for paper, q in pairs if paper not in texts or normalized(q) not in texts[paper]]


def verify(papers_dir: Path) -> int:
    """Look every quote up in its paper; write the digests of those found; return how many were not found."""
    pairs = sorted(set(code_quotes() + row_quotes()))
    lost = missing(pairs, papers_dir)
    for paper, q in lost:
        print(f"not found in {paper}'s text: {q!r}", file=sys.stderr)
    found = sorted({digest(p, q) for p, q in pairs if (p, q) not in set(lost)})
    VERIFIED.write_text(json.dumps({"how": "python -m fedlib.papers.quotes PAPERS_DIR", "digests": found}, indent=0) + "\n")
    print(f"{len(found)} quotes found in their papers, {len(lost)} not; digests in {VERIFIED}")
    return len(lost)


def verified() -> set[str]:
    return set(json.loads(VERIFIED.read_text())["digests"]) if VERIFIED.exists() else set()


if __name__ == "__main__":
    where = Path(sys.argv[1]) if len(sys.argv) > 1 else default_papers_dir()
    if not all((where / f).is_file() for f in paper_files().values()):
        raise SystemExit(f"{where} does not hold the papers' texts ({', '.join(paper_files().values())}); give their "
                         "folder: python -m fedlib.papers.quotes PAPERS_DIR")
    raise SystemExit(1 if verify(where) else 0)
