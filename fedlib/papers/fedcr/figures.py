"""FedCR's own figure: Fig. 2's scatters of the Gaussian means (notebook 06). Returns the figure;
`outputs.save_figure` writes it."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def feature_scatter(panels: dict[str, tuple], title: str):
    """FedCR's Fig. 2: panels[name] = (2-D Gaussian means [n, 2], labels [n], silhouette score); one colour per
    class, the score in the panel's title. Returns the figure."""
    n = len(panels)
    cols = 2 if n > 1 else 1
    fig, axes = plt.subplots((n + cols - 1) // cols, cols, figsize=(5.0 * cols, 4.4 * ((n + cols - 1) // cols)),
                             squeeze=False)
    colors = plt.get_cmap("tab10").colors
    for ax, (name, (mu, y, score)) in zip(axes.flat, panels.items()):
        mu, y = np.asarray(mu), np.asarray(y)
        for c in np.unique(y):
            ax.scatter(mu[y == c, 0], mu[y == c, 1], s=12, alpha=0.75, color=colors[int(c) % 10], label=f"class {c}")
        ax.set(title=f"{name}\nsilhouette by class {score:.2f}", xlabel="$\\mu_1(x)$", ylabel="$\\mu_2(x)$")
        ax.legend(fontsize=7, markerscale=1.5, ncol=2)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
