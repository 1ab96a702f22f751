"""One run's result, as `experiments.run` returns it: the cached JSON unchanged (a `Result` is a dict, so old code
and the cache read it as before), with named accessors, so that no notebook indexes its inner layout.

    r.curve()              mean client accuracy after each round (a numpy array; any per-round metric by name)
    r.best(), r.last()     its best and last round
    r.final()              after the final fine-tune where the run has one, else the last round
    r.bits_up, r.bits_down the ledger's bits per round; r.uplink_mb() per client, cumulative
    r.participants         each round's clients; r.record(name) what the method reported (`Algorithm.summary`)

`compare` builds a table's rows of ours beside a paper's numbers, with a row for each column that could not run.
"""
from __future__ import annotations

import math

import numpy as np

from .stats import mean_se

MB = 8 * 2 ** 20  # bits in a megabyte (the seed papers' MB are MiB)


def holds_a_run(obj) -> bool:
    """Whether a parsed cache entry or archive line is a run's result: a config naming its method, and per-round
    metrics of at least one round, every metric one value per round (an entry that parses but holds no result is
    never served as one)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("config"), dict) or "method" not in obj["config"]:
        return False
    rounds = obj.get("rounds")
    if not isinstance(rounds, dict) or not isinstance(rounds.get("acc_mean"), list) or not rounds["acc_mean"]:
        return False
    n = len(rounds["acc_mean"])
    return all(isinstance(v, list) and len(v) == n for k, v in rounds.items() if k in ("acc_mean", "acc_all", "loss",
                                                                                        "train_loss"))



BIT_COUNTS = ("up_bits", "down_bits")  # per-round message sizes: whole numbers of bits, as the ledger counts them


def not_servable(result: dict, key: str) -> str | None:
    """Why a parsed run (a cache entry or an archive line) may not be served as the run whose key is `key`, or None:
    its stored config must give that key (a file planted or renamed under another run's name is not that run), and
    its per-round metrics must be finite (a diverged run raises and is never saved, so a NaN is an altered file), one per
    round, its bits whole and not negative, its per-client accuracies one per client."""
    from .config import restore

    try:
        own = restore(result["config"]).key(result.get("device", "cpu"))
    except (TypeError, ValueError) as err:
        return f"its config is not one this code accepts ({str(err).splitlines()[0]})"
    if own != key:
        return f"its config is that of run {own}, not of run {key}"
    rounds, clients = result["config"].get("rounds"), result["config"].get("n_clients")
    if not isinstance(result["rounds"], dict) or "acc_mean" not in result["rounds"]:
        return "it has no per-round accuracy"
    for metric, values in result["rounds"].items():
        if not isinstance(values, list) or len(values) != rounds:
            return (f"its {metric} is not a list of one value per round ({rounds}: "
                    f"{len(values) if isinstance(values, list) else type(values).__name__})")
        if any(isinstance(v, float) and not math.isfinite(v) for v in values):
            return f"its {metric} is not finite"
        if metric in BIT_COUNTS and not all(type(v) is int and v >= 0 for v in values):  # the ledger counts whole bits
            return f"its {metric} is not a count of bits per round (whole numbers, none negative)"
    acc = result.get("client_acc")
    if acc not in (None, []) and (not isinstance(acc, list) or len(acc) != clients):
        return f"its client_acc is not one entry per client ({clients})"
    return None


class Result(dict):
    """A run's result: {"config", "rounds": {metric: [per round]}, "client_acc", "final"?, "extra"?, ...}."""

    @property
    def n_rounds(self) -> int:
        return len(self["rounds"]["acc_mean"])

    @property
    def n_clients(self) -> int:
        return int(self["config"]["n_clients"])

    def curve(self, metric: str = "acc_mean") -> np.ndarray:
        """The metric after each round (acc_mean, acc_all, loss, train_loss, up_bits, down_bits, seconds)."""
        if metric not in self["rounds"]:
            raise KeyError(f"no per-round {metric!r}; this run has {', '.join(self['rounds'])}")
        return np.asarray(self["rounds"][metric])  # bits stay integers

    def best(self, metric: str = "acc_mean"):
        return self.curve(metric).max().item()

    def last(self, metric: str = "acc_mean"):
        """The last round's value, before any final fine-tune."""
        return self.curve(metric)[-1].item()

    @property
    def finetuned(self) -> bool:
        return "final" in self

    def final(self, metric: str = "acc_mean") -> float:
        """After the final fine-tune where the run has one (FedCR's Table 2 quantity), else the last round."""
        return float(self["final"][metric]) if self.finetuned else self.last(metric)

    @property
    def bits_up(self) -> np.ndarray:
        return self.curve("up_bits")

    @property
    def bits_down(self) -> np.ndarray:
        return self.curve("down_bits")

    def total_bits(self) -> int:
        """The ledger's total, up and down, every client, over the rounds (a final round's bits not included)."""
        return (self.bits_up.sum() + self.bits_down.sum()).item()

    def uplink_mb(self) -> np.ndarray:
        """Cumulative uplink per client after each round, in MB (the way FedRD's Fig. 3 counts)."""
        return np.cumsum(self.bits_up) / MB / self.n_clients

    @property
    def participants(self) -> list[list[int]]:
        """Each round's participating clients (every client, where all took part)."""
        if "participants" in self["rounds"]:
            return self["rounds"]["participants"]
        return [list(range(self.n_clients))] * self.n_rounds

    @property
    def client_kinds(self) -> list[str]:
        """Each client's data kind where the federation has kinds (FedProf's corruptions), else empty."""
        return list(self.get("client_kind", []))

    def has_record(self, name: str) -> bool:
        return name in self.get("extra", {})

    def record(self, name: str):
        """What the method recorded under `name` (`Algorithm.summary`, e.g. FedProf's "selected" and "div")."""
        extra = self.get("extra", {})
        if name not in extra:
            raise KeyError(f"{self['config']['method']} recorded no {name!r}; it recorded {sorted(extra) or 'nothing'}")
        return extra[name]


def as_result(r) -> Result:
    return r if isinstance(r, Result) else Result(r)


COMPARE_UNITS = {c: "%" for c in ("final_mean", "final_se", "best_round_mean", "paper_accuracy", "paper_std")}


def compare(runs: dict, reported: dict, *, quantity=Result.final, keys: dict | None = None,
            missing: list | None = None, paper_name=None, with_std: bool | None = None) -> list[dict]:
    """Rows of ours beside the paper's: `runs` maps a row's label to its seeds' Results; `reported` maps a label (or
    `paper_name(label)`) to the paper's number, or to (mean, std). Each row: `keys` (e.g. dataset), method,
    final_mean and final_se (in % of `quantity`, by default `Result.final`), best_round_mean, paper_accuracy (and
    paper_std where the paper gives one), seeds, rounds. Each entry of `missing` (a dict of keys) adds a row saying
    that column (or, with a method, that method of it) was not run, never a number. `with_std`: whether the rows have paper_std (default: whether the
    paper's numbers come with one)."""
    keys = keys or {}
    with_std = any(isinstance(v, tuple) for v in reported.values()) if with_std is None else with_std
    rows = []
    for label, rs in runs.items():
        rs = [as_result(r) for r in rs]
        mean, se = mean_se([100 * quantity(r) for r in rs])
        paper = reported.get(paper_name(label) if paper_name else label, (math.nan, math.nan) if with_std else math.nan)
        row = {**keys, "method": label, "final_mean": mean, "final_se": se,
               "best_round_mean": float(np.mean([100 * r.best() for r in rs]))}
        row.update({"paper_accuracy": paper[0], "paper_std": paper[1]} if with_std else {"paper_accuracy": paper})
        rows.append({**row, "seeds": len(rs), "rounds": rs[0].n_rounds})
    for keys_missing in missing or []:
        row = {**keys_missing, "method": keys_missing.get("method", "(all)"), "final_mean": math.nan, "final_se": math.nan,
               "best_round_mean": math.nan, "paper_accuracy": math.nan}
        rows.append({**row, **({"paper_std": math.nan} if with_std else {}), "seeds": 0, "rounds": 0})
    return rows
