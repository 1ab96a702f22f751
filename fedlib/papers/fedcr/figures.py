"""Notebook 06's tables and figures, each from the reading of its part (`part.Read`): Table 2 with Ditto's second
reading (part A), Fig. 3(a-c) (B), Table 3 (C), Fig. 3(d) (D), Fig. 2 (E, from cached views: no runs), Table 9 (F),
FedCR in FedLog's Table 1 setting (G) and Ditto against its authors' code (H). Each saves what it draws under
figures/ (`outputs`) and returns its table or numbers; what is not there is named with the command that computes
it. Accuracies in percent."""
from __future__ import annotations


import matplotlib.pyplot as plt
import numpy as np

from ... import outputs, plots, stats
from ...result import COMPARE_UNITS, Result, compare
from .. import part
from . import analysis, plans, protocol
from .analysis import tables
from .analysis import final
from .plans import DITTO_AS_MAIN_FED, REAL
from .reported import TABLE2, TABLE3

# How FedCR's methods look in every figure (registered with the paper, `plots.LOOKS`): FedCR and FedCR-NA thick and
# on top, as FedLog's are in its notebooks; local training, which sends nothing, dashed.
LOOKS = {"fedcr": dict(color="#6a3d9a", ls="-", lw=2.4, zorder=6), "fedcr_na": dict(color="#b15928", ls="--", lw=2.4,
                                                                                   zorder=6), "local": dict(ls="--")}


def table2(n1, n2, lam, second) -> dict:
    """Part A: Table 2 from the readings of its n1 and n2 parts (Ditto at `lam`; None: the paper's per column),
    FedAvg before the fine-tune and FedAvg-FT (the same runs) after it, the paper beside, and (paper profile) Ditto's
    second reading (`second`); saved as fedcr_table2 (a method shipped in part over the seeds there, its `seeds`
    column says how many). Returns `analysis.tables.table2_runs`' table of the methods whole, which part B draws; the
    methods left out are named, with the command that computes them."""
    S = n1.settings
    table, absent, partial = tables.table2_runs(n1, n2)
    rows = []
    for (d, q), whole in table.items():
        if whole is None:
            continue
        keys, reported = dict(dataset=protocol.SHOWN[d], partition=q), TABLE2.get((protocol.PAPER_NAME[d], q), {})
        name = lambda lab: "FedBABU" if lab.startswith("FedBabu") else lab  # noqa: E731
        by_label = {**whole, **{lab: [r for r in rs if r is not None] for lab, rs in partial[(d, q)].items()}}
        fedavg = {"FedAvg": by_label["FedAvg"]} if "FedAvg" in by_label else {}
        rows += compare(fedavg, reported, quantity=Result.last, keys=keys)
        rows += compare({**({"FedAvg-FT": fedavg["FedAvg"]} if fedavg else {}),
                         **{lab: rs for lab, rs in by_label.items() if lab != "FedAvg"}},
                        reported, keys=keys, paper_name=name)
    for q in second.keys():  # the paper profile's n1 and n2
        if table.get((REAL, q)):
            rows += ditto_second_reading(second, table[(REAL, q)], q)
    rows += compare({}, {}, missing=[dict(dataset=protocol.SHOWN[d], partition=q) for d, q in plans.columns_missing(S)
                                     + [c for c, by_label in table.items() if by_label is None]] + absent)
    outputs.save_table(rows, "fedcr_table2", units=COMPARE_UNITS)
    return table


def ditto_second_reading(second, by_label: dict, partition: str) -> list[dict]:
    """Table 2's FashionMNIST row (n1 or n2: `partition`) of Ditto as the authors' main_fed.py runs it (FedAvg-FT
    with weight decay 0.001, `plans.DITTO_AS_MAIN_FED`), beside our Ditto (main_fed_ditto.py's) and the paper's
    number, and which of the two the paper's is nearer, over the seeds shipped (its `seeds` column; the claim reads
    them too); a line naming the command while its runs are not all shipped, [] while none is."""
    whole = second[partition]  # read once: each reading loads the runs
    results = whole or second.there(partition)
    if whole is None:
        print(second.note([partition], what=f"Table 2 (FashionMNIST {partition}): {DITTO_AS_MAIN_FED}",
                          drawn="drawn in part" if results else "not drawn"))
    if not results:
        return []
    reported = TABLE2[(REAL, partition)]
    rows = compare({DITTO_AS_MAIN_FED: results}, reported, keys=dict(dataset=protocol.SHOWN[REAL], partition=partition),
                   paper_name=lambda _: "Ditto")
    if "Ditto" in by_label:
        ours = compare({"Ditto": by_label["Ditto"]}, reported)[0]["final_mean"]
        second_mean, theirs = rows[0]["final_mean"], reported["Ditto"]
        nearer = DITTO_AS_MAIN_FED if abs(second_mean - theirs) < abs(ours - theirs) else "Ditto (main_fed_ditto.py)"
        print(f"The paper's Ditto on FashionMNIST {partition}, {theirs:.2f}: our Ditto (main_fed_ditto.py) {ours:.2f}, "
              f"{DITTO_AS_MAIN_FED} {second_mean:.2f} over {len(results)} seeds; the paper's number is nearer {nearer} "
              f"(by {abs(abs(second_mean - theirs) - abs(ours - theirs)):.2f} points)")
    return rows


def curves(table: dict, n1, lam) -> None:
    """Part B: Fig. 3(a-c), accuracy per round before the final fine-tune (the columns whose runs are there; `n1`:
    Table 2's n1 reading, whose profile and settings its caption gives)."""
    profile, S = n1.profile, n1.settings
    panels = {f"{protocol.SHOWN[d]} {q}": {lab: plots.Curve(protocol.METHODS[lab][0],
                                                            np.array([r.curve() for r in rs]) * 100)
                                           for lab, rs in by_label.items()}
              for (d, q), by_label in table.items() if by_label is not None}
    if not panels:
        print("Fig. 3(a-c): not drawn, Table 2's runs are not all there (see Table 2)")
        return
    fig = plots.accuracy_curves(panels, "FedCR's Fig. 3: mean client accuracy per round, before the final fine-tune "
                                        "(mean ± SE over seeds)")
    drawn = [(d, q) for (d, q), by_label in table.items() if by_label is not None]
    ditto = f"Ditto lambda {lam:g}" if lam is not None else "Ditto lambda the paper's per column: " + ", ".join(
        f"{protocol.SHOWN[d]} {q} {protocol.DITTO_LAM[(d, q)]:g}" for d, q in drawn)  # the paper profile: lam None
    plots.caption(fig, profile, len(S.seeds), plans.rounds_label(S, sorted({d for d, _ in drawn}), unit=True),
                  note=f"width {S.width}, V = {S.dim}, {ditto}")
    outputs.save_figure(fig, "fedcr_curves")


def _mean_se(per_seed: list) -> tuple[float, float, int]:
    there = [v for v in per_seed if v is not None]
    return *stats.mean_se(there), len(there)


def _series(table: dict, d: str):
    return tuple(zip(*[(v, *table[(dd, v)]) for dd, v in table if dd == d]))


def table3(per_seed: dict, dims):
    """Part C: Table 3, FedCR's final accuracy against V (n1); saved as fedcr_table3_dims and fedcr_dims. Returns
    the table (None where no V was run). `dims`: Table 3's reading, whose profile and settings it gives."""
    profile, S = dims.profile, dims.settings
    counted = {(d, v): _mean_se(f) for (name, d, v), f in per_seed.items() if name == "dim"}
    values = {key: (m, se) for key, (m, se, _) in counted.items()}
    rows = [{"dataset": protocol.SHOWN[d], "V": V, "final_mean": m, "final_se": se,
             "paper_accuracy": TABLE3.get(V, (float("nan"),) * 2)[0 if d == "mnist" else 1],
             "seeds": n, "rounds": plans.rounds_label(S, [d])} for (d, V), (m, se, n) in counted.items()]
    if not rows:
        return None
    table = outputs.save_table(rows, "fedcr_table3_dims")
    fig = plots.parameter_sweep(
        {protocol.SHOWN[d]: {"ours": _series(values, d),
                             "paper": (list(TABLE3), [v[0 if d == "mnist" else 1] for v in TABLE3.values()], None)}
         for d in sorted({d for d, _ in values})}, "Gaussian dimension V", "FedCR's Table 3: final accuracy against V "
        "(n1)")
    plots.caption(fig, profile, len(S.seeds), plans.rounds_label(S, sorted({d for d, _ in values}), unit=True),
                  note=f"width {S.width}")
    outputs.save_figure(fig, "fedcr_dims")
    return table


def betas(per_seed: dict, betas, costs: dict | None = None):
    """Part D: Fig. 3(d), FedCR's final accuracy against beta (n1); saved as fedcr_beta. Returns the table. Without
    runs at any scale, one line with the set's command and its cost (`costs`: `accounting.measured_costs()`).
    `betas`: Fig. 3(d)'s reading, whose profile and settings it gives."""
    profile, S = betas.profile, betas.settings
    counted = {(d, v): _mean_se(f) for (name, d, v), f in per_seed.items() if name == "beta"}
    by_beta = {key: (m, se) for key, (m, se, _) in counted.items()}
    rows = [{"dataset": protocol.SHOWN[d], "beta": b, "final_mean": m, "final_se": se, "seeds": n,
             "rounds": plans.rounds_label(S, [d])} for (d, b), (m, se, n) in counted.items()]
    if not rows:
        print(f"Fig. 3(d): no scale here has its runs; at the paper's scale they are the set {plans.BETAS.name}, "
              f"{part.cost_text(plans.BETAS.name, costs or {})}; {plans.BETAS.command()} computes them")
        return None
    table = outputs.save_table(rows, "fedcr_beta")
    fig = plots.parameter_sweep({protocol.SHOWN[d]: {"ours": _series(by_beta, d)}
                                 for d in sorted({d for d, _ in by_beta})}, "beta (weight of the KL term)",
                                "FedCR's Fig. 3(d): final accuracy against beta (n1; the paper gives no numbers)")
    plots.caption(fig, profile, len(S.seeds), plans.rounds_label(S, sorted({d for d, _ in by_beta}), unit=True),
                  note=f"V = {S.dim}")
    outputs.save_figure(fig, "fedcr_beta")
    return table


def fig2(views) -> None:
    """Part E: the 2-D Gaussian means of one client's MNIST test images, beta = 0 against 5e-4, n1 and n2, from the
    reading of `plans.FIG2` (a derived part: each view trained, then one client trains on), each with the silhouette
    of its means by class (`analysis.silhouettes`), drawn (not where MNIST is not here)."""
    profile, f2 = views.profile, views.settings.fig2
    if not views.keys():
        return
    if not views.whole():
        print(f"Fig. 2: not drawn, its views are not cached or shipped and the {profile} profile computes "
              f"nothing; compute them with `scripts/fedcr_fig2_views.py --profile {profile}`, then ship them "
              f"with `--pack`")
        return
    silhouettes, scatter = analysis.silhouettes(views), {}
    for q, beta in views.keys():
        v = views[(q, beta)][0]
        scatter[f"{q}, beta = {beta:g} (client {v.client}, {v.classes} classes)"] = (v.mu, v.y, silhouettes[(q, beta)])
        print(f"Fig. 2 {q} beta={beta:g}: silhouette {silhouettes[(q, beta)]:.3f} over {len(v.y)} test images")
    fig = feature_scatter(scatter, "FedCR's Fig. 2: Gaussian means (V = 2) of one client's MNIST test images")
    plots.caption(fig, profile, 1, f2.rounds, note=f"then {f2.epochs} local epochs at the client shown")
    outputs.save_figure(fig, "fedcr_fig2_features")


def table9(read) -> None:
    """Part F: no model aggregation on FashionMNIST with k classes per client (`analysis.tables.table9_runs` names
    what is missing); saved as fedcr_table9_nonaggregate, where an entry shipped in part shows the seeds that are
    there (its `seeds` column says how many)."""
    S = read.settings
    if not read.keys():
        return
    tables.table9_runs(read)
    shown = {key: read.there(key) for key in [(k, lab) for k in S.table9.ks for lab in protocol.NONAGGREGATE]}
    rows = [{"classes_per_client": k, "method": lab, **dict(zip(("final_mean", "final_se"),
                                                                stats.mean_se([final(r) for r in rs]))),
             "total_bits": rs[0].total_bits(), "seeds": len(rs), "rounds": S.table9.rounds}
            for (k, lab), rs in shown.items() if rs]
    if rows:
        outputs.save_table(rows, "fedcr_table9_nonaggregate",
                           units={"final_mean": "%", "final_se": "%", "total_bits": "bits"})


def seed_systems(systems, baselines) -> None:
    """Part G: FedCR and FedCR-NA in FedLog's MNIST Table 1 setting beside FedAvg, FedPer, FedProto and FedLog-C
    (`analysis.tables.seed_system_runs`: their shipped paper-setting runs, read for their first rounds); saved."""
    from ..fedlog import THRESHOLD

    t1 = tables.seed_system_runs(systems, baselines)
    if not t1:
        return
    g = systems.settings
    rows = [{**r._asdict(), "seeds": len(g.seeds), "rounds": g.rounds}
            for r in stats.table_rows(t1, THRESHOLD["mnist"], reference="FedLog-C")]
    outputs.save_table(rows, "table1_mnist_seed_systems_fedcr", units=stats.TABLE_UNITS)


def ditto_crosscheck(path) -> None:
    """Part H: our Ditto against the FedCR authors' `main_fed_ditto.py` on our clients (scripts/fedcr_crosscheck.py's
    CSV at `path`, its settings beside it in .json): notebook 02's paired equivalence rule at every evaluation, the
    gap over the whole curve with seeds as the unit (and their code against itself), and the curves, drawn (the
    claims read the same file: `analysis.tables.against_their_code`)."""
    _against_their_code(path, "Ditto", "acc_mean", "the FedCR authors' code", "scripts/fedcr_crosscheck.py "
                               "with a checkout of haozzh/FedCR", "personal models", "fedcr_ditto_crosscheck",
                               lambda s: f"lr 0.1, lambda 0.001, {10 if s.local_epochs is None else s.local_epochs} local epochs",
                               "evaluation (after this many rounds; the last after their final round)", first=0)


def fedpac_crosscheck(path) -> None:
    """Part H: our FedPAC against PFLlib's (its clientpac.py and serverpac.py) on our clients
    (scripts/fedpac_crosscheck.py's CSV at `path`): the same rule and drawing as Ditto's, on the pooled accuracy."""
    _against_their_code(path, "FedPAC", "acc_all", "PFLlib's code", "scripts/fedpac_crosscheck.py with a "
                               "checkout of TsingZ0/PFLlib", "pooled test accuracy", "fedcr_fedpac_crosscheck",
                               lambda s: f"lr {s.lr:g}, lambda 1, {s.local_epochs} local epochs",
                               "rounds", first=1, ylabel="pooled test accuracy (%)")


def _against_their_code(path, method, metric, theirs, command, what, stem, note, xlabel, first: int,
                        ylabel: str | None = None) -> None:
    """A cross-check of `method` against another code's (`theirs`) from its CSV at `path`: its setting printed, the
    rule's verdict and gaps, the curves drawn (the first evaluation at x = `first`) and saved as `stem`."""
    from ..fedlog.analysis import crosscheck as xc

    curves_, setting = tables.against_their_code(path, method, metric)
    if not curves_:
        print(f"{path} is missing: run {command}")
        return
    print(f"{method}'s cross-check: {setting.clients} clients, {setting.participation:.0%} of them a round, "
          f"{setting.rounds} rounds; {theirs} at commit {setting.authors_commit[:7]}; ours: {setting.our_config}")
    eq = xc.agreement(curves_, bound=xc.bound_at(curves_))
    for line in [xc.verdict_line(curves_, method), *xc.gap_lines(curves_)]:
        print(line)
    names = {"fedlib": f"{method}, fedlib", "authors": f"{method}, {theirs}",
             "authors_stream2": f"{method}, {theirs}, another random stream"}
    panel = {names[side]: plots.Curve(method.lower(), acc, x=np.arange(first, first + acc.shape[1]))
             for side, acc in curves_.items() if side in names}
    where = f"FashionMNIST n1, {setting.clients} clients, {setting.participation:.0%} of them a round, width {setting.width}"
    fig = plots.accuracy_curves({where: panel}, f"{method}: our code against {theirs} ({what})", xlabel=xlabel,
                                **({"ylabel": ylabel} if ylabel else {}))
    plots.caption(fig, "crosscheck", eq.seeds, setting.rounds, note=note(setting))
    outputs.save_figure(fig, stem)


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
