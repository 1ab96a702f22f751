"""One style for every figure; every figure saved as .png and .pdf, every table as .md, .csv and .tex."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from . import provenance
from .paths import active_profile, figures_dir

PALETTE = {"fedlog": "#d62728", "fedlog_c": "#000000", "fedavg": "#7f7f7f", "lg_fedavg": "#1f77b4",
           "fedproto": "#2ca02c"}
LABELS = {"fedlog": "FedLog", "fedlog_c": "FedLog-C", "fedavg": "FedAvg", "lg_fedavg": "LG-FedAvg",
          "fedproto": "FedProto"}


def style() -> None:
    """One theme for every figure: seaborn's, with text large enough to read at half width in the README."""
    import seaborn as sns

    sns.set_theme(context="notebook", style="whitegrid", font_scale=0.95)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 150, "axes.spines.top": False,
                         "axes.spines.right": False, "legend.frameon": False, "grid.alpha": 0.5})


def output_name(name: str) -> str:
    """The file name a figure or table is saved under: in the paper profile it ends in `_paper`, so the paper
    profile and the quick one never overwrite each other's files (smoke writes under build/smoke/)."""
    if active_profile() == "paper":
        return name if name.endswith("_paper") else f"{name}_paper"
    if name.endswith("_paper"):
        raise ValueError(f"{name}: names ending in _paper belong to the paper profile, and this is "
                         f"{active_profile() or 'no profile'}; save it under its plain name")
    return name


def save_figure(fig, name: str) -> list[Path]:
    """Save as name.png and name.pdf under figures/; the figure must carry its `caption` line."""
    if not any(" profile · " in t.get_text() for t in fig.texts):
        raise ValueError(f"{name}: call plots.caption(fig, profile, seeds, rounds) first: every figure says which "
                         f"profile, seeds and rounds it shows")
    name = output_name(name)
    out = figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    fig.savefig(paths[0], bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight", metadata={"CreationDate": None})  # same figure, same bytes
    return paths


def _cell(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _value(text: str):
    """A CSV cell as the number it was written from (int or float), else the text: a table merged with rows read
    back from its CSV formats them as it formats fresh ones."""
    if not isinstance(text, str):  # a short row's missing cell (None) stays as it is
        return text
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if str(value) == text:  # only where writing it back gives the same text ("86.30" stays text)
            return value
    return text


PROVENANCE = "provenance.json"  # beside the tables: table name -> the code fingerprints and devices of its runs


def record_provenance(name: str, made_by: dict) -> Path:
    """Write `made_by` ({"code", "device"}) for table `name` into figures/provenance.json (read, merged and replaced
    atomically under a lock): where a table's rows come from, in one file instead of a column on every row, so a
    rerun that changes no number changes no table."""
    import fcntl
    import json

    out = figures_dir()
    path = out / PROVENANCE
    with open(out / f".{PROVENANCE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            known = json.loads(path.read_text()) if path.exists() else {}
        except ValueError:
            known = {}  # a damaged sidecar holds no number: start it anew
        known[name] = made_by
        tmp = out / f".tmp-{PROVENANCE}"
        tmp.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
        tmp.replace(path)
    return path


def save_table(rows: list[dict], name: str, keep_other: str | tuple | None = None):
    """rows: one dict per row, same keys. Returns the table written, as a pandas DataFrame (a notebook cell that ends
    with it renders it), its files in `.attrs["paths"]`. Writes name.csv, and name.md and name.tex by pandas, under
    figures/ (a "profile" column is added when the rows have none; the paper profile's names end in `_paper`, see
    `output_name`). When the notebook has read runs, the fingerprints and devices they were made with (all runs
    the notebook read so far: a superset of the table's own) go to figures/provenance.json under `name`.
    `keep_other="dataset"` (or a tuple of columns): rows of the existing name.csv (same columns) whose key is
    not among the new rows' keep their places (a notebook run on some datasets does not erase the others' rows)."""
    import csv

    import pandas as pd

    name = output_name(name)
    out = figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    if active_profile() and "profile" not in rows[0]:  # every table says which profile made it
        rows = [{**r, "profile": active_profile()} for r in rows]
    cols = list(rows[0])
    if keep_other and (out / f"{name}.csv").exists():
        with open(out / f"{name}.csv", newline="") as f:
            old = [{k: _value(v) for k, v in r.items()} for r in csv.DictReader(f) if list(r) == cols]
        cols_key = (keep_other,) if isinstance(keep_other, str) else tuple(keep_other)
        key = lambda r: tuple(str(r[c]) for c in cols_key)  # noqa: E731
        if len({key(r) for r in rows}) < len(rows):
            raise ValueError(f"keep_other={keep_other!r} must tell the new rows of {name} apart; add columns to it")
        merged: dict = {}
        for r in old:  # one row per key, in the old order (a file written by an older, buggier run may repeat keys)
            merged.setdefault(key(r), r)
        merged.update({key(r): r for r in rows})
        rows = list(merged.values())
    with open(out / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    table = pd.DataFrame(rows, columns=cols)
    shown = table.map(_cell)  # every number to 4 significant digits, as text, so pandas writes what it is given
    (out / f"{name}.md").write_text(shown.to_markdown(index=False, disable_numparse=True) + "\n")
    (out / f"{name}.tex").write_text(shown.to_latex(index=False, escape=True))
    made_by = provenance.read_so_far()  # the code fingerprints and devices of the runs behind it
    if made_by:
        record_provenance(name, made_by)
    table.attrs["paths"] = [out / f"{name}.{ext}" for ext in ("csv", "md", "tex")]
    return table


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

# Table 1's methods by family: the line style says the family, the colour the method; FedLog and FedLog-C are
# drawn thick and on top, FedLog red and solid, FedLog-C black and dashed, so one never hides the other.
FAMILIES = {"shared model": ("-", ["fedavg", "fedbabu", "csfl", "feddbe"]),
            "personal layers": ("-.", ["lg_fedavg", "fedper", "fedrep"]),
            "prototypes": (":", ["fedproto"]),
            "FedLog": ("-", ["fedlog", "fedlog_c"]),
            "Gaussian representation": ("-", ["fedcr", "fedcr_na"]),
            "no communication": ("--", ["local"])}
_BASELINE_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                    "#17becf", "#393b79", "#637939", "#8c6d31"]  # tab10 without red, and darker extras


def method_styles(methods: dict[str, str]) -> dict[str, dict]:
    """Line styles for labelled methods ({label: method name}): colour per label, line style per family."""
    styles, k = {}, 0
    for label, method in methods.items():
        family = next((f for f, (_, ms) in FAMILIES.items() if method in ms), "shared model")
        if method == "fedlog":
            styles[label] = dict(color=PALETTE["fedlog"], ls="-", lw=2.4, zorder=5)
        elif method == "fedlog_c":
            styles[label] = dict(color=PALETTE["fedlog_c"], ls="--", lw=2.0, zorder=6)
        elif method in ("fedcr", "fedcr_na"):  # FedCR's notebook: its method drawn thick and on top, like FedLog
            styles[label] = dict(color="#6a3d9a" if method == "fedcr" else "#b15928", ls="-" if method == "fedcr"
                                 else "--", lw=2.4, zorder=6)
        else:
            styles[label] = dict(color=_BASELINE_COLORS[k % len(_BASELINE_COLORS)], ls=FAMILIES[family][0], lw=1.3,
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
    seeds_text = seeds if isinstance(seeds, str) else count(seeds, "seed")
    rounds_text = rounds if isinstance(rounds, str) else count(rounds, "round")
    fig.text(0.01, 0.005, f"{profile} profile · {seeds_text} · {rounds_text}" + (f" · {note}" if note else ""),
             fontsize=8, color="0.35", ha="left", va="bottom")


def accuracy_vs_bits(curves: dict[str, dict], threshold: float, title: str, zoom: tuple[float, float] = (90, 100)):
    """Table 1's curves. curves[label] = {"method": name, "bits": cumulative bits per round [R], "acc": accuracy in
    % per seed and round [S, R]}. Panels: accuracy against cumulative bits (log), against rounds, and against
    rounds zoomed to `zoom` (where the ranking the tables discuss lies). Returns the figure."""
    import matplotlib.pyplot as plt

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
    "se": [...], "seeds": n, "color": ..., "ls": ..., "marker": ...}}}. A series with one seed or at most three
    budgets says so in its label and is drawn without joining lines (nothing was measured between its points).
    Every panel shares one accuracy range. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(5.8 * len(panels), 4.8), squeeze=False, sharey=True)
    for ax, (name, p) in zip(axes[0], panels.items()):
        ax.axhline(p["no_dp"], color="k", ls=":", label="no DP")
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

def accuracy_curves(panels: dict[str, dict[str, dict]], title: str, spread: str = "se", xlabel: str = "global round",
                    log: bool = False, ylabel: str = "mean client accuracy (%)"):
    """Fig. 3(a-c) of FedCR: panels[name][label] = {"method": name, "acc": accuracy in % [seeds, rounds]}; accuracy
    against rounds, mean +- `spread`, one panel per name (two columns when there are more than three). With "x"
    ([rounds], e.g. cumulative megabytes) in a series, against that, on a log axis if `log`. A label keeps its
    style in every panel, and the one legend lists every label. Returns the figure."""
    from matplotlib.ticker import MaxNLocator

    cols = len(panels) if len(panels) <= 3 else 2
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.0 * rows + 0.6), squeeze=False)
    styles = method_styles({lab: c["method"] for by_label in panels.values() for lab, c in by_label.items()})
    for ax, (name, by_label) in zip(axes.flat, panels.items()):
        for lab, c in by_label.items():
            acc = np.asarray(c["acc"], float)
            x = np.asarray(c["x"], float) if "x" in c else np.arange(1, acc.shape[1] + 1)
            marks = dict(marker="o", ms=3) if "x" in c else {}  # one marker per round where x is not the round
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
    """A sweep of one parameter (FedCR's V, beta): panels[name][series] = (x values, accuracy %, standard error or
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


# ----------------------------------------------------------------------------------------------- FedRD's notebook (07)

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
