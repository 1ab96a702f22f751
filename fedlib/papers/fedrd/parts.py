"""Notebook 07's parts A-F and H (FedRD's Table I, Figs. 2-5, Tables III-IV, FedNova's toy) at a profile's scale:
its runs, tables and figures, and its claims as functions of Results and of the parts' numbers (tested on made-up
numbers in tests/test_fedrd_claims.py). Accuracies in percent. Part G, the ladder, is `fedrd.claims`."""
from __future__ import annotations

import numpy as np

from ... import outputs, plots, stats
from . import analysis
from ... import claims as rules
from ... import experiments as ex
from ...result import COMPARE_UNITS, MB, Result, compare
from .claims import after_round_one, final  # the ladder's quantities, the same here
from .plans import LADDER_SET, TOY
from .reported import QUOTES, TABLE1, TABLE3, TABLE4
from . import figures

NOTEBOOK = "07_fedrd_representation_distillation"
AVERAGING = ("FedAvg", "FedProx", "FedNova")
CUT = "cut from the quick profile to fit its 10 minutes (a FedRD run costs about 4 minutes here); smoke and paper run it"


def plan(profile: str, scales: dict, sweeps: dict, methods: dict, notebook_run) -> dict:
    """Every run notebook 07 reads at `profile` (`notebook_run`: fedrd.notebook_run), grouped by part, with what the
    parts need to know: {"table1", "inits", "dpcs", "sides", "depths": {key: [Config per seed]}, "datasets",
    "missing", "d0", "sweep_rounds", "dpc", "labels", "seeds", "rounds", "width"}."""
    scale, S = scales[profile], sweeps[profile]
    rounds = S["sweep_rounds"] or scale["rounds"]
    datasets = [d for d in S["datasets"] if ex.dataset_available(d)]
    d0, labels, seeds = datasets[0], list(methods), S["seeds"]
    run = lambda d, lab, sd, **change: notebook_run(profile, d, lab, sd, rounds=rounds, **change)  # noqa: E731
    table1 = {(d, lab): [notebook_run(profile, d, lab, sd) for sd in seeds] for d in datasets for lab in labels}
    inits = {(d, lab, init): table1[(d, lab)] if init == "real" else [run(d, lab, sd, init=init) for sd in seeds]
             for d in S["init_sets"] if d in datasets for lab in ("FedDM", "FedRD") for init in ("real", "random")}
    dpcs = {("FedDM", k): [run(d0, "FedDM", sd, dpc=k) for sd in seeds] for k in S["dpc_dm"]}
    dpcs |= {("FedRD", k): [run(d0, "FedRD", sd, dpc=k) for sd in seeds] for k in S["dpc_rd"]}
    dpcs |= {("FedRD d'=256", k): [run(d0, "FedRD", sd, side=16, dpc=k) for sd in seeds] for k in S["equal_uplink"]}
    if dpcs:  # part A's runs are the dpc-10 points
        dpcs |= {(lab, scale["dm"]["dpc"]): table1[(d0, lab)] for lab in ("FedDM", "FedRD")}
    sides = {s: [run(d0, "FedRD", sd, side=s) for sd in seeds] for s in S["sides"]}
    sides |= {28: table1[(d0, "FedRD")]} if sides else {}
    depths = {L: [run(d0, "FedRD", sd, depth=L) for sd in seeds] for L in S["depths"]}
    depths |= {2: table1[(d0, "FedRD")]} if depths else {}
    return dict(table1=table1, inits=inits, dpcs=dpcs, sides=sides, depths=depths, datasets=datasets, d0=d0,
                missing=[d for d in S["datasets"] if d not in datasets] + ["svhn"],  # SVHN has no loader here
                sweep_rounds=rounds, dpc=scale["dm"]["dpc"], labels=labels, seeds=seeds, rounds=scale["rounds"],
                width=scale["width"])


def configs(p: dict) -> list:
    return [c for part in ("table1", "inits", "dpcs", "sides", "depths") for cs in p[part].values() for c in cs]


def table1_runs(results, p: dict, d: str) -> dict | None:
    """Part A's runs on `d`: label -> Results, or None when any is not there (`results`: a `sweep.Runs`; in the
    paper profile nothing is computed, so a part whose runs are not shipped is not drawn and its claims say so)."""
    cfgs = [p["table1"][(d, lab)] for lab in p["labels"]]
    if not all(results.has(cs) for cs in cfgs):
        return None
    return {lab: results(cs) for lab, cs in zip(p["labels"], cfgs)}


def _every(groups) -> list:
    """The Configs of `groups` (lists of Configs) as one list, for `sweep.Runs.get`."""
    return [cfg for cfgs in groups for cfg in cfgs]


def swept(results, p: dict, cfgs) -> list:
    """Parts C-F read their runs' first `sweep_rounds` rounds (the real-initialised runs are part A's)."""
    return [ex.first_rounds(r, p["sweep_rounds"]) for r in results(cfgs)]


def table1(results, p: dict, reported: dict, shown: dict, paper_name: dict):
    """Part A: Table I, final accuracy (mean +- SE) beside the paper's mean +- std, the uplink per client and the
    ledger's total; the datasets not here named; saved as fedrd_table1."""
    rows, undrawn = [], []
    for d in p["datasets"]:
        by_label = table1_runs(results, p, d)
        if by_label is None:
            print(results.missing_note(f"Table I ({shown[d]})"))
            undrawn.append(d)
            continue
        for row in compare(by_label, reported.get(paper_name[d], {}), quantity=Result.last, keys=dict(dataset=shown[d])):
            rs = by_label[row["method"]]
            rows.append({**row, "uplink_MB_per_client": rs[0].uplink_mb()[-1],
                         "ledger_MB_total": rs[0].total_bits() / MB})
    rows += [{**row, "uplink_MB_per_client": float("nan"), "ledger_MB_total": float("nan")} for row in
             compare({}, {}, with_std=True, missing=[dict(dataset=shown.get(d, d.upper()))
                                                     for d in p["missing"] + undrawn])]
    return outputs.save_table(rows, "fedrd_table1", units=COMPARE_UNITS)


def curve_figures(results, p: dict, methods: dict, shown: dict, profile: str) -> None:
    """Part B: Fig. 2 (accuracy per round) and Fig. 3 (against the cumulative uplink per client)."""
    curves = {d: by_label for d in p["datasets"] if (by_label := table1_runs(results, p, d)) is not None}
    if not curves:
        print("Figs. 2 and 3: not drawn, part A's runs are not all there (see Table I)")
        return
    by_round = {shown[d]: {lab: {"method": methods[lab][0], "acc": np.array([r.curve() for r in rs]) * 100}
                           for lab, rs in by_label.items()} for d, by_label in curves.items()}
    fig = plots.accuracy_curves(by_round, "FedRD's Fig. 2: mean client accuracy per round (mean ± SE over seeds)")
    plots.caption(fig, profile, len(p["seeds"]), p["rounds"], note=f"ConvNet-{p['width']}, dpc {p['dpc']}")
    outputs.save_figure(fig, "fedrd_curves_rounds")
    by_mb = {name: {lab: dict(c, x=curves[d][lab][0].uplink_mb()) for lab, c in panel.items()}
             for (d, (name, panel)) in zip(curves, by_round.items())}
    fig = plots.accuracy_curves(by_mb, "FedRD's Fig. 3: accuracy against the uplink (MB per client, cumulative)",
                                xlabel="uplink per client (MB, cumulative; log scale)", log=True)
    plots.caption(fig, profile, len(p["seeds"]), p["rounds"], note="one marker per round; the ledger's up + down "
                  "totals are in fedrd_table1")
    outputs.save_figure(fig, "fedrd_curves_uplink")


def init_table(results, p: dict, table3: dict, shown: dict):
    """Part C: Table III, real against random initialisation; saved as fedrd_table3_init (None where cut)."""
    rows = []
    for (d, lab, init), cfgs in p["inits"].items():
        if results.get(cfgs, f"Table III ({shown[d]}, {lab}, {init} initialisation)") is None:
            continue
        m, se = stats.mean_se([final(r) for r in swept(results, p, cfgs)])
        paper_value = table3[f"{lab}({init})"][0] if d == "fashion_mnist" else float("nan")
        rows.append({"dataset": shown[d], "method": lab, "init": init, "final_mean": m, "final_se": se,
                     "paper_accuracy": paper_value, "seeds": len(cfgs), "rounds": p["sweep_rounds"]})
    return outputs.save_table(rows, "fedrd_table3_init", units=COMPARE_UNITS) if rows else None


def dpc_part(results, p: dict, profile: str) -> dict:
    """Part D: accuracy against the uplink as dpc grows; (label, dpc) -> ((mean, se), uplink MB) (empty where cut)."""
    if results.get(_every(p["dpcs"].values()), "part D (Fig. 4 stand-in)") is None:
        return {}
    points = {(lab, k): (stats.mean_se([final(r) for r in swept(results, p, cfgs)]),
                         swept(results, p, cfgs)[0].uplink_mb()[-1]) for (lab, k), cfgs in p["dpcs"].items()}
    if not points:
        print("part D is", CUT)
        return points
    pts = {lab: sorted((up, m, se) for (ll, _), ((m, se), up) in points.items() if ll == lab) for lab, _ in p["dpcs"]}
    series = {lab: ([u for u, _, _ in q], [m for _, m, _ in q], [s for *_, s in q] if len(p["seeds"]) > 1 else None)
              for lab, q in pts.items()}
    fig = plots.parameter_sweep({"FashionMNIST": series}, "uplink per client (MB, after the last round; log scale)",
                                "FedRD's Fig. 4 stand-in: accuracy against uplink as dpc grows (labels: method)")
    plots.caption(fig, profile, len(p["seeds"]), p["sweep_rounds"],
                  note="dpc " + ", ".join(f"{lab} {sorted(k for ll, k in points if ll == lab)}" for lab in series))
    outputs.save_figure(fig, "fedrd_dpc")
    outputs.save_table([{"method": lab, "dpc": k, "final_mean": m, "final_se": se, "uplink_MB_per_client": up,
                       "seeds": len(p["seeds"]), "rounds": p["sweep_rounds"]}
                      for (lab, k), ((m, se), up) in points.items()], "fedrd_dpc", units=COMPARE_UNITS)
    return points


def dim_rows(results, p: dict) -> list[dict]:
    """Part E: FedRD's accuracy against the representation size; saved as fedrd_table4_dims (empty where cut)."""
    if results.get(_every(p["sides"].values()), "part E (Table IV stand-in)") is None:
        return []
    rows = [{"sqrt_d": side, "d": side * side,
             **dict(zip(("final_mean", "final_se"), stats.mean_se([final(r) for r in swept(results, p, cfgs)]))),
             "uplink_MB_per_client": swept(results, p, cfgs)[0].uplink_mb()[-1], "seeds": len(cfgs),
             "rounds": p["sweep_rounds"]} for side, cfgs in sorted(p["sides"].items())]
    if rows:
        outputs.save_table(rows, "fedrd_table4_dims", units=COMPARE_UNITS)
    else:
        print("part E is", CUT)
    return rows


def depth_part(results, p: dict, profile: str) -> dict:
    """Part F: FedRD's accuracy against the projection's depth; depth -> (mean, se) (empty where cut)."""
    if not p["depths"]:
        print("part F is", CUT)
        return {}
    if results.get(_every(p["depths"].values()), "part F (Fig. 5 stand-in)") is None:
        return {}
    acc = {L: stats.mean_se([final(r) for r in swept(results, p, cfgs)]) for L, cfgs in sorted(p["depths"].items())}
    fig = plots.parameter_sweep({"FashionMNIST": {"FedRD": (list(acc), [v[0] for v in acc.values()],
                                                           [v[1] for v in acc.values()] if len(p["seeds"]) > 1
                                                           else None)}},
                                "projection depth (3 x 3 convolutions)", "FedRD's Fig. 5 stand-in: accuracy against the "
                                "projection's depth", log=False)
    plots.caption(fig, profile, len(p["seeds"]), p["sweep_rounds"], note=f"dpc {p['dpc']}, d' = 784")
    outputs.save_figure(fig, "fedrd_proj_depth")
    return acc


def toy(settings: dict, profile: str) -> dict:
    """Part H: FedNova's toy; method -> its distance from the true minimiser at the end."""
    centers, taus, lr, rounds = np.array(settings["centers"]), settings["taus"], settings["lr"], settings["rounds"]
    paths, fixed = analysis.fednova_toy(centers, taus, lr, rounds)
    gap = {lab: float(np.linalg.norm(path[-1] - centers.mean(0))) for lab, path in paths.items()}
    print("distance from the true minimiser at the end:", {lab: round(g, 4) for lab, g in gap.items()})
    fig = figures.objective_inconsistency(paths, fixed, centers, "FedNova's claim: normalised averaging removes the "
                                        f"bias of unequal local steps (tau = {taus}, lr {lr})")
    plots.caption(fig, profile, "none (deterministic)", rounds, note="exact gradients")
    outputs.save_figure(fig, "fednova_toy")
    return gap


def _per_seed(results, cfgs, f=final) -> list[float]:
    return [f(r) for r in results(cfgs)]


def _best_averaging(results, p: dict, f=final) -> list[float]:
    return [max(v) for v in zip(*(_per_seed(results, p["table1"][("fashion_mnist", lab)], f) for lab in AVERAGING))]


def table1_claims(ledger, results, p: dict, reported: dict) -> None:
    """Table I on FashionMNIST: FedRD beats FedDM, and FedDM the best averaging method, seed by seed; Fig. 2: after
    one round FedRD is ahead of every averaging method, and (beyond 5 rounds) it converges within about 5. Runs not
    all there (`table1_runs`): every row says "not run"."""
    if ("fashion_mnist", "FedRD") not in p["table1"]:
        return
    paper = {lab: reported["fashion_mnist"][lab][0] for lab in p["labels"]}
    there = table1_runs(results, p, "fashion_mnist") is not None
    of = lambda lab, f=final: _per_seed(results, p["table1"][("fashion_mnist", lab)], f) if there else None  # noqa: E731
    best = lambda f=final: _best_averaging(results, p, f) if there else None  # noqa: E731
    ledger.compare("FedRD", "Table I", "FashionMNIST: FedRD is more accurate than FedDM", of("FedRD"), of("FedDM"), ">",
                   paper_value=round(paper["FedRD"] - paper["FedDM"], 2), rounds=p["rounds"], kind="claim",
                   quote=QUOTES["best"], run_set="fedrd_table1")
    ledger.compare("FedRD", "Table I", "FashionMNIST: FedDM is more accurate than the best of FedAvg, FedProx and "
                   "FedNova", of("FedDM"), best(), ">",
                   paper_value=round(paper["FedDM"] - max(paper[lab] for lab in AVERAGING), 2), rounds=p["rounds"],
                   kind="claim", quote=QUOTES["dd_over_averaging"], run_set="fedrd_table1")
    if there:
        tail = {lab: 100 * np.mean([r.curve() for r in results(p["table1"][("fashion_mnist", lab)])], 0)[-3:]
                for lab in ("FedDM", "FedRD")}
        print("how firm: the mean accuracy over the last 3 rounds", {lab: v.round(2).tolist() for lab, v in tail.items()})
    ledger.compare("FedRD", "Fig. 2", "after one round FedRD is ahead of every model-averaging method (FashionMNIST; "
                   "the paper: CIFAR-10, 65% against < 30%)", of("FedRD", after_round_one), best(after_round_one), ">",
                   rounds=1, kind="claim", quote=QUOTES["round_one"], run_set="fedrd_table1")
    if p["rounds"] > 5:
        curve = np.mean([r.curve() for r in results(p["table1"][("fashion_mnist", "FedRD")])], 0) * 100 if there \
            else None
        ledger.record("FedRD", "Fig. 2", "FedRD has converged within about 5 rounds (ours: its best later round minus "
                      "round 5, FashionMNIST, in points; no tolerance of the paper's, so no verdict)",
                      float(curve[5:].max() - curve[4]) if there else None, None, rules.statement(), kind="claim",
                      quote=QUOTES["five_rounds"], seeds=len(p["seeds"]), rounds=p["rounds"], run_set="fedrd_table1")


def real_over_random(ledger, results, p: dict, table3: dict) -> None:
    """Table III: initialising from real samples beats noise, for FedDM and FedRD, seed by seed."""
    if not p["inits"]:
        return
    for lab in ("FedDM", "FedRD"):
        sides = [p["inits"][(p["d0"], lab, init)] for init in ("real", "random")]
        real, random = ([final(r) for r in swept(results, p, cfgs)] if all(results.has(c) for c in sides) else None
                        for cfgs in sides)
        ledger.compare("FedRD", "Table III", f"initialising from real samples beats noise ({lab}, FashionMNIST)",
                       real, random, ">",
                       paper_value=round(table3[f"{lab}(real)"][0] - table3[f"{lab}(random)"][0], 2),
                       rounds=p["sweep_rounds"], kind="claim", quote=QUOTES["table3"], run_set="fedrd_table3")


RISES = "accuracy rises with the samples per class (dpc {} -> {}, FedDM and FedRD, FashionMNIST)"
EQUAL_UPLINK = ("at equal uplink FedRD beats FedDM (FashionMNIST: the same dpc at d' = 784, and three times the dpc at "
                "d' = 256)")
SIZE = ("accuracy rises with the representation size (FashionMNIST, d' = {} -> {}; the paper: CIFAR-10, 64 -> 2304, "
        "+28.4 points)")
DEPTH = "a deeper projection is more accurate (FashionMNIST, depth {} -> {})"
UNDECLARED = ("not run: no run set declares this part's paper-size runs (scripts/paper_runs.py); each is a paper-size "
              "FedRD or FedDM run, as costly as fedrd_table1's (Table I's rows give its measured cost)")


def dpc_claims(ledger, points: dict, p: dict) -> None:
    """Fig. 4: accuracy rises with the samples per class; at equal uplink FedRD beats FedDM (the same dpc at
    d' = 784, three times the dpc at d' = 256). Part D planned (`p["dpcs"]`) but not there: both rows "not run"."""
    at = dict(seeds=len(p["seeds"]), rounds=p["sweep_rounds"])
    if not points and p.get("dpcs"):
        planned = [k for lab, k in p["dpcs"] if lab == "FedDM"]
        for claim in (RISES.format(min(planned), max(planned)), EQUAL_UPLINK):
            ledger.record("FedRD", "Fig. 4", claim, None, 0.0, rules.comparison(">"), kind="claim",
                          quote=QUOTES["fig4_dpc" if claim != EQUAL_UPLINK else "fig4_uplink"], **at)
            ledger.rows[-1].note = UNDECLARED
        return
    dm = {k: v[0][0] for (lab, k), v in points.items() if lab == "FedDM"}
    rd = {k: v[0][0] for (lab, k), v in points.items() if lab == "FedRD"}
    if len(dm) > 1 and len(rd) > 1:
        rises = [dm[max(dm)] - dm[min(dm)], rd[max(rd)] - rd[min(rd)]]
        print(f"(4a) the largest dpc minus the smallest: FedDM {rises[0]:+.2f}, FedRD {rises[1]:+.2f}")
        ledger.record("FedRD", "Fig. 4", RISES.format(min(dm), max(dm)), rises, 0.0, rules.comparison(">"),
                      kind="claim", quote=QUOTES["fig4_dpc"], **at)
    same = [rd[k] - dm[k] for k in sorted(set(dm) & set(rd))]
    small = {k: v[0][0] for (lab, k), v in points.items() if lab == "FedRD d'=256"}
    equal = [small[3 * k] - dm[k] for k in sorted(dm) if 3 * k in small]
    if same + equal:
        print(f"(4b) FedRD minus FedDM at the same dpc and uplink: {[round(x, 2) for x in same]}; FedRD (d' = 256, "
              f"3x dpc) minus FedDM at about equal uplink: {[round(x, 2) for x in equal]}")
        ledger.record("FedRD", "Fig. 4", EQUAL_UPLINK, same + equal, 0.0, rules.comparison(">"), kind="claim",
                      quote=QUOTES["fig4_uplink"], **at)


def size_and_depth_claims(ledger, dims: list[dict], depth_acc: dict, p: dict, table4: dict) -> None:
    """Table IV: accuracy rises with the representation size; Fig. 5: a deeper projection is more accurate. A part
    planned (`p["sides"]`, `p["depths"]`) whose runs are not there: its row says "not run"."""
    at = dict(seeds=len(p["seeds"]), rounds=p["sweep_rounds"])
    paper_gain = round(table4["accuracy"][-1] - table4["accuracy"][0], 2)
    if dims:
        by_side = {r["sqrt_d"]: r["final_mean"] for r in dims}
        ledger.record("FedRD", "Table IV", SIZE.format(min(by_side) ** 2, max(by_side) ** 2),
                      by_side[max(by_side)] - by_side[min(by_side)], 0.0, rules.comparison(">"), kind="claim",
                      quote=QUOTES["table4"], paper_value=paper_gain, **at)
    elif p.get("sides"):
        ledger.record("FedRD", "Table IV", SIZE.format(min(p["sides"]) ** 2, max(p["sides"]) ** 2), None, 0.0,
                      rules.comparison(">"), kind="claim", quote=QUOTES["table4"], paper_value=paper_gain, **at)
        ledger.rows[-1].note = UNDECLARED
    if depth_acc:
        gain = depth_acc[max(depth_acc)][0] - depth_acc[min(depth_acc)][0]
        ledger.record("FedRD", "Fig. 5", DEPTH.format(min(depth_acc), max(depth_acc)), gain, 0.0, rules.comparison(">"),
                      kind="claim", quote=QUOTES["fig5"], **at)
    elif p.get("depths"):
        ledger.record("FedRD", "Fig. 5", DEPTH.format(min(p["depths"]), max(p["depths"])), None, 0.0,
                      rules.comparison(">"), kind="claim", quote=QUOTES["fig5"], **at)
        ledger.rows[-1].note = UNDECLARED


def fednova_unbiased(ledger, gap: dict, settings: dict) -> str:
    """FedNova's Sec. 4 toy: its distance to the minimiser is below lr x max tau, FedAvg's above it."""
    bound = settings["lr"] * max(settings["taus"])
    return ledger.record("FedNova", "Sec. 4 (toy)", "with unequal local steps FedAvg's fixed point is biased and "
                         "FedNova's is not, to first order in lr (FedNova's distance to the minimiser is below lr x max "
                         "tau and FedAvg's is above it)", [bound - gap["FedNova"], gap["FedAvg"] - bound], 0.0,
                         rules.comparison(">"), kind="self-check", seeds=1, rounds=settings["rounds"])


def record(results, p: dict, numbers: dict, profile: str):
    """Notebook 07's claims (parts A-F, H), saved; `numbers`: what the parts returned ({"dpc_points", "dims",
    "depth_acc", "toy_gap"}); the paper's numbers from `reported`. Returns the ledger."""
    ledger = rules.ClaimsLedger(NOTEBOOK, profile)
    table1_claims(ledger, results, p, TABLE1)
    real_over_random(ledger, results, p, TABLE3)
    dpc_claims(ledger, numbers["dpc_points"], p)
    size_and_depth_claims(ledger, numbers["dims"], numbers["depth_acc"], p, TABLE4)
    fednova_unbiased(ledger, numbers["toy_gap"], TOY)
    ledger.save()
    return ledger


LADDER_PANELS = {"after the last round": final, "after round 1": after_round_one}


def ladder_part(ladder: dict, settings: dict, profile: str):
    """Part G's table and figure: `ladder` ((label, T, init) -> one Result per seed, None where a seed is not shipped;
    the averaging baselines under (label, None, None)), `settings` fedrd.LADDER. The table (fedrd_ladder) has a row
    per run group: accuracy after the last round and after round 1 (mean +- SE over seeds), or "not shipped"; the
    figure (fedrd_ladder) draws what is shipped against T. Returns the table, or None when nothing is shipped."""
    seeds, rows = len(settings["seeds"]), []
    for (lab, T, init), results in ladder.items():
        row = {"method": lab, "matching_steps": T if T else "-", "init": init or "-",
               "rounds": settings["dd_rounds"] if T else settings["baseline_rounds"], "seeds": seeds}
        for name, f in (("final", final), ("round1", after_round_one)):
            m, se = stats.mean_se([f(r) for r in results]) if results else (float("nan"), float("nan"))
            row |= {f"{name}_mean": m, f"{name}_se": se}
        rows.append(row | {"shipped": "yes" if results else "no"})
    absent = [r for r in rows if r["shipped"] == "no"]
    if absent:
        names = [r["method"] + (f" T={r['matching_steps']} {r['init']}" if r["init"] != "-" else "") for r in absent]
        print(f"the ladder: {len(absent)} of {len(rows)} run groups ({seeds} seeds each) not shipped yet: "
              f"{'; '.join(names)} ({LADDER_SET.command()} makes them)")
    if len(absent) == len(rows):
        return None
    table = outputs.save_table(rows, "fedrd_ladder", units={c: "%" for c in ("final_mean", "final_se", "round1_mean",
                                                                             "round1_se")})
    points = {}
    for (lab, T, init), results in sorted(((k, v) for k, v in ladder.items() if k[1] and v), key=lambda kv: kv[0][1]):
        for panel, f in LADDER_PANELS.items():
            m, se = stats.mean_se([f(r) for r in results])
            for column, value in zip(points.setdefault((lab, init), {}).setdefault(panel, ([], [], [])), (T, m, se)):
                column.append(value)
    baselines = {lab: {panel: stats.mean_se([f(r) for r in results]) for panel, f in LADDER_PANELS.items()}
                 for (lab, T, _), results in ladder.items() if T is None and results}
    fig = figures.ladder(dict(sorted(points.items())), baselines, list(LADDER_PANELS),
                         "FedRD's ladder: FedDM and FedRD against the matching steps, the averaging baselines level "
                         "(mean ± SE over seeds)")
    plots.caption(fig, profile, seeds, f"{settings['dd_rounds']} rounds (averaging: {settings['baseline_rounds']})",
                  note=f"a reduced scale: ConvNet-{settings['width']}, {settings['train_fraction']:.0%} of FashionMNIST, "
                       f"{settings['real_batch']} real images per class a step, {settings['server_epochs']} server "
                       f"epochs, dpc {settings['dpc']}")
    outputs.save_figure(fig, "fedrd_ladder")
    return table
