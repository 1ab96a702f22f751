"""The papers the workbook reads, each registered by its own package, as a method registers itself in `algorithms`:
`fedlib.papers` imports every package beside this module, and each ends with `register(Paper(...))`. Every listing
derives from here, never from a hand-kept list: the notebook parts by name (PARTS), the paper-profile run sets
(RUN_SETS: the packed parts, which scripts/paper_runs.py computes and `fedlib claims` counts), the papers a claims
row may name (`claims.ledger.register_papers`), each paper's text and the quotes its modules hold
(`papers.quotes`). A toy paper registered in a test is found in each of them."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..claims.ledger import KNOWN_PAPERS, register_papers
from .part import Part


@dataclass(frozen=True)
class Paper:
    name: str  # as its claims rows name it ("FedLog"): a word
    parts: tuple[Part, ...]  # every notebook part it declares, each once (its packed ones are run sets)
    text: str = ""  # its text's file in the seeds folder (../shared/seeds), where its quotes are looked up
    quotes: Callable[[], list[str]] = field(default=lambda: [])  # every quote its modules hold
    also: tuple[str, ...] = ()  # other names its rows may give (FedRD's notebook: FedNova's self-check)
    first_notebook: int = 99  # the number of its first notebook: the order of every listing
    client_setting: Callable | None = field(default=None, compare=False)  # (dataset, method, **fields) -> Config:
    # the client setting the command line starts from (`fedlib run`, a grid's "paper"), declared by one paper
    client_datasets: tuple[str, ...] = ()  # the datasets `client_setting` knows
    looks: dict = field(default_factory=dict, compare=False)  # method name -> how its curves look in any figure
    # (`plots.LOOKS`): the paper's own methods drawn thick and on top, its baselines' families by line style


PAPERS: dict[str, Paper] = {}
PARTS: dict[str, Part] = {}  # every notebook part, by name: what each claims row names (its `part` column)
RUN_SETS: dict[str, Part] = {}  # the packed parts: the paper-profile run sets


def register(paper: Paper) -> Paper:
    """Add `paper` and its parts to every listing, in the order of the papers' first notebooks; a paper or part
    name taken by another paper is refused."""
    if paper.name in PAPERS and PAPERS[paper.name] is not paper:
        raise ValueError(f"a paper named {paper.name!r} is registered already")
    taken = [p.name for p in paper.parts if p.name in PARTS and PARTS[p.name] is not p]
    if taken:
        raise ValueError(f"{paper.name}: part names taken by another paper: {', '.join(taken)}")
    from .. import plots

    plots.add_looks(paper.looks)
    register_papers(paper.name, *paper.also)
    PAPERS[paper.name] = paper
    _relist()
    return paper


def unregister(name: str) -> None:
    """Take a paper out of every listing (a test's toy paper)."""
    paper = PAPERS.pop(name)
    KNOWN_PAPERS.difference_update({paper.name, *paper.also} - {n for p in PAPERS.values() for n in (p.name, *p.also)})
    _relist()


def client_setting() -> tuple[Callable, tuple[str, ...]]:
    """The Config builder the command line starts from and the datasets it knows: the one registered paper's that
    declares one (the workbook's own paper: FedLog's settings of its Tables A.2-A.5). None or two is refused."""
    given = [p for p in PAPERS.values() if p.client_setting is not None]
    if len(given) != 1:
        raise RuntimeError(f"{len(given)} registered papers declare the command line's client setting "
                           f"({', '.join(p.name for p in given) or 'none'}); exactly one must")
    return given[0].client_setting, given[0].client_datasets


def _relist() -> None:
    order = sorted(PAPERS.values(), key=lambda p: p.first_notebook)
    PARTS.clear()
    PARTS.update({p.name: p for paper in order for p in paper.parts})
    RUN_SETS.clear()
    RUN_SETS.update({p.name: p for paper in order for p in paper.parts if p.packed})
