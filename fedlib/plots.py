"""One style for every figure, and the drawing pieces the papers' figures share (curves with their spread, sweeps,
scatters, bars, the caption line). The papers' own figures live in their packages; writing files, in `outputs`."""
from __future__ import annotations

from typing import NamedTuple


import matplotlib.pyplot as plt
import numpy as np


def style() -> None:
    """One theme for every figure: seaborn's, with text large enough to read at half width in the README."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.95)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "axes.spines.top": False,
                         "axes.spines.right": False, "legend.frameon": False, "grid.alpha": 0.5})


def mean_band(ax, x, runs, label: str, color=None, spread: str = "std", **line):
    """Plot the mean of `runs` [seeds, len(x)] with a band of +- std or +- standard error (`spread="se"`), drawn by
    seaborn's lineplot; `line`: more line styles (ls, lw, zorder)."""
    import pandas as pd
    import seaborn as sns

    runs = np.asarray(runs, float)
    long = pd.DataFrame({"x": np.tile(np.asarray(x), len(runs)), "y": runs.reshape(-1)})
    xlabel, ylabel = ax.get_xlabel(), ax.get_ylabel()
    band = None if len(runs) < 2 else ("sd" if spread == "std" else "se")
    sns.lineplot(data=long, x="x", y="y", ax=ax, label=label, color=color, errorbar=band,
                 err_kws={"alpha": 0.12, "lw": 0}, **line)
    if ax.get_legend() is not None:  # lineplot adds one per axis; the caller places the legend (ax or figure)
        ax.get_legend().remove()
    ax.set_xlabel(xlabel)  # lineplot names the axes after its columns: keep the caller's labels
    ax.set_ylabel(ylabel)


# ----------------------------------------------------------------------------- figures drawn from results

# How a method's curves look, registered by the papers that draw it (`fedlib.papers.registry.Paper.looks`): a
# method a figure is about gets its whole style (colour, line style, width and zorder: drawn thick and on top); any
# other gets its family's line style ({"ls": ...}; a solid line by default), and the colours go round in turn.
LOOKS: dict[str, dict] = {}
_BASELINE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                    "#17becf", "#393b79", "#637939", "#8c6d31"]  # tab10 without red, and darker extras


def add_looks(looks: dict[str, dict]) -> None:
    """Register how methods' curves look (LOOKS); a method given another look already is refused."""
    clash = [m for m, look in looks.items() if m in LOOKS and LOOKS[m] != look]
    if clash:
        raise ValueError(f"methods given two looks: {', '.join(clash)}")
    LOOKS.update(looks)


def method_styles(methods: dict[str, str]) -> dict[str, dict]:
    """Line styles for labelled methods ({label: method name}): a registered whole style as it is, else a colour per
    label in turn and the line style of the method's family (LOOKS)."""
    styles, k = {}, 0
    for label, method in methods.items():
        look = LOOKS.get(method, {})
        if "color" in look:
            styles[label] = dict(look)
        else:
            styles[label] = dict(color=_BASELINE_COLORS[k % len(_BASELINE_COLORS)], ls=look.get("ls", "-"), lw=1.3,
                                 zorder=3)
            k += 1
    return styles


def count(n: int, word: str) -> str:
    """"1 seed", "3 seeds"."""
    return f"{n} {word}{'s' if n != 1 else ''}"


def log_x(ax) -> None:
    """A log x axis labelled at its decades only (minor labels collide at half width)."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())


def caption(fig, profile: str, seeds, rounds, note: str = "") -> None:
    """The small line under every figure: which profile, how many seeds and rounds it shows (numbers, or text
    such as "2 seeds / 1 seed" for figures whose panels differ)."""
    import textwrap

    seeds_text = seeds if isinstance(seeds, str) else count(seeds, "seed")
    rounds_text = rounds if isinstance(rounds, str) else count(rounds, "round")
    text = f"{profile} profile · {seeds_text} · {rounds_text}" + (f" · {note}" if note else "")
    # wrapped to the figure's width (8-point characters about 0.6 of their size wide) and hung under it, so that a
    # long note makes the saved figure taller, never wider than its panels
    per_line = max(60, int(fig.get_figwidth() * 72 / (8 * 0.6)))
    fig.text(0.01, 0.0, textwrap.fill(text, per_line, break_on_hyphens=False), fontsize=8, color="0.35", ha="left",
             va="top")


class Curve(NamedTuple):
    """One method's curve over seeds: its method's name (its style), accuracy in % [seeds, rounds], and what to draw
    it against where not the round: `x` ([rounds], e.g. cumulative megabytes) or `bits` (cumulative bits a round)."""
    method: str
    acc: np.ndarray
    x: np.ndarray | None = None
    bits: np.ndarray | None = None


def accuracy_curves(panels: dict[str, dict[str, Curve]], title: str, spread: str = "se", xlabel: str = "global round",
                    log: bool = False, ylabel: str = "mean client accuracy (%)"):
    """Accuracy curves, one panel per name: panels[name][label] = a Curve; accuracy against rounds, mean +- `spread`,
    one panel per name (two columns when there are more than three). Against a curve's `x` where it has one, on a log
    axis if `log`. A label keeps its style in every panel, and the one legend lists every label. Returns the figure."""
    from matplotlib.ticker import MaxNLocator

    cols = len(panels) if len(panels) <= 3 else 2
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows + 0.6), squeeze=False)
    styles = method_styles({lab: c.method for by_label in panels.values() for lab, c in by_label.items()})
    for ax, (name, by_label) in zip(axes.flat, panels.items()):
        for lab, c in by_label.items():
            acc = np.asarray(c.acc, float)
            x = np.asarray(c.x, float) if c.x is not None else np.arange(1, acc.shape[1] + 1)
            marks = dict(marker="o", ms=3) if c.x is not None else {}  # one marker per round where x is not the round
            mean_band(ax, x, acc, lab, spread=spread, **styles[lab], **marks)
        ax.set(title=name, xlabel=xlabel, ylabel=ylabel)
        if log:
            log_x(ax)
        elif xlabel == "global round":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    legend = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            legend.setdefault(label, handle)
    fig.legend(list(legend.values()), list(legend), loc="lower center", ncol=min(len(legend), 5), fontsize=9,
               bbox_to_anchor=(0.5, 0.04 / rows))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0.13 / rows, 1, 1))  # the legend above the caption line (plots.caption, at the bottom)
    return fig


def parameter_sweep(panels: dict[str, dict[str, tuple]], xlabel: str, title: str, log: bool = True):
    """A sweep of one parameter (e.g. a layer's dimension, a penalty's weight): panels[name][series] = (x values, accuracy %, standard error or
    None); a series whose label starts with "paper" is drawn dashed with open markers. A zero on a log axis is drawn
    at the left edge and labelled so. Returns the figure."""
    fig, axes = plt.subplots(1, len(panels), figsize=(5.4 * len(panels), 4.2), squeeze=False)
    for ax, (name, series) in zip(axes[0], panels.items()):
        positive = [x for xs, _, _ in series.values() for x in xs if x > 0]
        zero_at = min(positive) / 4 if log and positive else 0.0
        for lab, (xs, ys, se) in series.items():
            xs = [x if x > 0 or not log else zero_at for x in xs]
            paper_line = lab.startswith("paper")
            ax.errorbar(xs, ys, yerr=se, label=lab, marker="o", ms=5, capsize=3, ls="--" if paper_line else "-",
                        mfc="white" if paper_line else None)
        if log:
            ax.set_xscale("log", base=2 if all(float(x).is_integer() for x in positive) else 10)
            if zero_at:
                ticks = sorted({zero_at, *positive})
                ax.set_xticks(ticks, ["0" if t == zero_at else f"{t:g}" for t in ticks], rotation=45)
        ax.set(title=name, xlabel=xlabel, ylabel="mean client accuracy (%)")
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return fig
