"""Notebook 02 (FedLog's Table 1 and Table A.1, the augmentation and beta ablations, FedDBE against its authors'
code): its runs, tables and figures, and its claims as functions of Results and of the tables' rows (tested on
made-up numbers in tests/test_fedlog_claims.py). Accuracies in percent. The paper's numbers and the notebook's plans
come from their role modules (`reported`, `plans`), never the package passed in."""
from __future__ import annotations

import numpy as np

from ... import outputs, plots, stats
from .analysis import crosscheck as feddbe_xcheck
from ... import claims as rules
from ... import experiments as ex
from . import tables
from . import figures, plans
from .plans import (AUGMENTED, BETAS, EXTRA_METHODS, TABLE1_METHODS, TABLE_A1_METHODS, chosen_datasets, chosen_methods,
                    table1_config, table1_settings, table_a1_configs)
from .reported import (QUOTES, TABLE1, TABLE1_CELLS, TABLE1_MARKER_LEVEL, TABLE1_MARKERS, TABLE1_SE, TABLE_A1_CELLS,
                       TABLE_A1_MARKER_LEVEL, TABLE_A1_MARKERS, THRESHOLD)

NOTEBOOK = "02_communication_cost"
NAN = float("nan")


# Table 1 and Table A.1 in two regimes: the stated protocol (appendix E: "Training data are normalized and randomly
# cropped and flipped") decides the claims; the runs without augmentation stay beside it as a labelled ablation.
REGIMES = ("augmented", "plain")
REGIME_WORDS = {"augmented": "with augmentation (the stated protocol)", "plain": "without augmentation (ablation)"}
RUN_SETS = {("table1", "augmented", "mnist"): "table1_augmented", ("table1", "plain", "mnist"): "table1",
            ("table1", "augmented", "fashion_mnist"): "table1_fashion_mnist",
            ("tableA1", "augmented", "mnist"): "tableA1_augmented", ("tableA1", "plain", "mnist"): "tableA1"}
SAME_AS_AUGMENTED = "FedDBE (FedLog's augmentation)"  # with augmentation it is FedDBE itself: one entry there
STAND_IN_FOR = {"fashion_mnist": "cifar10"}  # a stand-in dataset's claims quote the column it stands in for


def _where(table: str, regime: str) -> str:
    """"Table 1 (mnist)" for the stated protocol; "Table 1 (mnist, without augmentation)" for the ablation."""
    return table if regime == "augmented" else table[:-1] + ", without augmentation)"


def plan(profile: str) -> dict:
    """Every run notebook 02 reads at `profile`, narrowed by the knobs (FEDLIB_DATASETS, _SEEDS, _PARTS, _METHODS):
    {"settings", "table1" (available datasets), "chosen", "every_run", "t1": regime -> dataset -> label -> [Config],
    "a1": regime -> (dataset, classes) -> [Config]}."""
    S = table1_settings(profile)
    table1 = {d: s for d, s in S["table1"].items() if ex.dataset_available(d)}
    over = {"augmented": dict(augment=True), "plain": {}}
    t1 = {reg: {d: {lab: [table1_config(d, lab, seed=sd, rounds=s["rounds"], **{**s["over"], **over[reg]})
                          for sd in s["seeds"]]
                    for lab in s["methods"] if not (reg == "augmented" and lab == SAME_AS_AUGMENTED)}
                for d, s in table1.items()} for reg in REGIMES}
    a1 = {reg: {(d, k): table_a1_configs(d, k, {**s, "over": {**s["over"], **over[reg]}})
                for (d, k), s in S["tableA1"].items() if ex.dataset_available(d)} for reg in REGIMES}
    every = [c for reg in REGIMES for by in t1[reg].values() for cfgs in by.values() for c in cfgs]
    every += [c for reg in REGIMES for cfgs in a1[reg].values() for c in cfgs]
    every += [table1_config(d, lab, seed=sd, rounds=s["rounds"], augment=aug, **s["over"])
              for d, s in S["augment"].items() if ex.dataset_available(d)
              for lab in AUGMENTED for aug in (False, True) for sd in s["seeds"]]
    every += [table1_config(d, "FedLog-C", seed=sd, rounds=s["rounds"], options={"beta": b} if b else {},
                                   **s["over"])
              for d, s in S["beta"].items() if ex.dataset_available(d) for b in [0.0] + BETAS
              for sd in s["seeds"]]
    every = list({c.key(): c for c in every}.values())  # a run two parts read is run once
    return dict(profile=profile, settings=S, table1=table1, chosen=chosen_methods(), every_run=every, t1=t1,
                a1=a1, paper_entries=list(TABLE1_METHODS))


def read(results, p: dict) -> tuple[dict, dict]:
    """Table 1's Results that are there (regime -> dataset -> label -> [Result], a label only with all its seeds)
    and, per regime, the rows that are not, (dataset, label)."""
    runs, absent = {}, {}
    for reg in REGIMES:
        runs[reg] = {d: {lab: results(cfgs) for lab, cfgs in by.items() if results.has(cfgs)}
                     for d, by in p["t1"][reg].items()}
        absent[reg] = [(d, lab) for d, by in p["t1"][reg].items() for lab, cfgs in by.items() if not results.has(cfgs)]
        if absent[reg]:
            cfgs = [c for d, lab in absent[reg] for c in p["t1"][reg][d][lab]]
            print(f"Table 1 {REGIME_WORDS[reg]}: {len(absent[reg])} of {sum(map(len, p['t1'][reg].values()))} entries "
                  f"not all cached or shipped; their claims wait for them (`{plans.commands(cfgs)}`)")
    return runs, absent


def regimes_table(results, p: dict):
    """Each Table 1 entry in both regimes beside the paper's number: best-round accuracy (mean +- SE over the seeds
    that are there, and how many: an entry shipped in part shows its seeds) and bits to the threshold; saved as
    table1_<dataset>_regimes. Returns the tables."""
    shown = []
    for d, s in p["table1"].items():
        rows = []
        for lab in s["methods"]:
            row = {"method": lab, "paper accuracy (%)": TABLE1.get(d, {}).get(lab, (NAN,))[0]}
            for reg in REGIMES:
                cfgs = p["t1"][reg][d].get("FedDBE" if reg == "augmented" and lab == SAME_AS_AUGMENTED else lab, [])
                got = [results([c])[0] for c in cfgs if results.has([c])]
                acc = [100 * r.best() for r in got]
                bits = [_bits(THRESHOLD[d])(r) for r in got]
                m, se = stats.mean_se(acc) if acc else (NAN, NAN)
                se = se if len(acc) > 1 else NAN  # one seed has no standard error
                tag = "augmented" if reg == "augmented" else "not augmented"
                row[f"accuracy {tag} (%)"] = m
                row[f"SE {tag}"] = se
                row[f"bits {tag} (Mb)"] = float(np.mean(bits)) / 1e6 if bits else NAN
                row[f"seeds {tag}"] = f"{len(acc)} of {len(cfgs)}"
            rows.append(row)
        shown.append(outputs.save_table(rows, f"table1_{d}_regimes"))
    return shown


def table1(runs: dict, absent: dict, p: dict) -> tuple[dict, list]:
    """Table 1 per regime and dataset whose entries are all there (the numbers and the paper's layout, saved: the
    stated protocol as table1_<d>_augmented, the ablation as table1_<d>); returns regime -> dataset -> the paper's
    entries' rows, for the claims, and the pretty tables to show."""
    summary, shown = {reg: {} for reg in REGIMES}, []
    for reg in REGIMES:
        for d, by_label in runs[reg].items():
            if any(dd == d for dd, _ in absent[reg]) or not by_label:
                continue
            s = p["table1"][d]
            numbers, pretty, rows = tables.table1(by_label, d, len(s["seeds"]), s["rounds"], p["profile"])
            summary[reg][d] = {r["method"]: r for r in rows if r["method"] in p["paper_entries"]}
            name = f"table1_{d}" + ("_augmented" if reg == "augmented" else "")
            keep = "method" if p["chosen"] else None  # a run for some methods keeps the other methods' rows
            outputs.save_table(numbers, name, keep_other=keep, show=False)  # its _pretty twin is shown
            print(f"{d} {REGIME_WORDS[reg]}: threshold {THRESHOLD[d]:.0%}")
            shown.append(outputs.save_table(pretty, f"{name}_pretty", keep_other=keep))
    return summary, shown


def bits_per_round(runs: dict, p: dict):
    """The bits of one (the last) round, from the ledger (runs without augmentation: a round's messages do not depend
    on it); saved as comm_bits_per_round (the rows of datasets not run here stay; a dataset run for every method
    replaces its rows)."""
    rows = [{"dataset": d, "method": lab, "uplink_bits": rs[0].last("up_bits"), "downlink_bits": rs[0].last("down_bits")}
            for d, by_label in runs["plain"].items() for lab, rs in by_label.items()]
    return (outputs.save_table(rows, "comm_bits_per_round", keep_other=("dataset", "method"),
                               replace=() if p["chosen"] else ("dataset",),
                               units={"uplink_bits": "bits", "downlink_bits": "bits"}) if rows else None)


def accuracy_vs_bits(runs: dict, absent: dict, p: dict) -> None:
    """Accuracy against communicated bits and against rounds, per dataset and regime whose entries are all there
    (accuracy_vs_bits_<d> without augmentation, accuracy_vs_bits_<d>_augmented with it)."""
    methods = {**TABLE1_METHODS, **EXTRA_METHODS}
    for reg in REGIMES:
        for d, by_label in runs[reg].items():
            if any(dd == d for dd, _ in absent[reg]) or not by_label:
                continue
            curves = {lab: {"method": methods[lab][0], "bits": np.cumsum(rs[0].bits_up + rs[0].bits_down),
                            "acc": np.array([r.curve() for r in rs]) * 100} for lab, rs in by_label.items()}
            fig = figures.accuracy_vs_bits(curves, THRESHOLD[d], f"{d}, {REGIME_WORDS[reg]}: mean client "
                                           "accuracy (mean ± SE over seeds)")
            plots.caption(fig, p["profile"], len(p["table1"][d]["seeds"]), p["table1"][d]["rounds"])
            outputs.save_figure(fig, f"accuracy_vs_bits_{d}" + ("_augmented" if reg == "augmented" else ""))


def table_a1(results, p: dict) -> tuple[list, dict]:
    """Table A.1 per regime and (dataset, classes per client) whose runs are there: the tables to show, and regime ->
    (dataset, classes) -> (label -> Results, the threshold, rounds) for the claims (`table_a1_markers`)."""
    shown, found = [], {reg: {} for reg in REGIMES}
    for reg in REGIMES:
        for (d, k), cfgs in p["a1"][reg].items():
            s = p["settings"]["tableA1"][(d, k)]
            if not results.has(cfgs):
                print(f"Table A.1 ({d}, {k} classes per client) {REGIME_WORDS[reg]}: not drawn, its runs are not all "
                      f"cached or shipped (`{plans.commands(cfgs)}`)")
                continue
            got, n = results(cfgs), len(s["seeds"])
            by_label = {lab: got[i * n:(i + 1) * n] for i, lab in enumerate(TABLE_A1_METHODS)}
            rows, threshold = tables.table_a1(by_label, d, k, len(s["seeds"]), s["rounds"])
            print(f"{d}, {k} classes per client, {REGIME_WORDS[reg]}: threshold {threshold:.0%} (every method reaches "
                  f"it in every seed)")
            shown.append(outputs.save_table(rows, f"tableA1_{d}_{k}classes" + ("_augmented" if reg == "augmented"
                                                                               else "")))
            found[reg][(d, k)] = (by_label, threshold, s["rounds"])
    return shown, found


def augmentation(results, p: dict):
    """The augmentation ablation: with and without crop-and-flip, which lies nearer the paper; the table (or None)."""
    rows = []
    for d, s in p["settings"]["augment"].items():
        wanted = {lab: {aug: [table1_config(d, lab, seed=sd, rounds=s["rounds"], augment=aug, **s["over"])
                              for sd in s["seeds"]] for aug in (False, True)} for lab in AUGMENTED}
        if ex.dataset_available(d) and results.has([c for by in wanted.values() for cs in by.values() for c in cs]):
            pairs = {lab: {aug: results(cs) for aug, cs in by.items()} for lab, by in wanted.items()}
            rows += tables.augmentation(pairs, d, len(s["seeds"]), s["rounds"])
        elif ex.dataset_available(d):
            print(results.missing_note(f"the augmentation ablation ({d})"))
    if not rows:
        return None
    nearer = [r["method"] for r in rows if r["nearer_the_paper"] == "with"]
    print(f"nearer the paper's number with augmentation: {', '.join(nearer) or 'none'}; without: "
          f"{', '.join(r['method'] for r in rows if r['nearer_the_paper'] != 'with') or 'none'} (the claims are decided "
          "in the stated protocol, with augmentation, whichever lies nearer)")
    return outputs.save_table(rows, "augmentation_ablation", keep_other=("dataset", "method"))


def beta_ablation(results, p: dict):
    """FedLog-C's second weight beta; the table (or None)."""
    table = None
    for d, s in p["settings"]["beta"].items():
        wanted = {b: [table1_config(d, "FedLog-C", seed=sd, rounds=s["rounds"],
                                           options={"beta": b} if b else {}, **s["over"]) for sd in s["seeds"]]
                  for b in [0.0] + BETAS}
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
def _per_seed(results, f) -> list[float] | None:
    return None if results is None else [f(r) for r in results]


def _bits(threshold: float):
    return lambda r: stats.bits_to_threshold(r.curve(), r.curve("up_bits"), r.curve("down_bits"), threshold)[0]


def _cells(dataset: str) -> dict:
    """The paper's Table 1 cells a dataset's rows quote: its own column, or the column it stands in for."""
    return TABLE1_CELLS.get(STAND_IN_FOR.get(dataset, dataset), {})


class _Table:
    """What one regime of one dataset's Table 1 gives the claims: its runs (label -> Results, None where not all
    there), where its rows go, their kind (the stated protocol: the paper's; the ablation: an extension) and run set."""

    def __init__(self, ledger, table: str, regime: str, runs: dict, rounds, dataset: str, part: str = "table1"):
        self.ledger, self.regime, self.runs, self.rounds, self.dataset = ledger, regime, runs, rounds, dataset
        self.where = _where(table, regime)
        self.run_set = RUN_SETS.get((part, regime, dataset), "")
        self.stand_in = dataset in STAND_IN_FOR

    def kind(self, kind: str) -> str:
        return kind if self.regime == "augmented" else "extension"

    def of(self, label: str):
        return self.runs.get(label)

    def compare(self, claim: str, ours, reference, direction: str, quote: str, note: str = "") -> str:
        return self.ledger.compare("FedLog", self.where, claim, ours, reference, direction, kind=self.kind("claim"),
                                   quote=quote, rounds=self.rounds, run_set=self.run_set, stand_in=self.stand_in,
                                   note=note)

    def record(self, claim: str, ours, reference, rule, kind: str, quote: str, paper_value=None, seeds="",
               note: str = "") -> str:
        return self.ledger.record("FedLog", self.where, claim, ours, reference, rule, kind=self.kind(kind),
                                  quote=quote, paper_value=paper_value, seeds=seeds, rounds=self.rounds,
                                  run_set=self.run_set, stand_in=self.stand_in, note=note)


def _strongest(t: _Table, labels: list[str], f, best=max) -> str | None:
    """The other entry with the best mean of `f` over its seeds (None while any entry's runs are missing)."""
    if any(t.of(m) is None for m in labels):
        return None
    return best(labels, key=lambda m: float(np.mean(_per_seed(t.of(m), f))))


def best_accuracy(t: _Table, entries: list[str]) -> list[str]:
    """Table 1: FedLog-C is more accurate than the strongest other entry (by its mean), at its best round (Table 1's
    reading) and at the final round, seed by seed. The text: "statistically significant accuracy improvement"."""
    others = [m for m in entries if m != "FedLog-C"]
    out = []
    for name, f in (("best round", lambda r: 100 * r.best()), ("final round", lambda r: 100 * r.last())):
        rival = _strongest(t, others, f)
        ours = _per_seed(t.of("FedLog-C"), f)
        out.append(t.compare(f"FedLog-C is more accurate than the strongest other entry ({name})", ours,
                             _per_seed(t.of(rival), f) if rival else None, ">", QUOTES["table1_accuracy"],
                             note=f"the strongest other entry: {rival}" if rival else ""))
    return out


def cost_fraction(t: _Table) -> str:
    """Table 1's text: FedLog's communication cost is "as small as 0.09%" (MNIST; 0.29% CIFAR-10) of FedAvg's. A
    statement with a number and no tolerance: ours is reported (FedLog's mean bits to the threshold over FedAvg's, in
    percent), no verdict."""
    column = STAND_IN_FOR.get(t.dataset, t.dataset)
    paper = {"mnist": 0.09, "cifar10": 0.29, "cifar100": 3.44}.get(column)
    bits = _bits(THRESHOLD[t.dataset])
    ours = None
    if t.of("FedLog") is not None and t.of("FedAvg") is not None:
        ours = 100 * float(np.mean(_per_seed(t.of("FedLog"), bits))) / float(np.mean(_per_seed(t.of("FedAvg"), bits)))
    return t.record("FedLog's communication cost as a share of FedAvg's (%, bits to the threshold)", ours, None,
                    rules.statement(), "claim", QUOTES["table1_cost"], paper_value=paper,
                    seeds=len(t.of("FedLog") or []))


LOWER, HIGHER = "⇓↓", "⇑↑"  # a paper marker's direction, whichever of its levels the glyph writes


def markers(t: _Table, threshold: float | None, paper: dict, cells: dict, level: float) -> list[str]:
    """The paper's significance markers against FedLog-C (`paper`: method -> (its accuracy's marker, its
    communication cost's), "" for none), one `marker` row each, quoting the entry's cell: the exact one-tailed Wilcoxon
    signed-rank test at the caption's `level` (agrees / not significant / opposite / cannot be decided (ties)). An
    unmarked entry is an observation: its p, no verdict. Best-round accuracy and bits to `threshold`, as the table."""
    ref = t.of("FedLog-C")
    out = []
    for method, marks in paper.items():
        for i, ((quantity, f), mark) in enumerate(zip((("accuracy", lambda r: 100 * r.best()),
                                                       ("communication cost", _bits(threshold or 0.0))), marks)):
            ours = _per_seed(t.of(method), f) if threshold is not None else None
            theirs = _per_seed(ref, f) if threshold is not None else None
            quote = cells.get(method, ("", ""))[i]
            if mark:
                up = mark in HIGHER
                claim = f"{method}'s {quantity} {'above' if up else 'below'} FedLog-C's ({mark})"  # the marker: significantly
                rule = rules.marker(">" if up else "<", level)
            else:
                claim = f"{method}'s {quantity} against FedLog-C's (unmarked in the paper)"
                rule = rules.observation()
            out.append(t.record(claim, ours, theirs, rule, "marker", quote, paper_value=mark,
                                seeds=len(ours) if ours else ""))
    return out


def reproductions(t: _Table, entries: list[str]) -> list[str]:
    """Each entry's accuracy in the paper's Table 1 (its own dataset's column only), by the equivalence test: our
    best-round accuracies over seeds against the paper's mean and standard error (its caption: "mean +- standard
    error ... over 10 seeds")."""
    out = []
    for m in entries:
        if m not in TABLE1.get(t.dataset, {}):
            continue
        ours = _per_seed(t.of(m), lambda r: 100 * r.best())
        claim = f"{m}'s accuracy is reproduced"
        out.append(t.record(claim, ours, [TABLE1[t.dataset][m][0], TABLE1_SE[t.dataset].get(m)],
                            rules.equivalence(), "reproduction", TABLE1_CELLS[t.dataset][m][0],
                            paper_value=TABLE1[t.dataset][m][0], seeds=len(ours) if ours else ""))
    return out


def ranking(ledger, d: str, rows: dict, p: dict):
    """Kendall's tau between our ranking (the stated protocol's) and the paper's Table 1, reported with no verdict
    (no tolerance of the paper's); and the ranking table (saved)."""
    s = p["table1"][d]
    here = {m: r["accuracy_mean"] for m, r in rows.items()}
    out, lines, tau = tables.ranking(here, d, None)
    print("\n".join(lines))
    if tau is not None:
        ledger.record("FedLog", f"Table 1 ({d})", "our ranking of the entries by accuracy against the paper's "
                      "(Kendall tau)", tau, None, rules.statement(), kind="reproduction",
                      quote=QUOTES["table1_caption"], seeds=len(s["seeds"]), rounds=s["rounds"],
                      run_set=RUN_SETS.get(("table1", "augmented", d), ""))
    return outputs.save_table(out, f"table1_{d}_ranking")


def equivalent_to_authors(ledger, path) -> list[str]:
    """FedDBE's cross-check, per model in `path` (scripts/feddbe_crosscheck.py's CSV): a self-check, not a claim of
    the paper (`crosscheck.record`)."""
    out = []
    for model in feddbe_xcheck.models(path):
        where = f"Table 1 (FedDBE against its authors' code, {model or 'cnn_mnist_nodrop'})"
        out += feddbe_xcheck.record(ledger, "FedLog", where, "FedDBE", feddbe_xcheck.curves(path, model=model))
    return out


def _summary_lines(d: str, rows: dict, regime: str) -> None:
    rank = sorted(rows, key=lambda m: -rows[m]["accuracy_mean"])
    print(f"{d}, {REGIME_WORDS[regime]}: ranking by best-round accuracy (Table 1's reading): " + " > ".join(rank))
    final_rank = sorted(rows, key=lambda m: -rows[m]["final_accuracy_mean"])
    print(f"{d}, {REGIME_WORDS[regime]}: ranking by final-round accuracy: " + " > ".join(final_rank))


def _table1_claims(t: _Table, entries: list[str]) -> None:
    best_accuracy(t, entries)
    cost_fraction(t)
    if t.dataset in TABLE1_MARKERS:  # each entry's markers as soon as its runs and FedLog-C's are all there
        markers(t, THRESHOLD[t.dataset], TABLE1_MARKERS[t.dataset], _cells(t.dataset),
                TABLE1_MARKER_LEVEL)
    reproductions(t, entries)


def _cross_notes(ledger, first: int, split: int) -> None:
    """Each row of the stated protocol (rows first..split-1) says the ablation's verdict on the same claim (the rows
    from split, in the same order); where both are decided and differ: "depends on augmentation"."""
    mine, other = ledger.rows[first:split], ledger.rows[split:split + (split - first)]
    for a, b in zip(mine, other):
        said = f"without augmentation: {b.verdict}"
        if rules.rules.outcome(a.verdict) in ("hold", "differ", "not resolved") and \
                rules.rules.outcome(b.verdict) in ("hold", "differ", "not resolved") and a.verdict != b.verdict:
            said = f"depends on augmentation: with it {a.verdict}, without it {b.verdict}"
        a.note = "; ".join(x for x in (a.note, said) if x)


def record(runs: dict, absent: dict, p: dict, a1: dict | None = None,
           summary: dict | None = None) -> tuple[object, list]:
    """Notebook 02's claims, both regimes of Table 1 and Table A.1 (`a1`: as `table_a1` returns it); the stated
    protocol's rows are the paper's, the ablation's extensions, and each stated-protocol row names the ablation's
    verdict. The ledger is saved as `saving` decides. Returns it and the ranking tables."""
    ledger = rules.ClaimsLedger(NOTEBOOK, p["profile"])
    for d, s in p["table1"].items():
        entries = [m for m in s["methods"] if m in p["paper_entries"]]
        first = len(ledger.rows)
        for reg in REGIMES:
            if reg == "plain":
                split = len(ledger.rows)
            _table1_claims(_Table(ledger, f"Table 1 ({d})", reg, runs[reg].get(d, {}), s["rounds"], d), entries)
        _cross_notes(ledger, first, split)
        for reg in REGIMES:
            if summary and d in summary[reg]:
                _summary_lines(d, summary[reg][d], reg)
    for (d, k), s in p["settings"]["tableA1"].items():
        if (d, k) not in TABLE_A1_MARKERS:
            continue
        first = len(ledger.rows)
        for reg in REGIMES:
            if reg == "plain":
                split = len(ledger.rows)
            by_label, threshold, rounds = (a1 or {}).get(reg, {}).get((d, k), ({}, None, s["rounds"]))
            t = _Table(ledger, f"Table A.1 ({d}, {k} classes per client)", reg, by_label, rounds, d, "tableA1")
            markers(t, threshold, TABLE_A1_MARKERS[(d, k)], TABLE_A1_CELLS.get((d, k), {}),
                    TABLE_A1_MARKER_LEVEL)
        _cross_notes(ledger, first, split)
    if p["profile"] == "paper":  # the cross-check's curves are one file, whatever the profile; judged once
        from ...paths import project_root

        equivalent_to_authors(ledger, project_root() / "figures" / "feddbe_crosscheck.csv")
    shown = []
    for d in p["table1"]:
        rows = (summary or {}).get("augmented", {}).get(d)
        if p["chosen"] or not rows:  # a ranking of some methods only would mislead
            continue
        shown.append(ranking(ledger, d, rows, p))
    save, keep_other = saving(p, runs, absent, chosen_datasets())
    if save:
        ledger.save(keep_other_where=keep_other)
    return ledger, shown


def saving(p: dict, runs: dict, absent: dict, chosen_datasets: list[str]) -> tuple[bool, bool]:
    """Whether notebook 02 saves its ledger, and whether the file keeps the saved rows of tables this run has none
    for. Not saved when some methods were chosen (a ranking of some would mislead); a claim whose runs are not all
    there is saved as such ("not run"), never left at an older verdict; a run on some datasets (`chosen_datasets`)
    keeps the others' rows."""
    return not p["chosen"] and bool(p["settings"]["table1"]), bool(chosen_datasets)
