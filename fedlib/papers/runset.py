"""A named set of a paper's runs at its paper profile: what one notebook part reads, declared once in the paper's
module and read by the notebook, `scripts/paper_runs.py` (which computes and packs it), the cost table and
`python -m fedlib claims` (which counts how much of it is shipped in archive/, never typed)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class RunSet:
    name: str  # what scripts/paper_runs.py calls it, e.g. "fedprof_table3"
    notebook: str  # e.g. "08_fedprof_client_selection"
    build: Callable[[list[int]], list]  # seeds -> [(label, Config)], seed by seed (a stopped job leaves whole seeds)
    seeds: tuple[int, ...] = (0, 1, 2)  # the seeds the notebook's paper profile reads (paper_runs' default)
    where: tuple[str, ...] = ()  # the paper's tables and figures it stands for, as the claims name them
    deviations: str = ""  # what differs from the paper's protocol, e.g. "N = 200 clients, MNIST for EMNIST digits"
    archive: str = ""  # its file under archive/, without .jsonl.gz (default: NAME_paper)

    def runs(self, seeds: list[int] | None = None, only: list[str] | None = None) -> list:
        """(label, Config) of every run for `seeds` (default: the notebook's); `only` keeps those labels (an
        unknown one is refused, with the choices)."""
        return pick(self.name, self.build(list(self.seeds if seeds is None else seeds)), only)

    @property
    def archive_file(self) -> str:
        return archive_file(self.name, self.archive)

    def command(self, seeds: list[int] | None = None) -> str:
        """The command that computes the runs of `seeds` (a range: the notebooks' seeds are 0..n-1)."""
        return command(self.name, self.seeds if seeds is None else seeds)


def pick(name: str, runs: list, only: list[str] | None) -> list:
    """The (label, Config) of `runs` whose labels are in `only` (all without it); an unknown label is refused with
    the choices of the set `name`."""
    labels = {lab for lab, _ in runs}
    unknown = set(only or ()) - labels
    if unknown:
        raise ValueError(f"unknown label(s) {sorted(unknown)} in {name}; choose from {', '.join(sorted(labels))}")
    return [(lab, cfg) for lab, cfg in runs if not only or lab in only]


def archive_file(name: str, archive: str = "") -> str:
    """A set's file under archive/: `archive` (default NAME_paper) with .jsonl.gz."""
    return f"{archive or name + '_paper'}.jsonl.gz"


def command(name: str, seeds) -> str:
    """The command that computes the runs of the set `name` for `seeds` (a range: the notebooks' seeds are 0..n-1)."""
    seeds = sorted(seeds)
    return f"{SCRIPT} {name} --seeds {seeds[0]}-{seeds[-1]}"


SCRIPT = "scripts/paper_runs.py"  # every command that computes a run set is built here (RunSet.command, commands_for)
UNDECLARED = "FEDLIB_COMPUTE=1 FEDLIB_PROFILE=paper ./run_all.sh NN (no run set declares them)"


def undeclared(notebook: str) -> str:
    """The command that computes a notebook's paper-profile runs that no run set declares."""
    return UNDECLARED.replace(" NN ", f" {notebook[:2]} ")


def commands_for(configs: list, sets, undeclared: str) -> str:
    """The commands that compute `configs`: the fewest sets of `sets` that hold them, each the one holding most of
    those left (a run two sets share, as the non-private runs of the DP sets and Table 1, is named once), their
    commands `; ` between them, and `undeclared` for those no set holds (a part whose paper-size runs no set declares).
    Sets are matched by the runs' cache keys, never by name."""
    left = {c.key() for c in configs}
    if not left:  # nothing missing (every quick run, most redraws): no set's runs are built
        return undeclared
    holds = [(s, {cfg.key() for _, cfg in s.runs()}) for s in sets]
    named = []
    while left:
        best, keys = max(holds, key=lambda h: len(h[1] & left), default=(None, set()))
        if not keys & left:
            break
        named.append(best.command())
        left -= keys
    return "; ".join(named + ([undeclared] if left else []))
