"""Notebook 02 (FedLog's Table 1 and Table A.1, the augmentation and beta ablations, FedDBE against its authors'
code): its runs, tables and figures, and its claims as functions of Results and of the tables' rows (tested on
made-up numbers in tests/test_fedlog_claims.py). Accuracies in percent. `fedlog` is the package, passed in so that
this module does not import its own package."""
from __future__ import annotations

import numpy as np

from ... import outputs, plots, stats
from .analysis import crosscheck as feddbe_xcheck
from ... import claims as rules
from ... import experiments as ex
from . import tables
from . import figures

NOTEBOOK = "02_communication_cost"


def plan(profile: str, fedlog) -> dict:
    """Every run notebook 02 reads at `profile`, narrowed by the knobs (FEDLIB_DATASETS, _SEEDS, _PARTS, _METHODS):
    {"settings", "table1" (available datasets), "chosen", "every_run", "t1": dataset -> label -> [Config]}."""
    S = fedlog.table1_settings(profile)
    table1 = {d: s for d, s in S["table1"].items() if ex.dataset_available(d)}
    every = [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], **s["over"])
             for d, s in table1.items() for lab in s["methods"] for sd in s["seeds"]]
    every += [c for (d, k), s in S["tableA1"].items() if ex.dataset_available(d)
              for c in fedlog.table_a1_configs(d, k, s)]
    every += [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], augment=aug, **s["over"])
              for d, s in S["augment"].items() if ex.dataset_available(d)
              for lab in fedlog.AUGMENTED for aug in (False, True) for sd in s["seeds"]]
    every += [fedlog.table1_config(d, "FedLog-C", seed=sd, rounds=s["rounds"], options={"beta": b} if b else {},
                                   **s["over"])
              for d, s in S["beta"].items() if ex.dataset_available(d) for b in [0.0] + fedlog.BETAS
              for sd in s["seeds"]]
    t1 = {d: {lab: [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], **s["over"]) for sd in s["seeds"]]
              for lab in s["methods"]} for d, s in table1.items()}
    return dict(profile=profile, settings=S, table1=table1, chosen=fedlog.chosen_methods(), every_run=every, t1=t1,
                paper_entries=list(fedlog.TABLE1_METHODS))


def read(results, p: dict) -> tuple[dict, list[tuple[str, str]]]:
    """Table 1's Results that are there (dataset -> label -> [Result]) and the rows that are not, (dataset, label)."""
    runs = {d: {lab: results(cfgs) for lab, cfgs in by.items() if results.has(cfgs)} for d, by in p["t1"].items()}
    runs = {d: by_label for d, by_label in runs.items() if by_label}  # a dataset with no row there is not drawn
    absent = [(d, lab) for d, by in p["t1"].items() for lab, cfgs in by.items() if not results.has(cfgs)]
    if absent:  # the table draws the rows that are shipped; the verdicts wait for every row (a rival may be missing)
        print(results.missing_note(f"Table 1's rows {', '.join(f'{d} {lab}' for d, lab in absent)}")
              + "; the verdicts are not remade")
    return runs, absent


def table1(runs: dict, p: dict, fedlog) -> tuple[dict, list]:
    """Table 1 per dataset (the numbers and the paper's layout, saved); returns dataset -> the paper's entries' rows,
    for the claims, and the pretty tables to show."""
    summary, shown = {}, []
    for d, by_label in runs.items():
        s = p["table1"][d]
        numbers, pretty, rows = tables.table1(by_label, d, len(s["seeds"]), s["rounds"], p["profile"])
        summary[d] = {r["method"]: r for r in rows if r["method"] in p["paper_entries"]}
        print(f"{d}: threshold {fedlog.THRESHOLD[d]:.0%}")
        keep = "method" if p["chosen"] else None  # a run for some methods keeps the other methods' rows
        outputs.save_table(numbers, f"table1_{d}", keep_other=keep)
        shown.append(outputs.save_table(pretty, f"table1_{d}_pretty", keep_other=keep))
    return summary, shown


def bits_per_round(runs: dict):
    """The bits of one (the last) round, from the ledger; saved as comm_bits_per_round."""
    rows = [{"dataset": d, "method": lab, "uplink_bits": rs[0].last("up_bits"), "downlink_bits": rs[0].last("down_bits")}
            for d, by_label in runs.items() for lab, rs in by_label.items()]
    return outputs.save_table(rows, "comm_bits_per_round", keep_other=("dataset", "method")) if rows else None


def accuracy_vs_bits(runs: dict, p: dict, fedlog) -> None:
    """Accuracy against communicated bits and against rounds, per dataset."""
    methods = {**fedlog.TABLE1_METHODS, **fedlog.EXTRA_METHODS}
    for d, by_label in runs.items():
        curves = {lab: {"method": methods[lab][0], "bits": np.cumsum(rs[0].bits_up + rs[0].bits_down),
                        "acc": np.array([r.curve() for r in rs]) * 100} for lab, rs in by_label.items()}
        fig = figures.accuracy_vs_bits(curves, fedlog.THRESHOLD[d], f"{d}: mean client accuracy (mean ± SE over seeds)")
        plots.caption(fig, p["profile"], len(p["table1"][d]["seeds"]), p["table1"][d]["rounds"])
        outputs.save_figure(fig, f"accuracy_vs_bits_{d}")  # the paper profile's name ends in _paper


def table_a1(results, p: dict, fedlog) -> tuple[list, dict]:
    """Table A.1 per (dataset, classes per client) whose runs are there: the tables to show, and (dataset, classes)
    -> (label -> Results, the threshold, rounds) for the claims (`table_a1_markers`)."""
    shown, found = [], {}
    for (d, k), s in p["settings"]["tableA1"].items():
        cfgs = fedlog.table_a1_configs(d, k, s) if ex.dataset_available(d) else []
        got = results.get(cfgs, f"Table A.1 ({d}, {k} classes per client)") if cfgs else None
        if got is not None:
            n = len(s["seeds"])
            by_label = {lab: got[i * n:(i + 1) * n] for i, lab in enumerate(fedlog.TABLE_A1_METHODS)}
            rows, threshold = tables.table_a1(by_label, d, k, len(s["seeds"]), s["rounds"])
            print(f"{d}, {k} classes per client: threshold {threshold:.0%} (every method reaches it in every seed)")
            shown.append(outputs.save_table(rows, f"tableA1_{d}_{k}classes"))
            found[(d, k)] = (by_label, threshold, s["rounds"])
    return shown, found


def table_a1_markers(ledger, found: dict, fedlog) -> list[str]:
    """Table A.1's markers against FedLog-C, a row each (`markers`), at the level its caption's arrows can be read at
    (`fedlog.TABLE_A1_MARKER_LEVEL`), with its threshold (`stats.common_threshold` of our runs), for each (dataset,
    classes per client) of `found` (`table_a1`'s) that the paper marks."""
    out = []
    for (d, k), (by_label, threshold, rounds) in found.items():
        if (d, k) in fedlog.TABLE_A1_MARKERS:
            out += markers(ledger, f"Table A.1 ({d}, {k} classes per client)", by_label,
                           threshold, fedlog.TABLE_A1_MARKERS[(d, k)], fedlog.TABLE_A1_MARKER_LEVEL, rounds)
    return out


def augmentation(results, p: dict, fedlog):
    """The augmentation ablation: with and without crop-and-flip, which lies nearer the paper; the table (or None)."""
    rows = []
    for d, s in p["settings"]["augment"].items():
        wanted = {lab: {aug: [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], augment=aug, **s["over"])
                              for sd in s["seeds"]] for aug in (False, True)} for lab in fedlog.AUGMENTED}
        if ex.dataset_available(d) and results.has([c for by in wanted.values() for cs in by.values() for c in cs]):
            pairs = {lab: {aug: results(cs) for aug, cs in by.items()} for lab, by in wanted.items()}
            rows += tables.augmentation(pairs, d, len(s["seeds"]), s["rounds"])
        elif ex.dataset_available(d):
            print(results.missing_note(f"the augmentation ablation ({d})"))
    if not rows:
        return None
    every = all(r["nearer_the_paper"] == "with" for r in rows)
    print("Table 1 " + ("should use augmentation: every method's paper number is nearer the augmented run" if every
                        else "stays without augmentation: not every method's paper number is nearer the augmented run"))
    return outputs.save_table(rows, "augmentation_ablation", keep_other=("dataset", "method"))


def beta_ablation(results, p: dict, fedlog):
    """FedLog-C's second weight beta; the table (or None)."""
    table = None
    for d, s in p["settings"]["beta"].items():
        wanted = {b: [fedlog.table1_config(d, "FedLog-C", seed=sd, rounds=s["rounds"],
                                           options={"beta": b} if b else {}, **s["over"]) for sd in s["seeds"]]
                  for b in [0.0] + fedlog.BETAS}
        if ex.dataset_available(d) and not results.has([c for cs in wanted.values() for c in cs]):
            print(results.missing_note(f"the beta ablation ({d})"))
        elif ex.dataset_available(d):
            rows, what = tables.beta_ablation({b: results(cs) for b, cs in wanted.items()}, d, len(s["seeds"]),
                                              s["rounds"])
            print(what)
            table = outputs.save_table(rows, "fedlog_c_beta_ablation", keep_other=("dataset", "beta"))
    return table


def _crosscheck_diagnostics(curves: dict, evaluations: int, stand_ins: list | None) -> None:
    """Beside the rule: ours against the mean of the authors' two streams, the whole-curve gap with seeds as the
    unit (and the same for their code against itself), and how often their own code passes the rule in our place."""
    both = feddbe_xcheck.versus_both_streams(curves)
    if both is not None:
        mean, edge = both
        print(f"  against the mean of the authors' first two streams: mean difference {mean[1:].min():+.2f} to "
              f"{mean[1:].max():+.2f} points over evaluations 1-{len(mean) - 1} (positive at "
              f"{int((mean[1:] > 0).sum())}), |mean| + t SE up to {edge.max():.2f}")
    for line in feddbe_xcheck.gap_lines(curves):
        print(line)
    if stand_ins is not None:
        passing = sorted(r.passing for r in stand_ins)
        print(f"  the authors' code in our place ({len(curves) - 1} of their streams, every assignment of "
              f"candidate, reference and floor partner): {passing[0]} to {passing[-1]} of {evaluations} "
              f"evaluations within their bound (median {np.median(passing):g}), "
              f"{sum(p == evaluations for p in passing)} of {len(passing)} assignments pass")


def crosscheck(path) -> None:
    """FedDBE against its authors' code: the paired equivalence test (TOST at 5%) and the curves, per model."""
    for model in feddbe_xcheck.models(path):
        curves = feddbe_xcheck.curves(path, model=model)
        eq = feddbe_xcheck.agreement(curves, bound=feddbe_xcheck.bound_at(curves))
        print(feddbe_xcheck.verdict_line(curves, model or "cnn_mnist_nodrop"))
        stand_ins = feddbe_xcheck.replicas(curves)
        _crosscheck_diagnostics(curves, len(eq.equivalent), stand_ins)
        names = {"authors": "FedDBE, the authors' code", "fedlib": "FedDBE, fedlib",
                 "authors_stream2": "FedDBE, the authors' code, another random stream"}
        panel = {names[side]: {"method": "feddbe", "acc": acc} for side, acc in curves.items() if side in names}
        fig = plots.accuracy_curves({f"MNIST, Table 1's federation, {model or 'cnn_mnist_nodrop'}": panel},
                                    "FedDBE: our code against its authors' (accuracy over all test samples)",
                                    ylabel="test accuracy, all samples (%)",
                                    xlabel="evaluation (after this many rounds of training)")
        plots.caption(fig, "crosscheck", eq.seeds, curves["fedlib"].shape[1] - 1, note="SGD 0.005, kappa 50, rho 1")
        outputs.save_figure(fig, "feddbe_crosscheck" + ("" if model in (None, "cnn_mnist_nodrop") else f"_{model}"))
        if stand_ins is not None:
            fig = figures.replica_passes(stand_ins, int(eq.equivalent.sum()), len(eq.equivalent), model or "")
            plots.caption(fig, "crosscheck", eq.seeds, curves["fedlib"].shape[1] - 1,
                          note=f"{len(curves) - 1} streams of the authors' code per seed")
            outputs.save_figure(fig, f"feddbe_crosscheck_replicas_{model}")
    if not feddbe_xcheck.models(path):
        print(f"{path} is missing: run scripts/feddbe_crosscheck.py with a checkout of TsingZ0/DBE")


# ----------------------------------------------------------------------------------------------- the claims
def _per_seed(results, f) -> list[float]:
    return [f(r) for r in results]


def best_accuracy(ledger, dataset: str, rows: dict, runs: dict, rounds) -> list[str]:
    """Table 1: FedLog-C reaches the best accuracy, at its best round and at the final round, against the strongest
    other entry by that mean, seed by seed."""
    others = [m for m in rows if m != "FedLog-C"]
    out = []
    for name, f, key in (("best round", lambda r: 100 * r.best(), "accuracy_mean"),
                         ("final round", lambda r: 100 * r.last(), "final_accuracy_mean")):
        rival = max(others, key=lambda m: rows[m][key])
        out.append(ledger.compare("FedLog", f"Table 1 ({dataset})", f"FedLog-C reaches the best accuracy ({name}; "
                                  "against the strongest other entry by its mean, named in the margin)",
                                  _per_seed(runs["FedLog-C"], f), _per_seed(runs[rival], f), ">", rounds=rounds))
        ledger.rows[-1].note = f"the strongest other entry: {rival}"  # not in the claim: it differs by profile
    return out


def least_communication(ledger, dataset: str, rows: dict, runs: dict, threshold: float, rounds) -> str:
    """Table 1: FedLog-C needs the least communication (bits to the threshold, or to the best round) against the
    cheapest other entry, seed by seed."""
    others = [m for m in rows if m != "FedLog-C"]
    bits = _bits(threshold)
    rival = min(others, key=lambda m: rows[m]["bits_to_threshold"])
    verdict = ledger.compare("FedLog", f"Table 1 ({dataset})", "FedLog-C needs the least communication (bits to the "
                             "threshold, or to the best round; against the cheapest other entry by its mean, named in "
                             "the margin)", _per_seed(runs["FedLog-C"], bits), _per_seed(runs[rival], bits), "<",
                             rounds=rounds)
    ledger.rows[-1].note = f"the cheapest other entry: {rival}"
    return verdict


def best_with_least(ledger, dataset: str, rows: dict, seeds: int, rounds) -> str:
    """Table 1: FedLog-C reaches the best accuracy with the least communication: the worse of its ranks by
    best-round accuracy and by bits is 1."""
    others = [m for m in rows if m != "FedLog-C"]
    acc_rank = 1 + sum(rows[m]["accuracy_mean"] > rows["FedLog-C"]["accuracy_mean"] for m in others)
    bits_rank = 1 + sum(rows[m]["bits_to_threshold"] < rows["FedLog-C"]["bits_to_threshold"] for m in others)
    verdict = ledger.record("FedLog", f"Table 1 ({dataset})", "FedLog-C reaches the best accuracy with the least "
                            "communication (ours: the worse of its ranks by best-round accuracy and by bits)",
                            max(acc_rank, bits_rank), 1, "ours <= reference", seeds=seeds, rounds=rounds)
    print(f"{dataset}: \"FedLog-C reaches the best accuracy with the least communication\" {verdict} on our numbers: "
          f"FedLog-C ranks {acc_rank} by best-round accuracy and {bits_rank} by bits")
    return verdict


def reproduced(ledger, dataset: str, method: str, row: dict, paper: float, paper_se: float | None, seeds: int,
               rounds) -> list[str]:
    """Table 1: `method`'s accuracy is reproduced within 1.5 points (the coarse row) and, with 2 or more seeds,
    within two standard errors of the difference (`ClaimsLedger.reproduced`)."""
    return ledger.reproduced("FedLog", f"Table 1 ({dataset})", f"{method}'s accuracy", row["accuracy_mean"],
                             row["accuracy_se"], seeds, paper, paper_se, rounds)


def _bits(threshold: float):
    return lambda r: stats.bits_to_threshold(r.curve(), r.curve("up_bits"), r.curve("down_bits"), threshold)[0]


LOWER, HIGHER = "⇓↓", "⇑↑"  # a paper marker's direction, whichever of its levels the glyph writes


def markers(ledger, where: str, runs: dict, threshold: float, paper: dict, level: float, rounds) -> list[str]:
    """The paper's significance markers against FedLog-C (`paper`: method -> (its accuracy's marker, its
    communication cost's), "" for none), one row each: does our exact one-tailed Wilcoxon signed-rank test
    (`stats.wilcoxon_signed_rank`, zero differences dropped and counted) at the caption's `level` give the same
    marker, paired by seed? Best-round accuracy and bits to `threshold`, as the table. A marked row holds when our p
    in the marker's direction is below `level`; an unmarked one when neither direction's is. With n seeds the
    smallest p is 1/2^n: with too few to reach `level`, each row says so instead of failing."""
    ref = runs.get("FedLog-C")
    need = next(n for n in range(1, 64) if 0.5 ** n < level)
    out = []
    for method, marks in paper.items():
        if method not in runs or ref is None:
            continue
        for (quantity, f), mark in zip((("accuracy", lambda r: 100 * r.best()),
                                        ("communication cost", _bits(threshold))), marks):
            ours, theirs = _per_seed(runs[method], f), _per_seed(ref, f)
            said = (f"significantly {'lower' if mark in LOWER else 'higher'} than FedLog-C's (the paper's {mark}"
                    if mark else "not significantly different from FedLog-C's in either direction (the paper marks "
                    "none")
            claim = f"{method}'s {quantity} is {said}; one-tailed Wilcoxon signed-rank, p < {level:g})"
            if len(ours) < need:
                out.append(ledger.cannot_judge("FedLog", where, claim, f"{len(ours)} seeds: the smallest one-tailed "
                                               f"p is 1/2^{len(ours)} = {0.5 ** len(ours):.3g}, not below {level:g} "
                                               f"(needs {need})"))
                continue
            less, greater = (stats.wilcoxon_signed_rank(ours, theirs, alt) for alt in ("less", "greater"))
            if mark:
                test = less if mark in LOWER else greater
                verdict = ledger.record("FedLog", where, claim, test.p, level, "ours < reference", paper_value=mark,
                                        seeds=len(ours), rounds=rounds)
                said = f"p {test.p:.3g} ({'lower' if mark in LOWER else 'higher'}, {len(ours)} seeds)"
            else:
                test = min(less, greater, key=lambda t: t.p)
                verdict = ledger.record("FedLog", where, claim, test.p, level, "ours >= reference", paper_value="",
                                        seeds=len(ours), rounds=rounds)
                said = f"p {test.p:.3g} ({'lower' if test is less else 'higher'}, the likelier direction, {len(ours)} seeds)"
            if test.zeros:
                said += f"; {test.zeros} of {len(ours)} seeds equal on both sides, dropped by the test"
            ledger.rows[-1].note = said  # the exact p in the margin column (the rule compares it with the level)
            out.append(verdict)
    return out


def equivalent_to_authors(ledger, path) -> list[str]:
    """FedDBE's cross-check, per model in `path` (scripts/feddbe_crosscheck.py's CSV): our FedDBE is equivalent to
    its authors' code at every evaluation (the paired TOST at 5%, `crosscheck.agreement`, with the bound the larger of
    1 point and the authors' noise floor). Ours: how many evaluations are not; with fewer than the seeds the rule
    needs, the row says so."""
    out = []
    for model in feddbe_xcheck.models(path):
        where = f"Table 1 (FedDBE against its authors' code, {model or 'cnn_mnist_nodrop'})"
        out += feddbe_xcheck.record(ledger, "FedLog", where, "FedDBE", feddbe_xcheck.curves(path, model=model))
    return out


def _summary_lines(d: str, rows: dict) -> None:
    rank = sorted(rows, key=lambda m: -rows[m]["accuracy_mean"])
    print(f"{d}: ranking by best-round accuracy (Table 1's reading): " + " > ".join(rank))
    final_rank = sorted(rows, key=lambda m: -rows[m]["final_accuracy_mean"])
    print(f"{d}: ranking by final-round accuracy:                  " + " > ".join(final_rank))
    print(f"{d}: least communication to the threshold (or best round): "
          f"{min(rows, key=lambda m: rows[m]['bits_to_threshold'])}")


def ranking(ledger, d: str, rows: dict, p: dict, fedlog):
    """Kendall's tau between our ranking and the paper's (against the paper setting's cached runs in a shorter
    profile); its row, and the ranking table (saved)."""
    s = p["table1"][d]
    here, full, reference = {m: r["accuracy_mean"] for m, r in rows.items()}, fedlog.TABLE1_PROFILES["paper"]["table1"].get(d), None
    if p["profile"] != "paper" and full:  # the paper setting's runs, where at least 2 seeds of every method are cached
        cfg = lambda lab, sd: fedlog.table1_config(d, lab, seed=sd, rounds=full["rounds"])  # noqa: E731
        cached = [sd for sd in range(10) if all(ex.is_cached(cfg(lab, sd)) for lab in here)]
        print(f"{d}: the paper setting's runs cached for seeds {cached} ({full['rounds']} rounds)")
        if len(cached) >= 2:
            reference = {r["method"]: r for r in stats.table_rows({lab: [ex.run(cfg(lab, sd)) for sd in cached]
                                                                   for lab in here}, fedlog.THRESHOLD[d], "FedLog-C")}
    out, lines, tau = tables.ranking(here, d, reference)
    print("\n".join(lines))
    if tau is not None:
        ledger.record("FedLog", f"Table 1 ({d})", "our ranking by accuracy agrees with the paper's (Kendall tau >= 0.5)",
                      tau, 0.5, "ours >= reference", seeds=len(s["seeds"]), rounds=s["rounds"])
    return outputs.save_table(out, f"table1_{d}_ranking")


def record(summary: dict, runs: dict, absent: list, p: dict, fedlog, a1: dict | None = None) -> tuple[object, list]:
    """Notebook 02's claims (`a1`: Table A.1's runs, as `table_a1` returns them) and its rankings; the ledger is saved
    as `saving` decides (not when a drawn dataset misses a row or some methods were chosen). Returns it and the
    ranking tables."""
    ledger = rules.ClaimsLedger(NOTEBOOK, p["profile"])
    for d, rows in summary.items():
        _summary_lines(d, rows)
        s = p["table1"][d]
        if "FedLog-C" in rows and len(rows) > 1:
            best_accuracy(ledger, d, rows, runs[d], s["rounds"])
            least_communication(ledger, d, rows, runs[d], fedlog.THRESHOLD[d], s["rounds"])
            best_with_least(ledger, d, rows, len(s["seeds"]), s["rounds"])
            if d in fedlog.TABLE1_MARKERS:
                markers(ledger, f"Table 1 ({d})", runs[d], fedlog.THRESHOLD[d], fedlog.TABLE1_MARKERS[d],
                        fedlog.TABLE1_MARKER_LEVEL, s["rounds"])
        for m in ("FedAvg", "FedLog", "FedLog-C"):
            if m in rows and m in fedlog.TABLE1.get(d, {}):
                paper = fedlog.TABLE1[d][m][0]
                print(f"{d}: {m} {rows[m]['accuracy_mean']:.2f} vs paper {paper:.2f} "
                      f"({rows[m]['accuracy_mean'] - paper:+.2f} points, {s['rounds']} rounds here)")
                if m != "FedAvg":
                    reproduced(ledger, d, m, rows[m], paper, fedlog.TABLE1_SE.get(d, {}).get(m), len(s["seeds"]),
                               s["rounds"])
    table_a1_markers(ledger, a1 or {}, fedlog)
    if p["profile"] == "paper":  # the cross-check's curves are one file, whatever the profile; judged once
        from ...paths import project_root

        equivalent_to_authors(ledger, project_root() / "figures" / "feddbe_crosscheck.csv")
    shown = []
    for d, rows in summary.items():
        if p["chosen"]:  # a ranking of some methods only would mislead
            break
        shown.append(ranking(ledger, d, rows, p, fedlog))
    save, keep_other = saving(p, runs, absent, fedlog.chosen_datasets())
    if save:
        ledger.save(keep_other_where=keep_other)
    return ledger, shown


def saving(p: dict, runs: dict, absent: list[tuple[str, str]], chosen_datasets: list[str]) -> tuple[bool, bool]:
    """Whether notebook 02 saves its ledger, and whether the file keeps the saved rows of tables this run has none
    for. Not saved when some methods were chosen (a ranking of some would mislead) or a drawn dataset misses a row (a
    rival may be missing: claims half made); a dataset with no row there at all (not shipped yet) is left out, and
    the file keeps its rows, as a run on some datasets (`chosen_datasets`) keeps the others'."""
    left_out = [d for d in p.get("t1", {}) if d not in runs]
    partial = [(d, lab) for d, lab in absent if d not in left_out]
    return not p["chosen"] and bool(p["settings"]["table1"]) and not partial, bool(chosen_datasets or left_out)
