"""FedLog's own figures, drawn from what its notebooks computed: accuracy against bits (Table 1, notebook 02), the
DP trade-off (03), Fig. 1's panels (01), rounds and bits to a target (05) and Thm. 4's step sizes (05). Each returns
the figure; `outputs.save_figure` writes it."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...plots import LABELS, PALETTE, count, log_x, mean_band, method_styles


def accuracy_vs_bits(curves: dict[str, dict], threshold: float, title: str, zoom: tuple[float, float] = (90, 100)):
    """Table 1's curves. curves[label] = {"method": name, "bits": cumulative bits per round [R], "acc": accuracy in
    % per seed and round [S, R]}. Panels: accuracy against cumulative bits (log), against rounds, and against
    rounds zoomed to `zoom` (where the ranking the tables discuss lies). Returns the figure."""

    styles = method_styles({lab: c["method"] for lab, c in curves.items()})
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    for lab, c in curves.items():
        acc = np.asarray(c["acc"], float)
        rounds = np.arange(1, acc.shape[1] + 1)
        axes[0].plot(c["bits"], acc.mean(0), label=lab, **styles[lab])
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

def dp_accuracy(panels: dict[str, dict], title: str):
    """Fig. 3 right. panels[dataset] = {"no_dp": accuracy, "series": {label: {"eps": [...], "mean": [...],
    "se": [...], "seeds": n, "color": ..., "ls": ..., "marker": ...}}, "marks": {label: (epsilon, color)}} (marks
    optional: vertical lines). A series with one seed or at most three
    budgets says so in its label and is drawn without joining lines (nothing was measured between its points).
    Every panel shares one accuracy range. Returns the figure."""

    fig, axes = plt.subplots(1, len(panels), figsize=(5.8 * len(panels), 4.8), squeeze=False, sharey=True)
    for ax, (name, p) in zip(axes[0], panels.items()):
        ax.axhline(p["no_dp"], color="k", ls=":", label="no DP")
        for label, (eps, color) in p.get("marks", {}).items():  # an epsilon to read the curves at, as a line
            ax.axvline(eps, color=color, ls=(0, (1, 3)), lw=1.2, label=label)
        for label, s in p["series"].items():
            sparse = s["seeds"] < 2 or len(s["eps"]) <= 3
            mark = " (" + ", ".join(t for t, bad in ((count(s["seeds"], "seed"), s["seeds"] < 2),
                                                    (count(len(s["eps"]), "budget"), len(s["eps"]) <= 3)) if bad) + ")"
            mean, se = np.asarray(s["mean"], float), np.asarray(s["se"], float)
            if sparse:  # points with error bars: nothing was measured between them
                ax.errorbar(s["eps"], mean, yerr=se, color=s["color"], ls="none", marker=s["marker"], ms=5, capsize=2,
                            label=label + mark)
            else:
                ax.plot(s["eps"], mean, color=s["color"], ls=s["ls"], marker=s["marker"], ms=4, label=label)
                ax.fill_between(s["eps"], mean - se, mean + se, color=s["color"], alpha=0.12, lw=0)
        ax.set_xscale("log")
        ax.set_xlabel("privacy budget ε")
        ax.set_ylabel("mean client accuracy (%)")
        ax.set_title(name, fontsize=10)
        ax.legend(fontsize=7, handlelength=3.2, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)  # below: never on the data
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
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
    test = {m: np.asarray(a["test"], float) for m, a in acc.items()}
    for m in acc:
        mean_band(axes[1, 1], iters, 100 * test[m], LABELS.get(m, m), color=PALETTE.get(m), spread="se")
        if m != "fedlog":
            mean_band(axes[1, 2], iters, 100 * (test[m] - test["fedlog"]), f"{LABELS.get(m, m)} − FedLog",
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
    """Fig. 2 / Fig. 3 left. by_dataset[d][label] = {"method": name, "acc": accuracy in % [seeds, rounds], "bits":
    cumulative bits per round}. Top: accuracy against rounds (mean ± `spread`); bottom: against cumulative bits.
    `verdict`, computed by the caller from the numbers, is printed under the title. Returns the figure."""
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(2, len(by_dataset), figsize=(5.8 * len(by_dataset), 7.8), squeeze=False)
    for j, (d, by_label) in enumerate(by_dataset.items()):
        for lab, c in by_label.items():
            acc = np.asarray(c["acc"], float)
            color = PALETTE.get(c["method"])
            mean_band(axes[0, j], np.arange(1, acc.shape[1] + 1), acc, lab, color=color, spread=spread)
            axes[1, j].plot(c["bits"], acc.mean(0), marker=".", label=lab, color=color)
        seeds = len(np.asarray(next(iter(by_label.values()))["acc"]))
        axes[0, j].set(title=f"{d} ({count(seeds, 'seed')})", xlabel="global round", ylabel="mean client accuracy (%)")
        axes[0, j].xaxis.set_major_locator(MaxNLocator(integer=True))
        log_x(axes[1, j])
        axes[1, j].set(xlabel="cumulative bits (up + down, all clients)", ylabel="mean client accuracy (%)")
        for ax in axes[:, j]:
            ax.legend(fontsize=8)
    fig.suptitle(title + (f"\n{verdict}" if verdict else ""), fontsize=11)
    fig.tight_layout()
    return fig

def step_sizes(study: dict[float, dict], bound_note: str = ""):
    """Thms. 3-5 measured. study[zeta] = per-round traces {"loss_before", "loss_after": [rounds][clients],
    "grad_norm", "smoothness": [rounds][clients], "diverged_round": int (if it diverged)}. Panels: the median
    relative change of the clients' local loss per round (linear, in [-1, 1]; a run that diverged is marked x where
    it stops), the mean squared body gradient norm, and the largest smoothness estimate L1 with, in the same colour,
    the line L1 = 2/zeta: a step size is inside Thm. 4's bound while its L1 curve stays below its line."""
    from matplotlib.ticker import MaxNLocator

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(16, 4.6))
    colors = plt.get_cmap("tab10").colors
    for i, (zeta, tr) in enumerate(study.items()):
        color, n = colors[i % len(colors)], len(tr["loss_after"])
        if n == 0:
            ax1.plot([], [], color=color, label=f"ζ = {zeta:g} (diverged in round 1)")
            continue
        r = np.arange(1, n + 1)
        before, after = np.array(tr["loss_before"][:n], float), np.array(tr["loss_after"], float)
        change = np.clip(np.median((after - before) / np.maximum(before, 1e-12), axis=1), -1, 1)
        diverged = "diverged_round" in tr and tr["diverged_round"] not in (None, "-")
        ax1.plot(r, change, marker=".", color=color,
                 label=f"ζ = {zeta:g}" + (f" (diverged in round {tr['diverged_round']})" if diverged else ""))
        if diverged:
            ax1.plot(r[-1], change[-1], marker="x", ms=10, mew=2, color=color)
        ax2.plot(np.arange(1, len(tr["grad_norm"]) + 1), np.mean(np.square(tr["grad_norm"]), axis=1), marker=".",
                 color=color, label=f"ζ = {zeta:g}")
        ax3.plot(np.arange(1, len(tr["smoothness"]) + 1), np.max(tr["smoothness"], axis=1), marker=".", color=color,
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


def stand_in(datasets, paper_data: dict[str, str]) -> str:
    """What a caption says of the data: "mnist and fashion_mnist stand in for the paper's CIFAR-10" for the datasets
    shown that are not the paper's (`paper_data`: our name -> the paper's), "" when every one is."""
    others = [d for d in datasets if d not in paper_data]
    if not others:
        return ""
    return f"{' and '.join(others)} stand{'s' if len(others) == 1 else ''} in for the paper's " + \
        " and ".join(paper_data.values())
