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
