"""Notebook 08's tables and figures, each from the Reads of its parts (`part.read`): each function draws one part,
saves it under figures/ and returns what it drew (None, having said why, where its runs are not shipped)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import outputs, plots, stats
from ..part import Read
from . import analysis
from .plans import FULL, READINGS
from .protocol import METHODS
from .reported import TABLE3


def fig1(fig1: Read) -> dict | None:
    """Part A, Fig. 1: FedAvg's global accuracy under the four data conditions; condition -> [seeds, rounds] (%)."""
    runs, S = fig1.all(), fig1.settings
    if runs is None:
        return None
    panel = {cond: plots.Curve("fedavg", np.array([r.curve("acc_all") for r in rs]) * 100) for cond, rs in runs.items()}
    for cond, c in panel.items():
        print(f"{cond:15s} final {c.acc[:, -1].mean():6.2f}%")
    fig = plots.accuracy_curves({"MNIST, FedAvg": panel}, "FedProf's Fig. 1: FedAvg's global accuracy under biased "
                                                          "and noisy client data", ylabel="global test accuracy (%)")
    plots.caption(fig, fig1.profile, len(S.seeds), S.fig1_rounds,
                  note=f"{S.n_clients} clients, C = {S.fig1_participation}")
    outputs.save_figure(fig, "fedprof_fig1_conditions")
    return {cond: c.acc for cond, c in panel.items()}


def _reached(rs: list, target: float):
    """The mean round at which the seeds' runs reach `target`, over those that reach it; "not reached" where none
    does, and "(k of n seeds)" beside the mean where only k do (a run that never reaches it counts as its rounds + 1
    in the claims, censored; a table shows it in words)."""
    hits = [analysis.rounds_to(r, target) for r in rs]
    reached = [h for h, r in zip(hits, rs) if h <= r.n_rounds]
    if not reached:
        return "not reached"
    mean = float(np.mean(reached))
    return mean if len(reached) == len(hits) else f"{mean:.2f} ({len(reached)} of {len(hits)} seeds)"


def table3(readings: list[Read], shown: Read | None):
    """Parts B and C: Table 3's stand-in (each reading of the lr decay whose runs are shipped, the paper's numbers
    beside) and Fig. 5's accuracy traces of `shown` (`part.first_whole` of the readings). Returns the table (None if
    no reading is shipped)."""
    rows, traces = [], {}
    for read in readings:
        runs = read.all() if read.whole() else None
        S = read.settings
        for (C, lab), rs in (runs or {}).items():
            best = stats.mean_se([analysis.best(r) for r in rs])
            reach = [_reached(rs, t) for t in S.targets]
            agg = "full" if lab in FULL else "partial"
            paper_row = TABLE3.get((agg, C), {}).get(lab.split(" (")[0], (float("nan"),) * 4)
            rows.append({"lr decay": READINGS[read.part], "C": C, "aggregation": agg, "method": lab,
                         "best_mean": best[0], "best_se": best[1], f"rounds_to_{S.targets[0]:.0%}": reach[0],
                         f"rounds_to_{S.targets[1]:.0%}": reach[1], "paper_best": paper_row[0],
                         "paper_rounds_to_90%": paper_row[1], "seeds": len(rs), "rounds": rs[0].n_rounds})
            if read is shown:
                traces.setdefault(f"C = {C}, {agg} aggregation", {})[lab] = plots.Curve(
                    METHODS[lab][0], np.array([r.curve("acc_all") for r in rs]) * 100)
    for name in ("CFCFM", "FedAdam", "AFL"):  # the paper's numbers for them, in words (none where it gives none)
        said = [f"{agg} aggregation: best {row[0]}%, 90% after {row[1]} rounds" for agg in ("partial", "full")
                if (row := TABLE3.get((agg, 0.1), {}).get(name)) is not None]
        print(f"{name}: not implemented (the paper at C = 0.1, {'; '.join(said)})")
    if not rows:
        print("; ".join(read.note() for read in readings))
        return None
    S = shown.settings
    table = outputs.save_table(rows, "fedprof_table3", units={"best_mean": "%", "best_se": "%", "paper_best": "%"})
    fig = plots.accuracy_curves(traces, "FedProf's Fig. 5: global accuracy per round (MNIST with noisy clients)",
                                ylabel="global test accuracy (%)")
    plots.caption(fig, shown.profile, len(S.seeds), f"{S.full_rounds} (full) / {S.partial_rounds} (partial) rounds",
                  note=f"{S.n_clients} clients, lr decay {READINGS[shown.part]}")
    outputs.save_figure(fig, "fedprof_curves")
    return table


def participation(shown: Read | None) -> dict | None:
    """Part D, Fig. 6: how many rounds each kind of client took part in, seed 0, at the largest participation."""
    if shown is None:
        return None
    S = shown.settings
    C0 = S.fractions[-1]
    shares = {lab: analysis.participation(shown[(C0, lab)][0]) for lab in ("FedAvg-RP", "FedProf (partial)")}
    for lab, by_kind in shares.items():
        print(f"{lab:18s} mean selections per client: " + ", ".join(f"{k} {v:.2f}" for k, v in by_kind.items()))
    fig = grouped_bars({lab: {analysis.KINDS[k]: v for k, v in by_kind.items()} for lab, by_kind in shares.items()},
                             "rounds taken part in (mean per client)",
                             f"FedProf's Fig. 6: participation by kind of client (C = {C0})")
    plots.caption(fig, shown.profile, 1, S.partial_rounds,
                  note=f"seed 0, partial aggregation, lr decay {READINGS[shown.part]}")
    outputs.save_figure(fig, "fedprof_participation")
    return shares


def divergence(shown: Read | None) -> dict | None:
    """Part E: the mean divergence of each kind of client's profile per round (FedProf partial, seed 0)."""
    if shown is None:
        return None
    S = shown.settings
    C0 = S.fractions[-1]
    by_kind = analysis.divergence_by_kind(shown[(C0, "FedProf (partial)")][0])
    fig = plots.accuracy_curves({"FedProf (partial)": {k: plots.Curve("fedprof", v[None, :]) for k, v in by_kind.items()}},
                                "Mean divergence of the clients' profiles from the server's, by kind of client (not "
                                "in the paper)", ylabel="mean KL divergence (Eq. 3)")
    plots.caption(fig, shown.profile, 1, S.partial_rounds, note=f"C = {C0}, alpha = 10, lr decay {READINGS[shown.part]}")
    outputs.save_figure(fig, "fedprof_div_by_kind")
    return by_kind


def alpha(alpha: Read, table3: Read):
    """Part E: FedProf (partial)'s best accuracy at each alpha (10 from Table 3's protocol runs, `table3`); the
    table, or None where neither is shipped."""
    S = alpha.settings
    C0 = S.fractions[-1]
    at_ten = table3[(C0, "FedProf (partial)")]
    best = {10.0: stats.mean_se([analysis.best(r) for r in at_ten])} if at_ten is not None else {}
    runs = alpha.all()
    if runs is not None:
        best |= {a: stats.mean_se([analysis.best(r) for r in rs]) for a, rs in runs.items()}
    if not best:
        return None
    return outputs.save_table([{"alpha": a, "best_mean": m, "best_se": se, "seeds": len(S.seeds),
                              "rounds": S.partial_rounds, "C": C0} for a, (m, se) in sorted(best.items())],
                            "fedprof_alpha", units={"best_mean": "%", "best_se": "%"})


def grouped_bars(groups: dict[str, dict[str, float]], ylabel: str, title: str):
    """One bar per (series, category): groups[series][category] = value, categories on the x axis (FedProf's Fig. 6:
    participation per kind of client). Returns the figure."""
    series = list(groups)
    categories = list(dict.fromkeys(c for g in groups.values() for c in g))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    width = 0.8 / len(series)
    x = np.arange(len(categories))
    for i, name in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, [groups[name].get(c, np.nan) for c in categories], width,
               label=name)
    ax.set_xticks(x, categories)
    ax.set(xlabel="kind of client", ylabel=ylabel)
    ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig
