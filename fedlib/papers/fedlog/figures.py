"""FedLog's own figures and tables, drawn from what its notebooks read and computed: accuracy against bits and
Table 1's and Table A.1's tables in both regimes, the ablations and FedDBE's cross-check (notebook 02), the DP
trade-off (03), Fig. 1's panels (01), the Gaussian checks (04), rounds and bits to a target and Thm. 4's step sizes
(05). Each saves what it draws (`outputs.save_figure`, `outputs.save_table`) and returns it."""
from __future__ import annotations

import textwrap
from dataclasses import asdict
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np

from ... import outputs, plots, privacy, stats
from ...plots import count, log_x, mean_band, method_styles
from .analysis import convergence, dp, regime, synthetic
from .analysis import crosscheck as feddbe_xcheck
from .analysis import table1 as A
from .plans import (LABELS, AUGMENTED, REGIME_WORDS, REGIMES, SAME_AS_AUGMENTED, STAND_IN_FOR, STEP_SIZES,
                    Table1Reads)
from .protocol import EXTRA_METHODS, TABLE1_METHODS
from .reported import PAPER_DATA, TABLE1, TABLE1_SE, THRESHOLD, stand_in

# The methods' colours where a figure draws them by hand, and how Table 1's methods look in every figure (registered
# with the paper, `plots.LOOKS`): FedLog and FedLog-C thick and on top, FedLog red and solid, FedLog-C black and
# dashed, so one never hides the other; the baselines' line style says their family (personal layers dash-dotted,
# prototypes dotted; a shared model solid, the default).
PALETTE = {"fedlog": "#d62728", "fedlog_c": "#000000", "fedavg": "#7f7f7f", "lg_fedavg": "#1f77b4",
           "fedproto": "#2ca02c"}
LOOKS = {"fedlog": dict(color=PALETTE["fedlog"], ls="-", lw=2.4, zorder=5),
         "fedlog_c": dict(color=PALETTE["fedlog_c"], ls="--", lw=2.0, zorder=6),
         **{m: dict(ls="-.") for m in ("lg_fedavg", "fedper", "fedrep")}, "fedproto": dict(ls=":")}

NAN = float("nan")


def accuracy_vs_bits(curves: dict[str, plots.Curve], threshold: float, title: str,
                     zoom: tuple[float, float] = (90, 100)):
    """Table 1's curves. curves[label] = a `plots.Curve` with its cumulative bits per round. Panels: accuracy against cumulative bits (log), against rounds, and against
    rounds zoomed to `zoom` (where the ranking the tables discuss lies). Returns the figure."""

    styles = method_styles({lab: c.method for lab, c in curves.items()})
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    for lab, c in curves.items():
        acc = np.asarray(c.acc, float)
        rounds = np.arange(1, acc.shape[1] + 1)
        axes[0].plot(c.bits, acc.mean(0), label=lab, **styles[lab])
        for ax in axes[1:]:
            mean_band(ax, rounds, acc, lab, spread="se", **styles[lab])
    for ax in axes:
        ax.axhline(100 * threshold, color="k", ls=":", lw=0.9, label=f"threshold {100 * threshold:.0f}%")
        ax.set_ylabel("mean client accuracy (%)")
    log_x(axes[0])
    axes[0].set_xlabel("cumulative bits (up + down, all clients)")
    from matplotlib.ticker import MaxNLocator

    for ax in axes[1:]:
        ax.set_xlabel("round")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[2].set_ylim(*zoom)
    axes[2].set_title(f"zoom: {zoom[0]:g}-{zoom[1]:g}%", fontsize=9)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8, handlelength=3.2)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig

class DpLine(NamedTuple):
    """One curve of Fig. 3 right: the accuracy (%) after the last round, mean and SE over `seeds` seeds at each
    epsilon, and how it is drawn."""
    eps: list
    mean: list
    se: list
    seeds: int
    color: str
    ls: str
    marker: str


class DpPanel(NamedTuple):
    """One dataset's panel of Fig. 3 right: the accuracy without DP (%), its curves (label -> DpLine) and the
    epsilons to read them at, drawn as vertical lines (label -> (epsilon, colour))."""
    no_dp: float
    series: dict
    marks: dict | None = None


def dp_accuracy(panels: dict[str, DpPanel], title: str):
    """Fig. 3 right, one DpPanel per dataset. A series with one seed or at most three
    budgets says so in its label and is drawn without joining lines (nothing was measured between its points).
    Every panel shares one accuracy range. Returns the figure."""

    fig, axes = plt.subplots(1, len(panels), figsize=(5.8 * len(panels), 4.8), squeeze=False, sharey=True)
    below = 0.3  # a legend's top, in its panel's heights under the panel (room for the ticks and the axis label)
    for ax, (name, panel) in zip(axes[0], panels.items()):
        ax.axhline(panel.no_dp, color="k", ls=":", label="no DP")
        for label, (eps, color) in (panel.marks or {}).items():  # an epsilon to read the curves at, as a line
            ax.axvline(eps, color=color, ls=(0, (1, 3)), lw=1.2, label=label)
        for label, line in panel.series.items():
            sparse = line.seeds < 2 or len(line.eps) <= 3
            mark = " (" + ", ".join(t for t, bad in ((count(line.seeds, "seed"), line.seeds < 2),
                                                    (count(len(line.eps), "budget"), len(line.eps) <= 3)) if bad) + ")"
            mean, se = np.asarray(line.mean, float), np.asarray(line.se, float)
            if sparse:  # points with error bars: nothing was measured between them
                ax.errorbar(line.eps, mean, yerr=se, color=line.color, ls="none", marker=line.marker, ms=5, capsize=2,
                            label=label + mark)
            else:
                ax.plot(line.eps, mean, color=line.color, ls=line.ls, marker=line.marker, ms=4, label=label)
                ax.fill_between(line.eps, mean - se, mean + se, color=line.color, alpha=0.12, lw=0)
        ax.set_xscale("log")
        ax.set_xlabel("privacy budget ε")
        ax.set_ylabel("mean client accuracy (%)")
        ax.set_title(name, fontsize=10)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()

    def legends(wrap=None):  # below each panel, never on the data; placed by hand (out of the layout), so they
        for ax in axes[0]:   # neither narrow the panels nor leave a band above the caption line, as tight_layout did
            handles, labels = ax.get_legend_handles_labels()
            ax.legend(handles, [textwrap.fill(t, wrap) if wrap else t for t in labels], fontsize=7,
                      handlelength=3.2, loc="upper center", bbox_to_anchor=(0.5, -below), ncol=2).set_in_layout(False)
        fig.canvas.draw()
        return [ax.get_legend().get_window_extent() for ax in axes[0]]

    boxes = legends()
    if any(a.x1 > b.x0 for a, b in zip(boxes, boxes[1:])):  # one panel's legend runs into the next one's (the
        legends(wrap=34)  # formal DP-SGD series' label did, 2026-12-02): long labels on two lines
    to_figure = fig.transFigure.inverted()
    tallest = max(to_figure.transform_bbox(ax.get_legend().get_window_extent()).height for ax in axes[0])
    top = axes[0, 0].get_position().y1
    # the panels' bottom y0 such that the tallest legend, hung `below` panel heights under it, ends about 0.05 inch
    # above the figure's bottom (the caption line): y0 - below * (top - y0) - tallest = gap, where the gap of 0.1 inch
    # holds the legend's own pad under its anchor (half its font size, 0.05 inch)
    fig.subplots_adjust(bottom=(0.1 / fig.get_figheight() + tallest + below * top) / (1 + below))
    for ax in axes[0]:  # back in the layout, so that the saved figure (bbox_inches="tight") holds the whole legend
        ax.get_legend().set_in_layout(True)
    return fig

CLASS_COLORS = ("tab:blue", "tab:green")
CLIENT_MARKERS = ("o", "^")


def _separator_line(ax, weight, bias, xs, **kw):
    """The line where a 2-class head's logits are equal: (w1 - w0) . phi + (b1 - b0) = 0."""
    w, b = weight[1] - weight[0], float(bias[1] - bias[0])
    if abs(float(w[1])) > 1e-9:
        ax.plot(xs, -(float(w[0]) * xs + b) / float(w[1]), **kw)
    else:
        ax.axvline(-b / float(w[0]), **kw)


def representation_panel(ax, snap, title: str, global_head: bool = True) -> None:
    """Fig. 1's scatter of two clients' representations with the separators their heads draw: the global head
    (red), or each client's own head (black, solid for client 0 and dashed for client 1); LG-FedAvg's local heads
    before averaging are drawn the same way."""
    for c, marker in enumerate(CLIENT_MARKERS):
        f, y = np.asarray(snap.features[c]), np.asarray(snap.labels[c])
        ax.scatter(f[:, 0], f[:, 1], c=np.array(CLASS_COLORS)[y], marker=marker, s=18, edgecolors="k", linewidths=0.3)
    allf = np.concatenate([np.asarray(f) for f in snap.features])
    lo, hi = allf.min(0) - 0.5, allf.max(0) + 0.5
    xs = np.linspace(lo[0], hi[0], 50)
    own = snap.local_heads if snap.local_heads is not None else (None if global_head else snap.heads)
    for (w, b), ls in zip(own or [], ["-", "--"]):
        _separator_line(ax, w, b, xs, color="k", lw=0.9, ls=ls)
    if global_head:
        _separator_line(ax, *snap.heads[0], xs, color="red", lw=1.6)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_xlabel("φ₁")
    ax.set_ylabel("φ₂")
    ax.set_title(title, fontsize=9)


def fig1(data: list[tuple], radius: float, panels: list[tuple], acc: dict, iters: list[int]):
    """Fig. 1. data: per client (x [n, 2], y [n]); panels: (snapshot, title, global_head) per representation panel;
    acc[method] = {"train": [seeds, iters], "test": [seeds, iters]} accuracies after one round. The last two panels
    are the test accuracy (mean ± SE) and each method's test accuracy minus FedLog's, paired by seed (mean ± SE):
    a band that stays below 0 is a method FedLog beats. Returns the figure."""
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(2, 4, figsize=(17, 8))
    ax = axes[0, 0]
    for c, (x, y) in enumerate(data):
        ax.scatter(x[:, 0], x[:, 1], c=np.array(CLASS_COLORS)[np.asarray(y)], marker=CLIENT_MARKERS[c], s=18,
                   edgecolors="k", linewidths=0.3)
    ax.add_patch(plt.Circle((0, 0), radius, fill=False, ls=":", color="gray"))
    ax.set_aspect("equal")
    ax.set(title="the data: two clients", xlabel="x₁", ylabel="x₂")
    for ax, (snap, title, global_head) in zip([axes[0, 1], axes[0, 2], axes[0, 3], axes[1, 0]], panels):
        representation_panel(ax, snap, title, global_head)
    test = {m: np.asarray(a.test, float) for m, a in acc.items()}
    ours = next(iter(acc))  # FedLog (`plans.FIG1_METHODS`' first)
    for m in acc:
        mean_band(axes[1, 1], iters, 100 * test[m], LABELS.get(m, m), color=PALETTE.get(m), spread="se")
        if m != ours:
            mean_band(axes[1, 2], iters, 100 * (test[m] - test[ours]), f"{LABELS.get(m, m)} − FedLog",
                      color=PALETTE.get(m), spread="se")
    axes[1, 1].set(xlabel="local iterations", ylabel="test accuracy after one round (%)",
                   title="test accuracy (mean ± SE over seeds)")
    axes[1, 2].axhline(0, color=PALETTE["fedlog"], lw=1.2, label="FedLog")
    axes[1, 2].set(xlabel="local iterations", ylabel="test accuracy − FedLog's (points)",
                   title="difference to FedLog, paired by seed (mean ± SE)")
    for ax in axes[1, 1:3]:
        ax.legend(fontsize=8)
    key = axes[1, 3]  # what the marks mean
    key.axis("off")
    marks = [Line2D([], [], ls="none", marker="o", color=CLASS_COLORS[0], label="class 0"),
             Line2D([], [], ls="none", marker="o", color=CLASS_COLORS[1], label="class 1"),
             Line2D([], [], ls="none", marker=CLIENT_MARKERS[0], color="0.3", mfc="none", label="client 0"),
             Line2D([], [], ls="none", marker=CLIENT_MARKERS[1], color="0.3", mfc="none", label="client 1"),
             Line2D([], [], color="red", lw=1.6, label="separator of the global head"),
             Line2D([], [], color="k", lw=0.9, label="separator of client 0's own head"),
             Line2D([], [], color="k", lw=0.9, ls="--", label="separator of client 1's own head")]
    key.legend(handles=marks, loc="center left", fontsize=9, handlelength=3, title="marks")
    fig.tight_layout()
    return fig

def rounds_and_bits(by_dataset: dict[str, dict], title: str, spread: str = "std", verdict: str = ""):
    """Fig. 2 / Fig. 3 left. by_dataset[d][label] = a `plots.Curve` with its cumulative bits per round. Top: accuracy against rounds (mean ± `spread`); bottom: against cumulative bits.
    `verdict`, computed by the caller from the numbers, is printed under the title. Returns the figure."""
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, len(by_dataset), figsize=(5.8 * len(by_dataset), 7.8), squeeze=False)
    for j, (d, by_label) in enumerate(by_dataset.items()):
        for lab, c in by_label.items():
            acc = np.asarray(c.acc, float)
            color = PALETTE.get(c.method)
            mean_band(axes[0, j], np.arange(1, acc.shape[1] + 1), acc, lab, color=color, spread=spread)
            axes[1, j].plot(c.bits, acc.mean(0), marker=".", label=lab, color=color)
        seeds = len(np.asarray(next(iter(by_label.values())).acc))
        axes[0, j].set(title=f"{d} ({count(seeds, 'seed')})", xlabel="global round", ylabel="mean client accuracy (%)")
        axes[0, j].xaxis.set_major_locator(MaxNLocator(integer=True))
        log_x(axes[1, j])
        axes[1, j].set(xlabel="cumulative bits (up + down, all clients)", ylabel="mean client accuracy (%)")
        for ax in axes[:, j]:
            ax.legend(fontsize=8)
    fig.suptitle(title + (f"\n{verdict}" if verdict else ""), fontsize=11)
    fig.tight_layout()
    return fig

def step_sizes(study: dict, bound_note: str = ""):
    """Thms. 3-5 measured. study[zeta] = that step size's `analysis.convergence.Trace`. Panels: the median
    relative change of the clients' local loss per round (linear, in [-1, 1]; a run that diverged is marked x where
    it stops), the mean squared body gradient norm, and the largest smoothness estimate L1 with, in the same colour,
    the line L1 = 2/zeta: a step size is inside Thm. 4's bound while its L1 curve stays below its line."""
    from matplotlib.ticker import MaxNLocator

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16, 4.6))
    colors = plt.get_cmap("tab10").colors
    for i, (zeta, tr) in enumerate(study.items()):
        color, n = colors[i % len(colors)], len(tr.loss_after)
        if n == 0:
            ax1.plot([], [], color=color, label=f"ζ = {zeta:g} (diverged in round 1)")
            continue
        r = np.arange(1, n + 1)
        before, after = np.array(tr.loss_before[:n], float), np.array(tr.loss_after, float)
        change = np.clip(np.median((after - before) / np.maximum(before, 1e-12), axis=1), -1, 1)
        diverged = tr.diverged_round is not None
        ax1.plot(r, change, marker=".", color=color,
                 label=f"ζ = {zeta:g}" + (f" (diverged in round {tr.diverged_round})" if diverged else ""))
        if diverged:
            ax1.plot(r[-1], change[-1], marker="x", ms=10, mew=2, color=color)
        ax2.plot(np.arange(1, len(tr.grad_norm) + 1), np.mean(np.square(tr.grad_norm), axis=1), marker=".",
                 color=color, label=f"ζ = {zeta:g}")
        ax3.plot(np.arange(1, len(tr.smoothness) + 1), np.max(tr.smoothness, axis=1), marker=".", color=color,
                 label=f"L1, ζ = {zeta:g}")
        ax3.axhline(2 / zeta, color=color, ls="--", lw=0.9)
    ax1.axhline(0, color="k", lw=0.8)
    ax1.set(xlabel="round", ylabel="median (L_after − L_before) / L_before", ylim=(-1.05, 1.05),
            title="Thms. 3-4: relative change of the local loss")
    ax2.set(xlabel="round", ylabel="mean ‖∇θ L_c‖² over clients", yscale="log", title="Thm. 5: body gradient")
    ax3.set(xlabel="round", ylabel="largest L1 estimate over clients", yscale="log",
            title="smoothness; dashed: 2/ζ (inside the bound below it)")
    from matplotlib.lines import Line2D

    ax3.add_line(Line2D([], [], color="0.4", ls="--", lw=0.9, label="2/ζ, in its ζ's colour"))
    for ax in (ax1, ax2, ax3):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=7)
    if bound_note:
        fig.suptitle(bound_note, fontsize=10)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- FedCR's notebook (06)


def replica_passes(stand_ins: list, ours: int, evaluations: int, model: str):
    """The cross-check's rule applied to the authors' own code in our place (`crosscheck.replicas`): how many of
    the assignments of their streams pass each number of evaluations, with fedlib's number marked. Returns the
    figure."""
    passing = np.array([r.passing for r in stand_ins])
    fig, ax = plt.subplots(figsize=(6.2, 3.8))
    values, counts = np.unique(passing, return_counts=True)
    ax.bar(values, counts, width=0.8, color="0.6",
           label=f"the authors' code in our place ({count(len(stand_ins), 'assignment')} of their streams)")
    ax.axvline(ours, color=PALETTE["fedlog"], lw=2, label=f"fedlib ({ours} of {evaluations})")
    ax.set(xlabel=f"evaluations within the bound (of {evaluations})", ylabel="assignments (count)",
           title=f"FedDBE, {model}: the cross-check rule applied to the authors' own code")
    ax.set_xlim(min(values.min(), ours) - 1.5, evaluations + 0.5)
    ax.set_ylim(0, counts.max() + 1.6)  # room for the legend
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def rankings(n: A.Table1Numbers) -> None:
    """Notebook 02's rankings of the entries against the paper's Table 1 (`n.rankings`), each said, saved as
    table1_<dataset>_ranking and shown where it is saved (the call's value is None, so the cell shows nothing more)."""
    for d, (rows, lines, _) in n.rankings.items():
        print("\n".join(lines))
        outputs.save_table(rows, f"table1_{d}_ranking")


# Notebook 03: FedLog with differential privacy (Fig. 3 right, Thm. 7). `runs`: dataset -> its DpRuns (`plans`);
# `final`: (dataset, mode, accountant, epsilon) -> each seed's final accuracy (`analysis.dp.finals`), a fraction.
def dp_noise(runs: dict, m: int, profile: str, b: float, delta: float) -> str:
    """The noise sigma each accountant calibrates against epsilon (Thm. 7's, the Renyi-DP accountant's) for a
    statistic of size `m`; saved as dp_sigma; returns the range of their ratio."""
    eps_grid = np.logspace(-1, np.log10(50), 12)
    k = next(iter(runs.values())).rounds if runs else 10
    thm7 = [privacy.sigma_thm7(e, delta, m, b, k) for e in eps_grid]
    tight = [privacy.sigma_tight(e, delta, m, b, k) for e in eps_grid]
    fig, ax = plt.subplots(figsize=(5, 3.4))
    ax.loglog(eps_grid, thm7, label="Thm. 7 (Kairouz et al. composition)")
    ax.loglog(eps_grid, tight, label="Rényi-DP accountant")
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("noise standard deviation σ")
    ax.legend(fontsize=8)
    ax.set_title(f"noise for m={m}, b={b}, delta={delta}, k={k} rounds", fontsize=9)
    plots.caption(fig, profile, "no runs", f"k = {k} rounds", note="the noise each accountant calibrates")
    outputs.save_figure(fig, "dp_sigma")
    ratio = np.divide(tight, thm7)
    return f"sigma_tight / sigma_thm7 from {min(ratio):.2f} to {max(ratio):.2f}"


def dp_figure(runs: dict, final: dict, profile: str, b: float, delta: float, at_papers_noise: dict | None = None):
    """Fig. 3 right: accuracy against epsilon per dataset of `runs` (those that can be drawn: `analysis.dp.finals`),
    central and local DP with each accountant and the formal variant, in percent, each curve whose runs are all
    there (the caption names those that are not yet), with (`at_papers_noise`: mode -> dataset -> epsilon,
    `analysis.dp.matched`) the epsilons at the paper's noise per record marked; saved as fig3_right_dp (None, and
    nothing saved, when no dataset can be drawn)."""
    if not runs:
        print("Fig. 3 right: not drawn, no dataset's runs are all there")
        return None
    panels, waiting = {}, []
    for name, s in runs.items():
        series, whole = {}, dp.whole_series(final, name, s)
        for mode, color in (("central", "tab:red"), ("local", "tab:blue")):
            for acct, ls, marker in (("thm7", "-", "o"), ("rdp", "--", "^")):
                label = f"{mode} DP, {'Thm. 7' if acct == 'thm7' else 'RDP accountant'}"
                if (mode, acct) not in whole:  # a curve its profile runs (Renyi-DP's where `s.tight`), not all there
                    waiting += [f"{name} {label}"] if acct == "thm7" or s.tight else []
                    continue
                ms = [stats.mean_se(final[(name, mode, acct, e)]) for e in s.eps]
                series[label] = DpLine(list(s.eps), [100 * m for m, _ in ms], [100 * v for _, v in ms], len(s.seeds),
                                       color, ls, marker)
        if dp.formal_whole(final, name, s):
            f = s.formal
            ms = [stats.mean_se(final[(name, "formal", "rdp-sgd", e)]) for e in f.eps]
            series[f"formal: DP-SGD (z={f.z}, C={f.clip}) + local DP"] = DpLine(
                list(f.eps), [100 * m for m, _ in ms], [100 * v for _, v in ms], len(f.seeds), "tab:green", "-.", "s")
        elif s.formal:
            waiting.append(f"{name} formal variant")
        marks = {f"{mode} DP at the paper's noise per record (ε = {by[name]:.3g})": (by[name], color)
                 for (mode, by), color in zip((at_papers_noise or {}).items(), ("tab:red", "tab:blue")) if name in by}
        panels[f"{name}, {plots.count(s.rounds, 'round')}, {plots.count(len(s.seeds), 'seed')}"] = DpPanel(
            100 * float(np.mean(final[(name, "none", "-", np.inf)])), series, marks)
    fig = dp_accuracy(panels, "FedLog with differential privacy: accuracy after the last round (mean ± SE)")
    plots.caption(fig, profile, _counts((len(s.seeds) for s in runs.values()), "seed"),
                  _counts((s.rounds for s in runs.values()), "round"),
                  note="; ".join(filter(None, [f"δ = {delta}, b = {b}", stand_in(runs, PAPER_DATA["fig3_right"]),
                                               "runs not all shipped yet, so not drawn: " + ", ".join(waiting)
                                               if waiting else ""])))
    outputs.save_figure(fig, "fig3_right_dp")
    return fig


def _counts(ns, word: str) -> str:
    """The panels' counts: "5 seeds" where they agree, "5 seeds / 3 seeds" (panel order) where they differ."""
    return " / ".join(dict.fromkeys(plots.count(n, word) for n in ns))


def dp_table(runs: dict, final: dict, sizes: dict, b: float, delta: float):
    """Per dataset of `runs` and epsilon: both sigmas and every variant's mean final accuracy (%); saved as dp_sigma
    (None, and nothing saved, when no dataset's runs are there). `sizes`: dataset -> the statistic's size m."""
    if not runs:
        return None
    rows = []
    for name, s in runs.items():
        k = s.rounds
        for e in s.eps:
            row = {"dataset": name, "epsilon": e, "delta": delta, "m": sizes[name], "b": b, "k": k,
                   "sigma_thm7": privacy.sigma_thm7(e, delta, sizes[name], b, k),
                   "sigma_tight": privacy.sigma_tight(e, delta, sizes[name], b, k),
                   "acc_no_dp": 100 * float(np.mean(final[(name, "none", "-", np.inf)]))}
            for mode in ("central", "local"):
                for acct in ("thm7", "rdp"):
                    vals = final.get((name, mode, acct, e))
                    row[f"acc_{mode}_{acct}"] = 100 * float(np.mean(vals)) if vals else float("nan")
            vals = final.get((name, "formal", "rdp-sgd", e))
            rows.append(row | {"acc_formal": 100 * float(np.mean(vals)) if vals else float("nan")})
    return outputs.save_table(rows, "dp_sigma")


# Notebook 05: Fig. 2, Fig. 3 left (dataset -> label -> Results, one per seed) and Thms. 3-5's step sizes.
def convergence_figure(by_dataset: dict, methods: dict, name: str, title: str, spread: str, profile: str,
                       verdict: str = "", paper_data: dict | None = None):
    """Accuracy against rounds and against bits, per dataset; saved as `name` (None, and nothing saved, without
    runs). `methods`: label -> (method, options); `paper_data` (the paper's datasets, `PAPER_DATA`): the caption names
    those ours stand in for."""
    if not by_dataset:
        print(f"{title.split(':')[0]}: not drawn, no dataset's runs are all there")
        return None
    shown = {d: {lab: plots.Curve(methods[lab][0], convergence.curves(rs),
                                  bits=np.cumsum(rs[0].bits_up + rs[0].bits_down)) for lab, rs in by_label.items()}
             for d, by_label in by_dataset.items()}
    fig = rounds_and_bits(shown, title, spread, verdict)
    any_runs = next(iter(next(iter(by_dataset.values())).values()))
    plots.caption(fig, profile, len(any_runs), any_runs[0].n_rounds, note=stand_in(by_dataset, paper_data or {}))
    outputs.save_figure(fig, name)
    return fig


def step_size_part(studies: dict, s, profile: str) -> None:
    """Thms. 3-5: the step-size studies' rows (`analysis.convergence.step_size_table`, from `step_size_studies`; `s`
    their `plans.StepSizes`), printed and saved (thm4_step_sizes), and the first seed's figure (thm3_5_convergence).
    Without traces (the paper profile computes none) it says how to make them."""
    if not studies:
        print(f"Thms. 3-5: not drawn, no trace of the {len(s.steps)} step sizes is cached or shipped; compute "
              f"them with FEDLIB_COMPUTE=1 FEDLIB_PROFILE={profile} ./run_all.sh 05, then copy "
              f"results/{STEP_SIZES.derive.folder}/ into archive/{STEP_SIZES.derive.folder}/")
        return
    rows = convergence.step_size_table(studies)
    first = next(iter(studies))
    print(f"seed {first}:\n" + "\n".join(convergence.step_size_lines([r for r in rows if r.seed == first])))
    outputs.save_table([r._asdict() for r in rows], "thm4_step_sizes")
    fig = step_sizes(studies[first], "Thms. 3-5 measured: FedLog on MNIST, plain SGD on the bodies at step size ζ")
    plots.caption(fig, profile, 1, s.rounds, note=f"{s.over.get('n_clients', 50)} clients, seed {first} of "
                  f"{len(studies)} (the claim reads them all)")
    outputs.save_figure(fig, "thm3_5_convergence")


# Notebook 01: Fig. 1's accuracy arrays (method -> `analysis.synthetic.Accuracy`).
def fig1_table(acc: dict, iters) -> object:
    """Train and test accuracy in % (mean and std over seeds) per method and local-iteration count, as every notebook
    shows accuracy; saved as fig1_accuracy."""
    rows = [{"method": LABELS[m], "local_iterations": e,
             "train_mean": 100 * float(acc[m].train[:, j].mean()), "train_std": 100 * float(acc[m].train[:, j].std()),
             "test_mean": 100 * float(acc[m].test[:, j].mean()), "test_std": 100 * float(acc[m].test[:, j].std())}
            for m in acc for j, e in enumerate(iters)]
    return outputs.save_table(rows, "fig1_accuracy")


# Notebook 04: the Gaussian representations (Eq. 9, FedProf Props. 1-2, Fig. A.1/A.2; `analysis.representations`).
def eq9_table(rows: list[dict]):
    """Eq. 9's closed form against numerical integration (`analysis.representations.eq9_rows`), saved as
    eq9_log_partition, with the largest relative error printed."""
    print(f"largest relative error: {max(r['relative_error'] for r in rows):.1e}")
    return outputs.save_table(rows, "eq9_log_partition")


def normality_table(rows: list):
    """FedProf Props. 1-2's shares of dimensions passing K^2 (`analysis.gaussian.Row`s), saved as
    fedprof_normality."""
    return outputs.save_table([asdict(r) for r in rows], "fedprof_normality")


def qq_figure(examples: dict, settings, profile: str):
    """QQ-plots of two dimensions of each layer against the normal, untrained and trained, on the first dataset of
    `settings` (`plans.Gaussian`); saved as fedprof_qq."""
    from scipy import stats as sps

    name = settings.datasets[0]
    fig, axes = plt.subplots(2, 4, figsize=(13, 6))
    for row, state in enumerate(("untrained", "trained")):
        for col, (layer, dim) in enumerate([("dense fc1 (pre-activation)", 0), ("dense fc1 (pre-activation)", 1),
                                            ("conv2 (channel-fused)", 0), ("conv2 (channel-fused)", 1)]):
            z = examples[(name, state, layer)][:, dim]
            sps.probplot((z - z.mean()) / (z.std() + 1e-12), dist="norm", plot=axes[row, col])
            axes[row, col].set_title(f"{state}: {layer.split(' ')[0]} dim {dim}", fontsize=9)
            axes[row, col].get_lines()[0].set_markersize(2)
    fig.suptitle(f"QQ-plots against the normal distribution ({name}, {settings.test_samples} test images)")
    fig.tight_layout()
    plots.caption(fig, profile, 1, "centrally trained", note=f"{settings.epochs} epochs on {settings.train_samples} images")
    outputs.save_figure(fig, "fedprof_qq")
    return fig


def figure_a1(abl, alphas, rounds: int, profile: str):
    """Fig. A.1: each client's representations after FedLog-C at each alpha (seed 0); saved."""
    fig, axes = plt.subplots(1, len(alphas), figsize=(2.6 * len(alphas), 2.8))
    for ax, a in zip(axes, alphas):
        shot = abl.snapshots[a]
        for c, marker in enumerate(["o", "^"]):
            f, yy = shot.features[c], shot.labels[c]
            ax.scatter(f[:, 0], f[:, 1], c=np.array(["tab:blue", "tab:green"])[yy], marker=marker, s=10,
                       edgecolors="k", linewidths=0.2)
        ax.set(title=f"α = {a}", xlabel="φ₁", ylabel="φ₂")
    fig.suptitle("Fig. A.1: local representations after FedLog-C (seed 0; colour: class, o / ^: client 0 / 1)")
    fig.tight_layout()
    plots.caption(fig, profile, 1, rounds)
    outputs.save_figure(fig, "figA1_fedlogc_representations")
    return fig


def figure_a2(abl, alphas, seeds: int, rounds: int, profile: str) -> None:
    """Fig. A.2: the Henze-Zirkler p-values (pooled and per client, mean +- SE over seeds; `synthetic.hz_pvalues`)
    against alpha, and its table (figA2_hz_pvalues, accuracy in %: `synthetic.hz_rows`, which the claims judge)."""
    x_pos = np.arange(len(alphas))
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    pooled, per_client = synthetic.hz_pvalues(abl)  # [seeds, alphas]
    plots.mean_band(ax, x_pos, pooled, "classes, clients pooled", spread="se")
    plots.mean_band(ax, x_pos, per_client, "classes, per client", spread="se")
    ax.axhline(0.05, color="k", ls=":", lw=1, label="5%")
    ax.set_xticks(x_pos, [str(a) for a in alphas])
    ax.set_xlabel("auxiliary-loss weight α")
    ax.set_ylabel("HZ p-value")
    ax.legend(fontsize=8)
    ax.set_title("Fig. A.2: Henze-Zirkler p-values (mean ± SE)", fontsize=9)
    fig.tight_layout()
    plots.caption(fig, profile, seeds, rounds)
    outputs.save_figure(fig, "figA2_hz_pvalues")
    outputs.save_table(synthetic.hz_rows(abl, alphas)[0], "figA2_hz_pvalues")


# Notebook 02: Table 1 and Table A.1 in both regimes, the ablations and FedDBE's cross-check. `p`: the notebook's parts
# read at one profile (`plans.table1_reads`); `runs`, `absent`: `analysis.table1.read_regimes`; `n`: the numbers
# (`analysis.table1.numbers`).
def table1_regimes(p: Table1Reads):
    """Each Table 1 entry in both regimes beside the paper's number: best-round accuracy (mean +- SE over the seeds
    that are there, and how many: an entry shipped in part shows its seeds) and bits to the threshold; saved as
    table1_<dataset>_regimes. Returns the tables. "FedDBE (FedLog's augmentation)" has no row of its own: its runs are
    augmented, so they are FedDBE's in the augmented columns (where they are read), and never the "not augmented"
    columns' (where, as one of the ablation set's rows, they were shown until 2026-11-29)."""
    shown = []
    for d, s in p.settings.table1.items():
        rows = []
        for lab in s.methods:
            if lab == SAME_AS_AUGMENTED:
                continue
            row = {"method": lab, "paper accuracy (%)": TABLE1.get(d, {}).get(lab, (NAN,))[0]}
            for reg in REGIMES:
                read = p.table1[reg][d]
                got = read.there(lab) if lab in read.plan else []
                acc = [100 * r.best() for r in got]
                bits = [A.bits_to(THRESHOLD[d])(r) for r in got]
                m, se = stats.mean_se(acc) if acc else (NAN, NAN)
                se = se if len(acc) > 1 else NAN  # one seed has no standard error
                tag = "augmented" if reg == "augmented" else "not augmented"
                row[f"accuracy {tag} (%)"] = m
                row[f"SE {tag}"] = se
                row[f"bits {tag} (Mb)"] = float(np.mean(bits)) / 1e6 if bits else NAN
                row[f"seeds {tag}"] = f"{len(acc)} of {len(read.plan.get(lab, []))}"
            rows.append(row)
        shown.append(outputs.save_table(rows, f"table1_{d}_regimes"))
    return shown


def table1_regime_evidence(runs: dict, p: Table1Reads) -> dict:
    """The evidence that picks the regime deciding each dataset's Table 1 and Table A.1 claims (`analysis.regime`):
    per entry the paper's accuracy, ours in each regime with its reproduction verdict, and the round the paper's bits
    to the threshold imply (both ways, one way) beside ours in each regime; saved as table1_<dataset>_regime; then
    the rule's choice and why, in words. Returns dataset -> `regime.Choice`."""
    chosen = regime.deciding(runs, p.settings.table1)
    for d, c in chosen.items():
        if d in TABLE1 and d not in STAND_IN_FOR:
            by_regime = {reg: runs.get(reg, {}).get(d, {}) for reg in REGIMES}
            rows = regime.evidence_rows(regime.entries_of(by_regime, d, THRESHOLD[d], TABLE1[d], TABLE1_SE[d]),
                                        THRESHOLD[d])
            outputs.save_table(rows, f"table1_{d}_regime")
        print(f"Table 1 ({d}) is decided {regime.REGIME_NAMES[c.regime]}: {c.why}.")
    return chosen


def table1_tables(n: A.Table1Numbers) -> list:
    """Table 1 per regime and dataset whose entries are all there (`n.tables`: the numbers and the paper's layout,
    saved: with crop-and-flip as table1_<d>_augmented, without augmentation as table1_<d>); returns the pretty tables
    to show."""
    shown = []
    for reg, by in n.tables.items():
        for d, (numbers, pretty, _) in by.items():
            name = f"table1_{d}" + ("_augmented" if reg == "augmented" else "")
            keep = "method" if n.p.chosen else None  # a run for some methods keeps the other methods' rows
            outputs.save_table(numbers, name, keep_other=keep, show=False)  # its _pretty twin is shown
            print(f"{d} {REGIME_WORDS[reg]}: threshold {THRESHOLD[d]:.0%}")
            shown.append(outputs.save_table(pretty, f"{name}_pretty", keep_other=keep))
    return shown


def bits_per_round(runs: dict, p: Table1Reads):
    """The bits of one (the last) round, from the ledger (runs without augmentation: a round's messages do not depend
    on it); saved as comm_bits_per_round (the rows of datasets not run here stay; a dataset run for every method
    replaces its rows)."""
    rows = [{"dataset": d, "method": lab, "uplink_bits": rs[0].last("up_bits"), "downlink_bits": rs[0].last("down_bits")}
            for d, by_label in runs[regime.PLAIN_REGIME].items() for lab, rs in by_label.items()]
    return (outputs.save_table(rows, "comm_bits_per_round", keep_other=("dataset", "method"),
                               replace=() if p.chosen else ("dataset",),
                               units={"uplink_bits": "bits", "downlink_bits": "bits"}) if rows else None)


def table1_curves(runs: dict, absent: dict, p: Table1Reads) -> None:
    """Accuracy against communicated bits and against rounds, per dataset and regime whose entries are all there
    (accuracy_vs_bits_<d> without augmentation, accuracy_vs_bits_<d>_augmented with it)."""
    methods = {**TABLE1_METHODS, **EXTRA_METHODS}
    for reg in REGIMES:
        for d, by_label in runs[reg].items():
            if any(dd == d for dd, _ in absent[reg]) or not by_label:
                continue
            curves = {lab: plots.Curve(methods[lab][0], np.array([r.curve() for r in rs]) * 100,
                                       bits=np.cumsum(rs[0].bits_up + rs[0].bits_down)) for lab, rs in by_label.items()}
            fig = accuracy_vs_bits(curves, THRESHOLD[d], f"{d}, {REGIME_WORDS[reg]}: mean client "
                                           "accuracy (mean ± SE over seeds)")
            s = p.settings.table1[d]
            plots.caption(fig, p.profile, len(s.seeds), s.rounds)
            outputs.save_figure(fig, f"accuracy_vs_bits_{d}" + ("_augmented" if reg == "augmented" else ""))


def table_a1_tables(n: A.Table1Numbers) -> list:
    """Table A.1 per regime and (dataset, classes per client) whose runs are there (`n.a1_rows`), saved; the tables
    to show."""
    shown = []
    for reg, by in n.a1_rows.items():
        for (d, k), rows in by.items():
            print(f"{d}, {k} classes per client, {REGIME_WORDS[reg]}: threshold {n.a1[reg][(d, k)][1]:.0%} (every "
                  "method reaches it in every seed)")
            shown.append(outputs.save_table(rows, f"tableA1_{d}_{k}classes" + ("_augmented" if reg == "augmented"
                                                                               else "")))
    return shown


def augmentation_table(p: Table1Reads):
    """The augmentation ablation: with and without crop-and-flip, which lies nearer the paper; the table (or None)."""
    rows = []
    for d, read in p.augment.items():
        if not read.whole():
            print(read.note(what=f"the augmentation ablation ({d})"))
            continue
        pairs = {lab: {aug: read[(lab, aug)] for aug in (False, True)} for lab in AUGMENTED}
        rows += A.augmentation_rows(pairs, d, len(read.settings.seeds), read.settings.rounds)
    if not rows:
        return None
    nearer = [r.method for r in rows if r.nearer_the_paper == "with"]
    print(f"nearer the paper's number with augmentation: {', '.join(nearer) or 'none'}; without: "
          f"{', '.join(r.method for r in rows if r.nearer_the_paper != 'with') or 'none'} (the regime that decides "
          "the claims is picked by the rule of the section 'Which regime decides')")
    return outputs.save_table([r._asdict() for r in rows], "augmentation_ablation", keep_other=("dataset", "method"))


def beta_table(p: Table1Reads):
    """FedLog-C's second weight beta; the table (or None)."""
    table = None
    for d, read in p.beta.items():
        if not read.whole():
            print(read.note(what=f"the beta ablation ({d})"))
            continue
        rows, what = A.beta_rows(read.each(), d, len(read.settings.seeds), read.settings.rounds)
        print(what)
        table = outputs.save_table([r._asdict() for r in rows], "fedlog_c_beta_ablation", keep_other=("dataset", "beta"))
    return table


def _crosscheck_diagnostics(curves: dict, evaluations: int, stand_ins: list | None) -> None:
    """Beside the rule: ours against the mean of the authors' two streams, the whole-curve gap with seeds as the
    unit (and the same for their code against itself), and how often their own code passes the rule in our place."""
    both = feddbe_xcheck.versus_both_streams(curves)
    if both is not None:
        mean, edge = both
        print(f"  against the mean of the authors' first two streams: mean difference {mean[1:].min():+.2f} to "
              f"{mean[1:].max():+.2f} points over evaluations 1-{len(mean) - 1} (positive at "
              f"{int((mean[1:] > 0).sum())}), |mean| + t SE up to {edge.max():.2f}")
    for line in feddbe_xcheck.gap_lines(curves):
        print(line)
    if stand_ins is not None:
        passing = sorted(r.passing for r in stand_ins)
        print(f"  the authors' code in our place ({len(curves) - 1} of their streams, every assignment of "
              f"candidate, reference and floor partner): {passing[0]} to {passing[-1]} of {evaluations} "
              f"evaluations within their bound (median {np.median(passing):g}), "
              f"{sum(p == evaluations for p in passing)} of {len(passing)} assignments pass")


def crosscheck(path) -> None:
    """FedDBE against its authors' code: the paired equivalence test (TOST at 5%) and the curves, per model."""
    for model in feddbe_xcheck.models(path):
        curves = feddbe_xcheck.curves(path, model=model)
        eq = feddbe_xcheck.agreement(curves, bound=feddbe_xcheck.bound_at(curves))
        print(feddbe_xcheck.verdict_line(curves, model or "cnn_mnist_nodrop"))
        stand_ins = feddbe_xcheck.replicas(curves)
        _crosscheck_diagnostics(curves, len(eq.equivalent), stand_ins)
        names = {"authors": "FedDBE, the authors' code", "fedlib": "FedDBE, fedlib",
                 "authors_stream2": "FedDBE, the authors' code, another random stream"}
        panel = {names[side]: plots.Curve("feddbe", acc) for side, acc in curves.items() if side in names}
        fig = plots.accuracy_curves({f"MNIST, Table 1's federation, {model or 'cnn_mnist_nodrop'}": panel},
                                    "FedDBE: our code against its authors' (accuracy over all test samples)",
                                    ylabel="test accuracy, all samples (%)",
                                    xlabel="evaluation (after this many rounds of training)")
        plots.caption(fig, "crosscheck", eq.seeds, curves["fedlib"].shape[1] - 1, note="SGD 0.005, kappa 50, rho 1")
        outputs.save_figure(fig, "feddbe_crosscheck" + ("" if model in (None, "cnn_mnist_nodrop") else f"_{model}"))
        if stand_ins is not None:
            fig = replica_passes(stand_ins, int(eq.equivalent.sum()), len(eq.equivalent), model or "")
            plots.caption(fig, "crosscheck", eq.seeds, curves["fedlib"].shape[1] - 1,
                          note=f"{len(curves) - 1} streams of the authors' code per seed")
            outputs.save_figure(fig, f"feddbe_crosscheck_replicas_{model}")
    if not feddbe_xcheck.models(path):
        print(f"{path} is missing: run scripts/feddbe_crosscheck.py with a checkout of TsingZ0/DBE")
