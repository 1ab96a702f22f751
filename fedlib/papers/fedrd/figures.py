"""Notebook 07's tables and figures, each from the reading of its part (`part.Read`): Table I (part A), Figs. 2-3
(B), Table III (C), the dpc, d' and depth sweeps (D-F, stand-ins for Fig. 4, Table IV and Fig. 5), the ladder (G)
and FedNova's toy (H). Each saves what it draws under figures/ (`outputs`) and returns its table or numbers; a part
whose runs are not all there is not drawn, and the notebook says which command computes them. Accuracies in
percent."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import outputs, plots, stats
from ...result import COMPARE_UNITS, MB, Result, compare
from . import analysis
from .analysis import after_round_one, final
from .plans import (LADDER, LADDER_PART, REAL, TOY, Toy, by_label, datasets_here, initialisations,
                    rung_label, swept)
from .protocol import METHODS, PAPER_NAME, SHOWN
from .reported import TABLE1, TABLE3

CUT = "cut from the quick profile to fit its 10 minutes (a FedRD run costs about 4 minutes here); smoke and paper run it"


def table1(table1, ladder=None):
    """Part A: Table I, final accuracy (mean +- SE) beside the paper's mean +- std, the uplink per client and the
    ledger's total; the datasets not here named; saved as fedrd_table1. Where the profile draws no dataset and the
    ladder's reading (part G's, `ladder`) has its top rung shipped, Table I is shown at that best scale with runs,
    labelled in its dataset column (reduced: ConvNet-32, 10% of FashionMNIST; FedDM and FedRD at the most matching
    steps, initialised from real samples)."""
    from ... import experiments as ex

    profile, rows, undrawn = table1.settings, [], []
    here = datasets_here(profile)
    for d in profile.datasets:
        if d not in here:
            ex.dataset_available(d)  # says why its files are missing
    for d in here:
        runs = by_label(table1, d)
        if runs is None:
            print(table1.note([k for k in table1.keys() if k[0] == d], f"Table I ({SHOWN[d]})"))
            undrawn.append(d)
            continue
        for row in compare(runs, TABLE1.get(PAPER_NAME[d], {}), quantity=Result.last, keys=dict(dataset=SHOWN[d])):
            rs = runs[row["method"]]
            rows.append({**row, "uplink_MB_per_client": rs[0].uplink_mb()[-1],
                         "ledger_MB_total": rs[0].total_bits() / MB})
    if not rows and ladder is not None:
        rows = _ladder_rows(ladder)
    missing = [d for d in profile.datasets if d not in here] + ["svhn"] + undrawn  # SVHN has no loader here
    rows += [{**row, "uplink_MB_per_client": float("nan"), "ledger_MB_total": float("nan")} for row in
             compare({}, {}, with_std=True, missing=[dict(dataset=SHOWN.get(d, d.upper())) for d in missing])]
    return outputs.save_table(rows, "fedrd_table1", units=COMPARE_UNITS)


def _ladder_rows(ladder) -> list[dict]:
    """Table I's rows at the ladder's top rung (part G's shipped runs), the paper's FashionMNIST numbers beside; none
    when a run group of it is not shipped."""
    top = max(LADDER.steps)
    runs = {lab: ladder[(lab, top, "real") if METHODS[lab][0] in ("feddm", "fedrd") else (lab, None, None)]
            for lab in METHODS}
    if any(rs is None for rs in runs.values()):
        return []
    where = f"FashionMNIST, the ladder at T = {top} (reduced; part G)"
    print(f"Table I at the paper's scale has no runs yet; shown below at the best scale that has them: {rung_label(top)}, "
          f"{len(ladder.settings.seeds)} seeds, the paper's FashionMNIST numbers beside")
    return [{**row, "uplink_MB_per_client": runs[row["method"]][0].uplink_mb()[-1],
             "ledger_MB_total": runs[row["method"]][0].total_bits() / MB}
            for row in compare(runs, TABLE1.get(PAPER_NAME[REAL], {}), quantity=Result.last, keys=dict(dataset=where))]


def curves(table1) -> None:
    """Part B: Fig. 2 (accuracy per round) and Fig. 3 (against the cumulative uplink per client)."""
    profile = table1.settings
    drawn = {d: runs for d in datasets_here(profile) if (runs := by_label(table1, d)) is not None}
    if not drawn:
        print("Figs. 2 and 3: not drawn, part A's runs are not all there (see Table I)")
        return
    by_round = {SHOWN[d]: {lab: plots.Curve(METHODS[lab][0], np.array([r.curve() for r in rs]) * 100)
                           for lab, rs in runs.items()} for d, runs in drawn.items()}
    fig = plots.accuracy_curves(by_round, "FedRD's Fig. 2: mean client accuracy per round (mean ± SE over seeds)")
    plots.caption(fig, table1.profile, len(profile.seeds), profile.rounds,
                  note=f"ConvNet-{profile.width}, dpc {profile.dpc}")
    outputs.save_figure(fig, "fedrd_curves_rounds")
    by_mb = {name: {lab: c._replace(x=drawn[d][lab][0].uplink_mb()) for lab, c in panel.items()}
             for (d, (name, panel)) in zip(drawn, by_round.items())}
    fig = plots.accuracy_curves(by_mb, "FedRD's Fig. 3: accuracy against the uplink (MB per client, cumulative)",
                                xlabel="uplink per client (MB, cumulative; log scale)", log=True)
    plots.caption(fig, table1.profile, len(profile.seeds), profile.rounds,
                  note="one marker per round; the ledger's up + down totals are in fedrd_table1")
    outputs.save_figure(fig, "fedrd_curves_uplink")


def table3(init, table1):
    """Part C: Table III, real against random initialisation; saved as fedrd_table3_init (None where cut)."""
    profile, rows = init.settings, []
    for (d, lab, side), results in initialisations(init, table1).items():
        if results is None:
            print((table1 if side == "real" else init).note([(d, lab)], f"Table III ({SHOWN[d]}, {lab}, {side} "
                                                                           "initialisation)"))
            continue
        m, se = stats.mean_se([final(r) for r in swept(results, profile)])
        paper_value = TABLE3[f"{lab}({side})"][0] if d == REAL else float("nan")
        rows.append({"dataset": SHOWN[d], "method": lab, "init": side, "final_mean": m, "final_se": se,
                     "paper_accuracy": paper_value, "seeds": len(results), "rounds": profile.swept})
    return outputs.save_table(rows, "fedrd_table3_init", units=COMPARE_UNITS) if rows else None


def _drawable(read, part: str, what: str) -> bool:
    """Whether a sweep part (D-F) is planned at this profile and all there (`analysis.whole_sweep`); if not, says
    which."""
    if not read.keys():
        print(part, "is", CUT)
    elif not read.whole():
        print(read.note(what=what))
    return analysis.whole_sweep(read)


def dpc(dpcs) -> None:
    """Part D: accuracy against the uplink as dpc grows (`analysis.dpc_points`), drawn and saved (not where cut)."""
    profile = dpcs.settings
    if not _drawable(dpcs, "part D", "part D (Fig. 4 stand-in)"):
        return
    points = analysis.dpc_points(dpcs)
    pts = {lab: sorted((up, m, se) for (ll, _), ((m, se), up) in points.items() if ll == lab) for lab, _ in points}
    series = {lab: ([u for u, _, _ in q], [m for _, m, _ in q], [s for *_, s in q] if len(profile.seeds) > 1 else None)
              for lab, q in pts.items()}
    fig = plots.parameter_sweep({"FashionMNIST": series}, "uplink per client (MB, after the last round; log scale)",
                                "FedRD's Fig. 4 stand-in: accuracy against uplink as dpc grows (labels: method)")
    plots.caption(fig, dpcs.profile, len(profile.seeds), profile.swept,
                  note="dpc " + ", ".join(f"{lab} {sorted(k for ll, k in points if ll == lab)}" for lab in series))
    outputs.save_figure(fig, "fedrd_dpc")
    outputs.save_table([{"method": lab, "dpc": k, "final_mean": m, "final_se": se, "uplink_MB_per_client": up,
                       "seeds": len(profile.seeds), "rounds": profile.swept}
                      for (lab, k), ((m, se), up) in points.items()], "fedrd_dpc", units=COMPARE_UNITS)


def sizes(sides) -> None:
    """Part E: FedRD's accuracy against the representation size (`analysis.size_rows`), saved as fedrd_table4_dims
    (not where cut)."""
    if _drawable(sides, "part E", "part E (Table IV stand-in)"):
        outputs.save_table(analysis.size_rows(sides), "fedrd_table4_dims", units=COMPARE_UNITS)


def depths(depths) -> None:
    """Part F: FedRD's accuracy against the projection's depth (`analysis.depth_accuracy`), drawn (not where cut)."""
    profile = depths.settings
    if not _drawable(depths, "part F", "part F (Fig. 5 stand-in)"):
        return
    acc = analysis.depth_accuracy(depths)
    fig = plots.parameter_sweep({"FashionMNIST": {"FedRD": (list(acc), [v[0] for v in acc.values()],
                                                           [v[1] for v in acc.values()] if len(profile.seeds) > 1
                                                           else None)}},
                                "projection depth (3 x 3 convolutions)", "FedRD's Fig. 5 stand-in: accuracy against the "
                                "projection's depth", log=False)
    plots.caption(fig, depths.profile, len(profile.seeds), profile.swept, note=f"dpc {profile.dpc}, d' = 784")
    outputs.save_figure(fig, "fedrd_proj_depth")


def toy(profile: str, settings: Toy = TOY) -> None:
    """Part H: FedNova's toy (`analysis.toy_gaps`), its distances from the true minimiser printed, drawn."""
    paths, fixed, gap = analysis.toy_gaps(settings)
    print("distance from the true minimiser at the end:", {lab: round(g, 4) for lab, g in gap.items()})
    fig = objective_inconsistency(paths, fixed, np.array(settings.centers), "FedNova's claim: normalised averaging "
                                  f"removes the bias of unequal local steps (tau = {list(settings.taus)}, lr "
                                  f"{settings.lr})")
    plots.caption(fig, profile, "none (deterministic)", settings.rounds, note="exact gradients")
    outputs.save_figure(fig, "fednova_toy")


LADDER_PANELS = {"after the last round": final, "after round 1": after_round_one}


def ladder_table(ladder, profile: str):
    """Part G's table and figure from the ladder's reading (`ladder[(label, T, init)]`: one Result per seed, None
    where a seed is not shipped; the averaging baselines under (label, None, None)). The table (fedrd_ladder) has a
    row per run group: accuracy after the last round and after round 1 (mean +- SE over seeds), or "not shipped";
    the figure (fedrd_ladder) draws what is shipped against T. Returns the table, or None when nothing is shipped."""
    settings, runs = ladder.settings, {key: ladder[key] for key in ladder.keys()}
    seeds, rows = len(settings.seeds), []
    for (lab, T, init), results in runs.items():
        row = {"method": lab, "matching_steps": T if T else "-", "init": init or "-",
               "rounds": settings.dd_rounds if T else settings.baseline_rounds, "seeds": seeds}
        for name, f in (("final", final), ("round1", after_round_one)):
            m, se = stats.mean_se([f(r) for r in results]) if results else (float("nan"), float("nan"))
            row |= {f"{name}_mean": m, f"{name}_se": se}
        rows.append(row | {"shipped": "yes" if results else "no"})
    absent = [r for r in rows if r["shipped"] == "no"]
    if absent:
        names = [r["method"] + (f" T={r['matching_steps']} {r['init']}" if r["init"] != "-" else "") for r in absent]
        print(f"the ladder: {len(absent)} of {len(rows)} run groups ({seeds} seeds each) not shipped yet: "
              f"{'; '.join(names)} ({LADDER_PART.command()} makes them)")
    if len(absent) == len(rows):
        return None
    table = outputs.save_table(rows, "fedrd_ladder", units={c: "%" for c in ("final_mean", "final_se", "round1_mean",
                                                                             "round1_se")})
    points = {}
    for (lab, T, init), results in sorted(((k, v) for k, v in runs.items() if k[1] and v), key=lambda kv: kv[0][1]):
        for panel, f in LADDER_PANELS.items():
            m, se = stats.mean_se([f(r) for r in results])
            for column, value in zip(points.setdefault((lab, init), {}).setdefault(panel, ([], [], [])), (T, m, se)):
                column.append(value)
    baselines = {lab: {panel: stats.mean_se([f(r) for r in results]) for panel, f in LADDER_PANELS.items()}
                 for (lab, T, _), results in runs.items() if T is None and results}
    fig = ladder_figure(dict(sorted(points.items())), baselines, list(LADDER_PANELS),
                        "FedRD's ladder: FedDM and FedRD against the matching steps, the averaging baselines level "
                        "(mean ± SE over seeds)")
    plots.caption(fig, profile, seeds, f"{settings.dd_rounds} rounds (averaging: {settings.baseline_rounds})",
                  note=f"a reduced scale: ConvNet-{settings.width}, {settings.train_fraction:.0%} of FashionMNIST, "
                       f"{settings.real_batch} real images per class a step, {settings.server_epochs} server "
                       f"epochs, dpc {settings.dpc}")
    outputs.save_figure(fig, "fedrd_ladder")
    return table


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


def ladder_figure(points: dict[tuple, dict], baselines: dict[str, dict], panels: list[str], title: str):
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
