"""Notebook 06's parts A-G (FedCR's Table 2, Figs. 2-3, Tables 3 and 9, and FedCR in FedLog's MNIST Table 1
setting): its runs, tables and figures, and its claims as functions of Results and of the parts' numbers (tested on
made-up numbers in tests/test_fedcr_claims.py). Accuracies in percent. What the paper reports, its Configs and the
notebook's plans come from their role modules (`reported`, `protocol`, `plans`), never the package passed in."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ... import outputs, plots, stats, sweep
from . import analysis, figures, plans, protocol
from ... import claims as rules
from ... import experiments as ex
from ...result import COMPARE_UNITS, Result, compare
from .plans import Profile
from .reported import QUOTES, TABLE2, TABLE3, TABLE9, TABLE10_SPREAD, table10_cell

NOTEBOOK = "06_fedcr_common_representation"
UNDECLARED = "FEDLIB_COMPUTE=1 FEDLIB_PROFILE=paper ./run_all.sh 06 (no run set declares them)"


def reader(profile: str):
    """cfgs -> their Results (one per Config), or None where one of them is neither cached nor shipped and the
    profile computes nothing (the paper profile, without FEDLIB_COMPUTE=1: `sweep.may_compute`); other profiles
    compute what is missing."""
    computes = sweep.may_compute(profile)

    def get(cfgs: list):
        if computes or all(ex.is_cached(c) for c in cfgs):
            return sweep.run_many(cfgs)
        return None
    return get


def _missing(part: str, cfgs: list) -> None:
    """Says that `part` is not drawn and which command computes its runs `cfgs` (the run sets that hold them)."""
    from ..runset import commands_for
    from .plans import RUN_SETS

    print(f"{part}: not drawn, its runs are not cached or shipped; compute them with "
          f"{commands_for(cfgs, RUN_SETS, UNDECLARED)}")


def final(result) -> float:
    """After the fine-tune where the method has one (Table 2's quantity), in percent."""
    return 100 * result.final()


@dataclass
class Plan:
    """What notebook 06 runs at `profile`: its columns (those whose data are here), Table 2's methods, the sweeps'
    datasets, the first column, the columns missing here, and every run known before Ditto's lambda is chosen
    (`upfront`); `run` makes one of its Configs, `get` reads Results (`reader`)."""
    profile: str
    S: Profile
    run: Callable = field(repr=False)
    get: Callable = field(repr=False)
    columns: list
    labels: list
    dim_sets: list
    beta_sets: list
    nonagg_set: str | None
    d0: str
    p0: str
    upfront: list = field(repr=False)
    missing: list


def plan(profile: str, S: Profile) -> Plan:
    """Notebook 06's Plan at `profile` (`S`: its Profile)."""
    run = lambda d, lab, p, sd, **change: plans.run(profile, d, lab, p, sd, **change)  # noqa: E731
    columns = [(d, p) for d, p in S.columns if ex.dataset_available(d)]
    every = protocol.BASELINES + ["FedCR"]
    labels = [lab for lab in every if lab in (S.labels or every)]  # the paper profile: its run sets' (TABLE2_LABELS)
    dim_sets = [d for d, p in columns if p == "n1"][:None if profile == "paper" else 1]  # quick: FashionMNIST only
    beta_sets = [d for d in S.beta_sets if (d, "n1") in columns]
    nonagg_set = "fashion_mnist" if ex.dataset_available("fashion_mnist") else None
    d0, p0 = columns[0]
    upfront = [run(d0, "Ditto", p0, S.seeds[0], lam=lam) for lam in S.ditto_grid]
    upfront += [run(d, lab, p, sd) for d, p in columns for lab in labels if lab != "Ditto" for sd in S.seeds]
    upfront += [run(d, "FedCR", "n1", sd, dim=V) for d in dim_sets for V in S.dims for sd in S.seeds]
    upfront += [run(d, "FedCR", "n1", sd, beta=b) for d in beta_sets for b in S.betas for sd in S.seeds]
    if nonagg_set:
        upfront += [run(nonagg_set, lab, "n1", sd, classes=k, rounds=S.table9.rounds)
                    for k in S.table9.ks for lab in protocol.NONAGGREGATE for sd in S.seeds]
    if ex.dataset_available("mnist"):
        upfront += [plans.table1_run(profile, m, sd) for m in ("fedcr", "fedcr_na") for sd in S.table1.seeds]
    return Plan(profile=profile, S=S, run=run, get=reader(profile), columns=columns, labels=labels,
                dim_sets=dim_sets, beta_sets=beta_sets, nonagg_set=nonagg_set, d0=d0, p0=p0, upfront=upfront,
                missing=[(d, p) for d, p in S.columns if (d, p) not in columns])


def ditto_lambda(p: dict) -> tuple[float | None, str]:
    """The quick profile chooses Ditto's lambda on seed 0 of the first column from the paper's grid, by final
    accuracy; the paper profile takes the paper's per column (None). Returns it and what to print."""
    S = p.S
    grid = {lam: p.get([p.run(p.d0, "Ditto", p.p0, S.seeds[0], lam=lam)])
            for lam in S.ditto_grid}
    grid = {lam: rs[0] for lam, rs in grid.items() if rs is not None}
    if not grid:
        return None, f"lambda per column, the paper's: {dict((f'{d} {q}', protocol.DITTO_LAM[(d, q)]) for d, q in p.columns)}"
    lam = max(grid, key=lambda v: final(grid[v]))
    return lam, (f"lambda = {lam:g} for every Ditto run below; final accuracy by lambda: "
                 f"{ {v: round(final(r), 2) for v, r in grid.items()} }")


def table2(p: dict, lam) -> dict:
    """Part A: Table 2, FedAvg before the fine-tune and FedAvg-FT (the same runs) after it, the paper beside; saved
    as fedcr_table2. Returns (dataset, partition) -> label -> Results of the methods whose runs are all there (a run
    set shipped in part: those of its methods with every seed shipped), None for a column with none of them (the
    paper profile computes none); the methods left out are named, with the command that computes them."""
    S, run = p.S, p.run
    if sweep.may_compute(p.profile):  # Ditto's runs with the lambda chosen, in one sweep with the rest
        sweep.run_many([run(d, "Ditto", q, sd, lam=lam) for d, q in p.columns for sd in S.seeds])
    table, absent = {}, []
    for d, q in p.columns:
        by_label = {lab: p.get([run(d, lab, q, sd, lam=lam) for sd in S.seeds]) for lab in p.labels}
        table[(d, q)] = {lab: rs for lab, rs in by_label.items() if rs is not None} or None
        left = [lab for lab, rs in by_label.items() if rs is None]
        absent += [dict(dataset=protocol.SHOWN[d], partition=q, method=lab) for lab in left if table[(d, q)]]
        if left:
            _missing(f"Table 2 ({protocol.SHOWN[d]} {q}){': ' + ', '.join(left) if table[(d, q)] else ''}",
                     [run(d, lab, q, sd, lam=lam) for lab in left for sd in S.seeds])
    rows = []
    for (d, q), by_label in table.items():
        if by_label is None:
            continue
        keys, reported = dict(dataset=protocol.SHOWN[d], partition=q), TABLE2.get((protocol.PAPER_NAME[d], q), {})
        name = lambda lab: "FedBABU" if lab.startswith("FedBabu") else lab  # noqa: E731
        fedavg = {"FedAvg": by_label["FedAvg"]} if "FedAvg" in by_label else {}
        rows += compare(fedavg, reported, quantity=Result.last, keys=keys)
        rows += compare({**({"FedAvg-FT": fedavg["FedAvg"]} if fedavg else {}),
                         **{lab: rs for lab, rs in by_label.items() if lab != "FedAvg"}},
                        reported, keys=keys, paper_name=name)
    if p.profile == "paper" and table.get(("fashion_mnist", "n1")):
        rows += _ditto_second_reading(p, table[("fashion_mnist", "n1")])
    rows += compare({}, {}, missing=[dict(dataset=protocol.SHOWN[d], partition=q) for d, q in p.missing
                                     + [c for c, by_label in table.items() if by_label is None]] + absent)
    outputs.save_table(rows, "fedcr_table2", units=COMPARE_UNITS)
    return table


def _ditto_second_reading(p: dict, by_label: dict) -> list[dict]:
    """Table 2's FashionMNIST n1 row of Ditto as the authors' main_fed.py runs it (FedAvg-FT with weight decay 0.001,
    `plans.DITTO_AS_MAIN_FED`), beside our Ditto (main_fed_ditto.py's) and the paper's number, and which of the two
    the paper's is nearer. [] with a line naming the command while its runs are not all shipped."""
    from .plans import DITTO_AS_MAIN_FED

    second = plans.DITTO_MAIN_FED
    results = p.get([c for _, c in second.runs()])
    if results is None:
        _missing(f"Table 2 (FashionMNIST n1): {DITTO_AS_MAIN_FED}", [c for _, c in second.runs()])
        return []
    reported = TABLE2[("fashion_mnist", "n1")]
    rows = compare({DITTO_AS_MAIN_FED: results}, reported, keys=dict(dataset=protocol.SHOWN["fashion_mnist"],
                                                                      partition="n1"), paper_name=lambda _: "Ditto")
    if "Ditto" in by_label:
        ours = compare({"Ditto": by_label["Ditto"]}, reported)[0]["final_mean"]
        second_mean, theirs = rows[0]["final_mean"], reported["Ditto"]
        nearer = DITTO_AS_MAIN_FED if abs(second_mean - theirs) < abs(ours - theirs) else "Ditto (main_fed_ditto.py)"
        print(f"The paper's Ditto on FashionMNIST n1, {theirs:.2f}: our Ditto (main_fed_ditto.py) {ours:.2f}, "
              f"{DITTO_AS_MAIN_FED} {second_mean:.2f} over {len(results)} seeds; the paper's number is nearer {nearer} "
              f"(by {abs(abs(second_mean - theirs) - abs(ours - theirs)):.2f} points)")
    return rows


def curves_figure(table: dict, p: dict, lam) -> None:
    """Part B: Fig. 3(a-c), accuracy per round before the final fine-tune (the columns whose runs are there)."""
    S = p.S
    panels = {f"{protocol.SHOWN[d]} {q}": {lab: {"method": protocol.METHODS[lab][0],
                                              "acc": np.array([r.curve() for r in rs]) * 100}
                                        for lab, rs in by_label.items()}
              for (d, q), by_label in table.items() if by_label is not None}
    if not panels:
        return _missing("Fig. 3(a-c)", "Table 2's")
    fig = plots.accuracy_curves(panels, "FedCR's Fig. 3: mean client accuracy per round, before the final fine-tune "
                                        "(mean ± SE over seeds)")
    drawn = [(d, q) for (d, q), by_label in table.items() if by_label is not None]
    ditto = f"Ditto lambda {lam:g}" if lam is not None else "Ditto lambda the paper's per column: " + ", ".join(
        f"{protocol.SHOWN[d]} {q} {protocol.DITTO_LAM[(d, q)]:g}" for d, q in drawn)  # the paper profile: lam None
    plots.caption(fig, p.profile, len(S.seeds), plans.rounds_label(p.profile, sorted({d for d, _ in drawn}),
                  unit=True), note=f"width {S.width}, V = {S.dim}, {ditto}")
    outputs.save_figure(fig, "fedcr_curves")


def sweeps(p: dict) -> dict:
    """Parts C and D: FedCR's final accuracy on n1, seed by seed, at each V and each beta: (name, dataset, value) ->
    [per seed], for the values whose runs are there (each one missing is named)."""
    S, run = p.S, p.run
    out = {}
    for name, sets, values in (("dim", p.dim_sets, S.dims), ("beta", p.beta_sets, S.betas)):
        for d in sets:
            for v in values:
                cfgs = [run(d, "FedCR", "n1", sd, **{name: v}) for sd in S.seeds]
                rs = p.get(cfgs)
                if rs is None:
                    _missing(f"FedCR at {name} = {v:g} ({d})", cfgs)
                else:
                    out[(name, d, v)] = [final(r) for r in rs]
    return out


def _series(table: dict, d: str):
    return tuple(zip(*[(v, *table[(dd, v)]) for dd, v in table if dd == d]))


def dims_part(per_seed: dict, p: dict):
    """Part C: Table 3, FedCR's final accuracy against V (n1); saved as fedcr_table3_dims and fedcr_dims. Returns
    the table (None where no V was run)."""
    S = p.S
    dims = {(d, v): stats.mean_se(f) for (name, d, v), f in per_seed.items() if name == "dim"}
    rows = [{"dataset": protocol.SHOWN[d], "V": V, "final_mean": m, "final_se": se,
             "paper_accuracy": TABLE3.get(V, (float("nan"),) * 2)[0 if d == "mnist" else 1],
             "seeds": len(S.seeds), "rounds": plans.rounds_label(p.profile, [d])} for (d, V), (m, se) in dims.items()]
    if not rows:
        return None
    table = outputs.save_table(rows, "fedcr_table3_dims")
    fig = plots.parameter_sweep(
        {protocol.SHOWN[d]: {"ours": _series(dims, d),
                          "paper": (list(TABLE3), [v[0 if d == "mnist" else 1] for v in TABLE3.values()],
                                    None)}
         for d in sorted({d for d, _ in dims})}, "Gaussian dimension V", "FedCR's Table 3: final accuracy against V (n1)")
    plots.caption(fig, p.profile, len(S.seeds), plans.rounds_label(p.profile, sorted({d for d, _ in dims}),
                  unit=True), note=f"width {S.width}")
    outputs.save_figure(fig, "fedcr_dims")
    return table


def betas_part(per_seed: dict, p: dict):
    """Part D: Fig. 3(d), FedCR's final accuracy against beta (n1); saved as fedcr_beta. Returns the table."""
    S = p.S
    betas = {(d, v): stats.mean_se(f) for (name, d, v), f in per_seed.items() if name == "beta"}
    rows = [{"dataset": protocol.SHOWN[d], "beta": b, "final_mean": m, "final_se": se, "seeds": len(S.seeds),
             "rounds": plans.rounds_label(p.profile, [d])} for (d, b), (m, se) in betas.items()]
    if not rows:
        return None
    table = outputs.save_table(rows, "fedcr_beta")
    fig = plots.parameter_sweep({protocol.SHOWN[d]: {"ours": _series(betas, d)} for d in sorted({d for d, _ in betas})},
                                "beta (weight of the KL term)",
                                "FedCR's Fig. 3(d): final accuracy against beta (n1; the paper gives no numbers)")
    plots.caption(fig, p.profile, len(S.seeds), plans.rounds_label(p.profile, sorted({d for d, _ in betas}),
                  unit=True), note=f"V = {S.dim}")
    outputs.save_figure(fig, "fedcr_beta")
    return table


def fig2_cases(run, f2: dict) -> list[tuple]:
    """Part E's four runs: ((partition, beta), Config) for n1 and n2, beta 0 and 5e-4, V = 2, seed 0, at a
    profile's `run` (the plan's) and Fig. 2 settings `f2` (its PROFILES entry's "fig2")."""
    return [((q, beta), run("mnist", "FedCR", q, 0, dim=2, beta=beta, rounds=f2.rounds, **f2.over))
            for q in ("n1", "n2") for beta in (0.0, 5e-4)]


def fig2(p: dict) -> dict:
    """Part E: the 2-D Gaussian means of one client's MNIST test images, beta = 0 against 5e-4, n1 and n2; returns
    (partition, beta) -> the silhouette of the means by class."""
    f2 = p.S.fig2
    scatter, silhouettes = {}, {}
    if not ex.dataset_available("mnist"):
        return silhouettes
    cases, cfgs = zip(*fig2_cases(p.run, f2))
    views = [analysis.cached_view(cfg, f2.epochs, f2.points, compute=False) for cfg in cfgs]
    if None in views and not sweep.may_compute(p.profile):  # live runs (trained, then one client trains on)
        print(f"Fig. 2: not drawn, its views are not cached or shipped and the {p.profile} profile computes "
              f"nothing; compute them with `scripts/fedcr_fig2_views.py --profile {p.profile}`, then ship them "
              f"with `--pack`")
        return silhouettes
    todo = [i for i, v in enumerate(views) if v is None]  # computed in the workers, then cached
    for i, v in zip(todo, sweep.call_many(analysis.cached_view, [(cfgs[i], f2.epochs, f2.points) for i in todo])):
        views[i] = v
    for (q, beta), v in zip(cases, views):
        silhouettes[(q, beta)] = stats.silhouette(v["mu"], v["y"])
        scatter[f"{q}, beta = {beta:g} (client {v['client']}, {v['classes']} classes)"] = (
            v["mu"], v["y"], silhouettes[(q, beta)])
        print(f"Fig. 2 {q} beta={beta:g}: silhouette {silhouettes[(q, beta)]:.3f} over {len(v['y'])} test images")
    fig = figures.feature_scatter(scatter, "FedCR's Fig. 2: Gaussian means (V = 2) of one client's MNIST test images")
    plots.caption(fig, p.profile, 1, f2.rounds, note=f"then {f2.epochs} local epochs at the client shown")
    outputs.save_figure(fig, "fedcr_fig2_features")
    return silhouettes


def table9(p: dict) -> dict:
    """Part F: no model aggregation on FashionMNIST with k classes per client; (k, label) -> Results; saved as
    fedcr_table9_nonaggregate."""
    S, t9 = p.S, p.S.table9
    if not p.nonagg_set:
        return {}
    cfgs = {(k, lab): [p.run(p.nonagg_set, lab, "n1", sd, classes=k, rounds=t9.rounds) for sd in S.seeds]
            for k in t9.ks for lab in protocol.NONAGGREGATE}
    table = {key: p.get(cs) for key, cs in cfgs.items()}
    if any(rs is None for rs in table.values()):
        _missing("Table 9", [c for key, cs in cfgs.items() if table[key] is None for c in cs])
    table = {key: rs for key, rs in table.items() if rs is not None}
    rows = [{"classes_per_client": k, "method": lab, **dict(zip(("final_mean", "final_se"),
                                                                stats.mean_se([final(r) for r in rs]))),
             "total_bits": rs[0].total_bits(), "seeds": len(S.seeds), "rounds": t9.rounds}
            for (k, lab), rs in table.items()]
    if rows:
        outputs.save_table(rows, "fedcr_table9_nonaggregate",
                           units={"final_mean": "%", "final_se": "%", "total_bits": "bits"})
    return table


def seed_systems_table1(p: dict, fedlog) -> dict:
    """Part G: FedCR and FedCR-NA in FedLog's MNIST Table 1 setting beside FedAvg, FedPer, FedProto and FedLog-C
    (their shipped paper-setting runs, read for their first rounds); label -> Results; saved."""
    g, t1, get = p.S.table1, {}, p.get
    if not ex.dataset_available("mnist"):
        return t1
    for lab in ["FedAvg", "FedPer", "FedProto", "FedLog-C"]:
        if g.over:  # the smoke profile's own small setting
            t1[lab] = get([fedlog.table1_config("mnist", lab, seed=sd, rounds=g.rounds, **g.over)
                           for sd in g.seeds])
        else:
            full = get([fedlog.table1_config("mnist", lab, seed=sd) for sd in g.seeds])
            t1[lab] = None if full is None else [ex.first_rounds(r, g.rounds) for r in full]
    for lab, method in [("FedCR", "fedcr"), ("FedCR-NA", "fedcr_na")]:
        t1[lab] = get([plans.table1_run(p.profile, method, sd) for sd in g.seeds])
    if any(rs is None for rs in t1.values()):
        _missing("FedCR in FedLog's Table 1 setting", [plans.table1_run(p.profile, method, sd)
                                                       for _, method in [("FedCR", "fedcr"), ("FedCR-NA", "fedcr_na")]
                                                       for sd in g.seeds])
        return {}
    rows = [{**r, "seeds": len(g.seeds), "rounds": g.rounds}
            for r in stats.table_rows(t1, fedlog.THRESHOLD["mnist"], reference="FedLog-C")]
    outputs.save_table(rows, "table1_mnist_seed_systems_fedcr", units=stats.TABLE_UNITS)
    return t1


# ----------------------------------------------------------------------------------------------- the claims
def ditto_crosscheck(path) -> tuple[dict, dict]:
    """Part H: our Ditto against the FedCR authors' `main_fed_ditto.py` on our clients (scripts/fedcr_crosscheck.py's
    CSV at `path`, its settings beside it in .json): notebook 02's paired equivalence rule at every evaluation, the
    gap over the whole curve with seeds as the unit (and their code against itself), and the curves, drawn.
    Returns (the curves in points, the settings); both empty when the file is missing."""
    import json

    from ..fedlog.analysis import crosscheck as xc

    curves = xc.curves(path, model="Ditto", metric="acc_mean")
    if not curves:
        print(f"{path} is missing: run scripts/fedcr_crosscheck.py with a checkout of haozzh/FedCR")
        return {}, {}
    setting = json.loads(path.with_suffix(".json").read_text())["Ditto"]
    print(f"the cross-check's federation: {setting['clients']} clients, {setting['participation']:.0%} of them a "
          f"round, {setting['rounds']} rounds and the authors' final round (every client); the authors' commit "
          f"{setting['authors_commit'][:7]}; ours: {setting['our_config']}")
    eq = xc.agreement(curves, bound=xc.bound_at(curves))
    for line in [xc.verdict_line(curves, "Ditto"), *xc.gap_lines(curves)]:
        print(line)
    names = {"fedlib": "Ditto, fedlib", "authors": "Ditto, the FedCR authors' code",
             "authors_stream2": "Ditto, the authors' code, another random stream"}
    panel = {names[side]: {"method": "ditto", "acc": acc, "x": np.arange(acc.shape[1])}
             for side, acc in curves.items() if side in names}
    where = (f"FashionMNIST n1, {setting['clients']} clients, {setting['participation']:.0%} of them a round, "
             f"width 1024")
    fig = plots.accuracy_curves({where: panel}, "Ditto: our code against the FedCR authors' (personal models)",
                                xlabel="evaluation (after this many rounds; the last after their final round)")
    plots.caption(fig, "crosscheck", eq.seeds, setting["rounds"], note="lr 0.1, lambda 0.001, 10 local epochs")
    outputs.save_figure(fig, "fedcr_ditto_crosscheck")
    return curves, setting


_T2_SET = {"n1": "fedcr_table2_n1", "n2": "fedcr_table2_n2"}
# What the paper's number for an entry rests on, where a choice the paper left open decides it (the row's note)
REPRODUCTION_NOTES = {
    "Ditto": "the paper's Ditto tracks its FedAvg-FT within a median 0.40 points over Table 2's 8 columns; by a review "
             "of the authors' code, main_fed.py --method ditto never computes the proximal term, so it trains FedAvg "
             "with weight decay mu and fine-tunes the head: the row 'FedAvg-FT (weight decay 0.001: main_fed.py's "
             "Ditto)' runs that reading; ours follows main_fed_ditto.py at the paper's lambda 0.001",
    "FedRep": "depends on a learning rate the paper tuned and did not publish: the README's 0.01 gives 87.79 (seed 0), "
              "our screened 0.1 this row's number; the paper's lies between",
}


def beats_the_strongest_baseline(ledger, by_label: dict, partition: str, baselines: list, reported: dict, rounds):
    """Table 2 (FashionMNIST): FedCR beats the strongest of `baselines` (by mean final accuracy, named in the
    row's note), seed by seed; on n1 also FedRep (and FedAvg-FT when it is not the strongest: one comparison, one
    row), the paper's margins beside. `by_label` None: the column's runs are missing, and so are its rows."""
    finals = {lab: [final(r) for r in rs] for lab, rs in (by_label or {}).items()}
    every = finals and all(lab in finals for lab in baselines)  # the strongest is named only among them all
    strongest = max(baselines, key=lambda lab: np.mean(finals[lab])) if every else None  # FedAvg's is FedAvg-FT's
    common = dict(kind="claim", quote=QUOTES["table2"], rounds=rounds, run_set=_T2_SET[partition])
    out = [ledger.compare("FedCR", f"Table 2 ({partition})", f"FedCR is more accurate than the strongest baseline run on "
                          f"FashionMNIST {partition} (final accuracy after the fine-tune)", finals.get("FedCR"),
                          finals.get(strongest), ">", paper_value=reported["FedCR"], **common)]
    ledger.add_note(f"the strongest baseline: {strongest}" if strongest else "")
    ledger.add_note(rules.devices_note({name: by_label.get(name) for name in ("FedCR", strongest)}) if strongest
                    else "")
    if partition == "n1":
        for lab, shown in (("FedAvg", "FedAvg-FT"), ("FedRep", "FedRep")):
            if lab == strongest or (strongest is None and lab == "FedAvg"):
                continue  # the same test on the same numbers as the row above
            out.append(ledger.compare("FedCR", "Table 2 (n1)", f"FedCR is more accurate than {shown} on FashionMNIST n1",
                                      finals.get("FedCR"), finals.get(lab), ">",
                                      paper_value=round(reported["FedCR"] - reported[shown], 2), **common))
            ledger.add_note(rules.devices_note({name: by_label.get(name) for name in ("FedCR", lab)}) if by_label
                            else "")
    return out


def reproduces_table2(ledger, by_label: dict | None, partition: str, labels: list, reported: dict, spread: dict,
                      rounds) -> list[str]:
    """Table 2 (FashionMNIST): each method's number reproduced by the equivalence test (`ClaimsLedger.reproduced`),
    against the paper's mean and its standard error (Table 10's spread read as a standard deviation over its 3 seeds,
    so over sqrt(3)), quoting Table 10's cell. FedAvg is read before the fine-tune and FedAvg-FT, the same runs,
    after it. `by_label` None: the column's runs are missing, and so are the rows of `labels`."""
    out = []
    for lab in labels:
        rs = (by_label or {}).get(lab)
        read = [("FedAvg", Result.last), ("FedAvg-FT", Result.final)] if lab == "FedAvg" else \
            [("FedBABU" if lab.startswith("FedBabu") else lab, Result.final)]
        for shown, quantity in read:
            values = [100 * quantity(r) for r in rs] if rs else None
            made = ledger.reproduced("FedCR", f"Table 2 ({partition})", f"{shown}'s accuracy on FashionMNIST "
                                     f"{partition}", values or [], reported[shown], spread[shown] / 3 ** 0.5,
                                     quote=table10_cell("fashion_mnist", partition, shown), rounds=rounds,
                                     run_set=_T2_SET[partition], note=REPRODUCTION_NOTES.get(shown, ""))
            ledger.add_note(rules.devices_note({shown: rs}))  # its seeds run on two device types
            out.append(made)
    return out


def ditto_as_main_fed(ledger, results, reported: dict, spread: dict, rounds) -> str:
    """Ditto's second reading (the review's, from the authors' main_fed.py): FedAvg-FT with weight decay 0.001 against
    the paper's Ditto number on FashionMNIST n1, by the same equivalence test as the row of our Ditto
    (main_fed_ditto.py's), so that both readings stand beside each other. `results` None: its runs are not shipped."""
    from .plans import DITTO_AS_MAIN_FED

    values = [100 * Result.final(r) for r in results] if results else []
    return ledger.reproduced("FedCR", "Table 2 (n1)", f"Ditto's accuracy on FashionMNIST n1, read as {DITTO_AS_MAIN_FED}",
                             values, reported["Ditto"], spread["Ditto"] / 3 ** 0.5,
                             quote=table10_cell("fashion_mnist", "n1", "Ditto"), rounds=rounds,
                             run_set="fedcr_ditto_main_fed", note="the second reading of the paper's Ditto; the row "
                             "\"Ditto's accuracy on FashionMNIST n1\" is ours, main_fed_ditto.py's")


def drops_only_at_small_v(ledger, per_seed: dict, dataset: str, shown: str, dims: list, table3: dict, rounds):
    """Table 3: accuracy drops only at V <= 4: the lowest at V >= 8 against the highest at V <= 4, seed by seed."""
    high, low = [V for V in dims if V >= 8], [V for V in dims if V <= 4]
    if not (high and low):
        return None
    claim = f"accuracy drops only at V <= 4 ({shown}: the lowest accuracy at V >= 8 against the highest at V <= 4)"
    common = dict(kind="claim", quote=QUOTES["table3"], rounds=rounds, run_set="fedcr_table3",
                  stand_in=dataset == "mnist")
    if any(("dim", dataset, V) not in per_seed for V in high + low):  # its runs are missing
        return ledger.compare("FedCR", "Table 3", claim, None, None, ">", **common)
    worst_high = [min(v) for v in zip(*(per_seed[("dim", dataset, V)] for V in high))]
    best_low = [max(v) for v in zip(*(per_seed[("dim", dataset, V)] for V in low))]
    return ledger.compare("FedCR", "Table 3", claim, worst_high, best_low, ">",
                          paper_value=round(min(table3[V][1] for V in (8, 16, 32, 64)) - table3[4][1], 2), **common)


def beta_claims(ledger, per_seed: dict, dataset: str, shown: str, rounds) -> list:
    """Fig. 3(d): beta = 0 is worse than the best beta > 0 (named in the row's note); too large a beta degrades
    accuracy (seed by seed). Without the runs of every beta, the first row says "not run"."""
    positive = [b for name, d, b in per_seed if name == "beta" and d == dataset and b > 0]
    claim = f"beta = 0 is worse than the best beta > 0 ({shown})"
    common = dict(kind="claim", rounds=rounds, run_set="fedcr_beta", stand_in=dataset == "mnist")
    if not positive or ("beta", dataset, 0.0) not in per_seed:
        return [ledger.compare("FedCR", "Fig. 3(d)", claim, None, None, ">", quote=QUOTES["beta_zero"], **common)]
    best_b = max(positive, key=lambda b: np.mean(per_seed[("beta", dataset, b)]))
    out = [ledger.compare("FedCR", "Fig. 3(d)", claim, per_seed[("beta", dataset, best_b)],
                          per_seed[("beta", dataset, 0.0)], ">", quote=QUOTES["beta_zero"], **common)]
    ledger.rows[-1].note = f"the best beta > 0: {best_b:g}"
    if len(positive) > 1 and best_b != max(positive):
        out.append(ledger.compare("FedCR", "Fig. 3(d)", f"too large a beta degrades accuracy ({shown}: beta "
                                  f"{best_b:g} against {max(positive):g})", per_seed[("beta", dataset, best_b)],
                                  per_seed[("beta", dataset, max(positive))], ">", quote=QUOTES["beta_large"],
                                  **common))
    return out


def kl_separates(ledger, silhouettes: dict, partition: str, rounds) -> str:
    """Fig. 2: with the KL term the class clusters of the Gaussian means are more separated (silhouette, seed 0);
    "not run" without them."""
    there = (partition, 0.0) in silhouettes
    verdict = ledger.compare("FedCR", "Fig. 2", f"with the KL term (beta = 5e-4) the class clusters of the Gaussian "
                             f"means are more separated than with beta = 0 (silhouette, {partition}; seed 0)",
                             [silhouettes[(partition, 5e-4)]] if there else None,
                             [silhouettes[(partition, 0.0)]] if there else None, ">", rounds=rounds, kind="claim",
                             quote=QUOTES["fig2_n1" if partition == "n1" else "fig2_n2"])
    if not there:  # its runs are live (trained, then one client trains on), so nothing of them is shipped
        ledger.rows[-1].note = (f"its four views are not cached or shipped: `scripts/fedcr_fig2_views.py --profile "
                                f"{ledger.profile}` computes them, `--pack` ships them")
    return verdict


def na_beats_local(ledger, table: dict, k: int, table9_paper: dict, rounds) -> str:
    """Table 9: FedCR-NA beats local training with k classes per client, seed by seed ("not run" without them)."""
    each = lambda lab: [final(r) for r in table[(k, lab)]] if (k, lab) in table else None  # noqa: E731
    return ledger.compare("FedCR", "Table 9", f"FedCR-NA beats local training (FashionMNIST, k = {k} classes per "
                          "client)", each("FedCR-NA"), each("Local"),
                          ">", rounds=rounds, paper_value={kk: round(table9_paper[kk]["FedCR-NA"]
                                                                     - table9_paper[kk]["Local"], 2)
                                                           for kk in table9_paper},
                          kind="claim", quote=QUOTES["table9"], run_set="fedcr_table9", stand_in=True)


def fedlog_beats(ledger, t1: dict, other: str, rounds) -> str:
    """FedLog's Table 1 setting: FedLog-C is more accurate than FedCR (or FedCR-NA), best round, seed by seed ("not
    run" without the runs). An extension: FedCR is not in FedLog's Table 1."""
    best = lambda lab: [100 * r.best() for r in t1[lab]] if lab in t1 else None  # noqa: E731
    return ledger.compare("FedLog", "Table 1 (seed systems)", f"FedLog-C is more accurate than {other} in FedLog's "
                          "MNIST setting (best round)", best("FedLog-C"), best(other), ">", rounds=rounds,
                          kind="extension", run_set="fedcr_seed_systems")


def record_crosscheck(p: dict, ditto_check: tuple[dict, dict]):
    """Part H's claims in notebook 06's ledger of scale "reduced" (the cross-check's federation is smaller than
    Table 2's, and its `where` names it), saved; returns the ledger, or None when the cross-check is missing."""
    from ..fedlog.analysis import crosscheck as xc

    curves, setting = ditto_check
    if not curves:
        return None
    ledger = rules.ClaimsLedger(NOTEBOOK, p.profile, scale="reduced")
    xc.record(ledger, "FedCR", f"Ditto against its authors' code (FashionMNIST n1, {setting['clients']} clients, "
              f"{setting['participation']:.0%} a round)", "Ditto", curves)
    ledger.save()
    return ledger


def record(p: dict, table: dict, per_seed: dict, silhouettes: dict, t9: dict, t1: dict):
    """Notebook 06's claims, saved; returns the ledger."""
    S = p.S
    rounds = lambda d: plans.rounds_label(p.profile, [d])  # noqa: E731  (the paper's differ by dataset)
    ledger = rules.ClaimsLedger(NOTEBOOK, p.profile)
    for (d, q), by_label in table.items():
        if d == "fashion_mnist":
            beats_the_strongest_baseline(ledger, by_label, q, [lab for lab in p.labels if lab != "FedCR"],
                                         TABLE2[("fashion_mnist", q)], rounds(d))
            if p.profile == "paper":  # the other profiles' models, data and rounds are reduced
                reproduces_table2(ledger, by_label, q, p.labels, TABLE2[("fashion_mnist", q)],
                                  TABLE10_SPREAD[("fashion_mnist", q)], rounds(d))
                if q == "n1":
                    second = plans.DITTO_MAIN_FED
                    ditto_as_main_fed(ledger, p.get([c for _, c in second.runs()]), TABLE2[(d, q)],
                                      TABLE10_SPREAD[(d, q)], rounds(d))
    if p.dim_sets:  # the first dataset's (runs missing: "not run")
        d = p.dim_sets[0]
        drops_only_at_small_v(ledger, per_seed, d, protocol.SHOWN[d], S.dims, TABLE3, rounds(d))
    for d in p.beta_sets:
        beta_claims(ledger, per_seed, d, protocol.SHOWN[d], rounds(d))
    if ex.dataset_available("mnist"):
        for q in ("n1", "n2"):
            kl_separates(ledger, silhouettes, q, S.fig2.rounds)
    for k in S.table9.ks if p.nonagg_set else []:
        na_beats_local(ledger, t9, k, TABLE9, S.table9.rounds)
    if ex.dataset_available("mnist"):
        for other in ("FedCR", "FedCR-NA"):
            fedlog_beats(ledger, t1, other, S.table1.rounds)
    ledger.save()
    return ledger
