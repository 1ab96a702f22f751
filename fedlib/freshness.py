"""Is what the repository ships what the code computes? Re-run the first rounds of shipped runs and compare.

A shipped run (`archive/*.jsonl.gz`) is replayed for its first `rounds` rounds from its own config
(`experiments.replay`) and every per-round metric is compared: exactly when the run was made on the same kind of
processor (`provenance.machine`), otherwise within `TOLERANCE` (relative), since CPUs of another kind may round
differently. A run that differs is stale: the code changed its numbers, so its method's version should have been
bumped and the run recomputed (`scripts/paper_runs.py`, then `--pack`).
"""
from __future__ import annotations

import math

from . import archive, provenance
from .config import Config
from .experiments import replay

METRICS = ("acc_mean", "acc_all", "loss", "train_loss", "up_bits", "down_bits")
TOLERANCE = 1e-4  # provisional: not yet measured across processor kinds (no second kind was at hand)


def differences(shipped: dict, rounds: int = 2) -> list[str]:
    """What differs between a shipped run's first rounds and the same rounds computed now (empty: fresh)."""
    replayed = replay(Config(**shipped["config"]), rounds)
    exact = shipped.get("code", {}).get("machine") == provenance.machine()
    out = []
    for metric in METRICS:
        for rnd, (old, new) in enumerate(zip(shipped["rounds"][metric][:rounds], replayed[metric])):
            same = old == new if exact else math.isclose(old, new, rel_tol=TOLERANCE, abs_tol=1e-12)
            if not same:
                out.append(f"{metric} of round {rnd}: shipped {old!r}, now {new!r}")
    return out


def check(rounds: int = 2, per_file: int = 2) -> list[str]:
    """Replay `per_file` runs of every archive file; one line per stale run, naming it and how to remake it."""
    stale = []
    for path in sorted(archive.folder().glob("*.jsonl.gz")):
        for shipped in sorted(archive.read(path), key=lambda r: r["key"])[:per_file]:
            found = differences(shipped, rounds)
            if found:
                label = Config(**shipped["config"]).label()
                stale.append(f"{path.name}: {label} (key {shipped['key']}) is stale: {found[0]}"
                             f"{f' and {len(found) - 1} more' if len(found) > 1 else ''}. Bump the method's version "
                             f"if the change was meant, recompute the runs (scripts/paper_runs.py) and pack them again")
    return stale
