"""FedRD's notebook's own figure: FedNova's objective-inconsistency toy (spec 2.5). Returns the figure;
`outputs.save_figure` writes it."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def objective_inconsistency(paths: dict[str, np.ndarray], fixed_points: dict[str, np.ndarray], centers: np.ndarray,
                            title: str):
    """FedNova's toy (spec 2.5): left, the global model's path in 2-D per method (paths[label] [rounds + 1, 2]) with
    its closed-form fixed point (fixed_points[label], a star), the clients' optima and the true minimiser (their
    mean); right, the distance to the true minimiser against rounds (log scale). Returns the figure."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    colors = plt.get_cmap("tab10").colors
    truth = np.asarray(centers, float).mean(0)
    ax1.scatter(*np.asarray(centers, float).T, marker="s", color="0.4", label="clients' optima")
    ax1.scatter(*truth, marker="X", s=90, color="black", label="true minimiser", zorder=5)
    for i, (lab, path) in enumerate(paths.items()):
        path = np.asarray(path, float)
        ax1.plot(path[:, 0], path[:, 1], color=colors[i], label=lab)
        if lab in fixed_points:
            ax1.scatter(*np.asarray(fixed_points[lab], float), marker="*", s=140, color=colors[i],
                        edgecolor="black", label=f"{lab}: fixed point (closed form)", zorder=6)
        ax2.plot(np.arange(len(path)), np.linalg.norm(path - truth, axis=1), color=colors[i], label=lab)
    ax1.set(xlabel="$x_1$", ylabel="$x_2$", title="the global model's path")
    ax2.set(xlabel="global round", ylabel="distance to the true minimiser", yscale="log",
            title="distance to the true minimiser")
    ax1.legend(fontsize=7)
    ax2.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig


def ladder(points: dict[tuple, dict], baselines: dict[str, dict], panels: list[str], title: str):
    """FedRD's ladder: accuracy against the matching steps T (log scale), one panel per quantity in `panels` (e.g.
    "after the last round", "after round 1"). points[(method, init)][panel] = (Ts, means, SEs) for the rungs shipped
    (real initialisation solid, random dashed); baselines[label][panel] = (mean, SE), drawn as a level line with its
    band, since their runs have no T. Returns the figure."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 5.2), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    order = ["FedDM", "FedRD", "FedAvg", "FedProx", "FedNova"]  # one colour per method, whatever is shipped yet
    order += sorted(({m for m, _ in points} | set(baselines)) - set(order))
    color_of = {m: colors[i % len(colors)] for i, m in enumerate(order)}
    steps = sorted({t for by_panel in points.values() for ts, _, _ in by_panel.values() for t in ts})
    for ax, panel in zip(axes[0], panels):
        for (method, init), by_panel in points.items():
            ts, means, ses = by_panel[panel]
            ax.errorbar(ts, means, yerr=ses, marker="o", ms=5, capsize=3, color=color_of[method],
                        ls="-" if init == "real" else "--", mfc=None if init == "real" else "white",
                        label=f"{method}, {init} initialisation")
        for lab, by_panel in baselines.items():
            mean, se = by_panel[panel]
            color = color_of[lab]
            ax.axhline(mean, color=color, ls=":", lw=1.5, label=f"{lab} (no T)")
            ax.axhspan(mean - se, mean + se, color=color, alpha=0.12, lw=0)
        ax.set_xscale("log")
        if steps:
            ax.set_xticks(steps, [str(t) for t in steps])
            ax.minorticks_off()
        ax.set(title=panel, xlabel="matching steps T per round (log scale)", ylabel="mean client accuracy (%)")
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8,
               bbox_to_anchor=(0.5, 0.04))  # one legend, under the panels and above the caption
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.15, 1, 1))
    return fig
