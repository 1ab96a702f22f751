# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Table 1 and Table A.1: accuracy and communication cost
#
# FedLog paper, Section 4.2. Every client's personalized model is evaluated on its own test set after each
# round; the accuracy is the mean over clients in the best round (mean $\pm$ SE over seeds). The
# communication cost is the total of all uplink and downlink messages, counted by the ledger, until the mean
# client accuracy first reaches the threshold (97% MNIST, 83% CIFAR-10, 53% CIFAR-100), or until the round
# with the highest accuracy if it never does. Markers: one-tailed Wilcoxon signed-rank tests against
# FedLog-C, paired by seed ($\Uparrow$/$\Downarrow$ p < 0.01, $\uparrow$/$\downarrow$ p < 0.05). Accuracy is that of the
# best round (how we read the paper: its FedLog-C 98.41 on MNIST matches our best round, not our round 100,
# after which the bodies overfit); the final round's accuracy stands in the CSV beside it. Beside every
# number of ours stands the paper's. FashionMNIST in the CIFAR-10 client setting (100 clients, 2 classes
# each) is the stand-in that runs without the CIFAR files; CIFAR-10/100 run when their files are present.
#
# **Bits, both ways and one way.** The paper's text counts "the total size of messages transmitted between clients
# and the server", and its CIFAR numbers need both directions (CIFAR-10 FedAvg 37.9 Gb is 92.4 rounds of up + down;
# one way it would be 184.8 of 100 rounds). Its MNIST numbers fit one direction: FedAvg's 3.45 Gb is 98.7 rounds of
# 50 clients x 21,840 parameters x 32 bits = 34.9 Mb, CS-FL's 0.35 Gb is 100.2 rounds of its 3.49 Mb uplink. Our
# `comm cost` counts both directions, as the text says, so for a method that never reaches 97% it is twice the
# paper's MNIST number; the `one way` column counts the uplink alone, to compare with the paper's MNIST column.
#
# **FedDBE, two ways.** Table 1's FedDBE is run as its authors run it (version 3 of our `feddbe`): their
# initialisation period for the global mean g, kappa = 50 and rho = 1, one SGD at their default rate (0.005) for the
# model and the personalized bias, on Table A.2's CNN without dropout (MR and PRBM act on the representation; the
# authors' CNNs have no dropout). Beside it, "FedDBE (Adam, kappa k)" trains model and bias with Table 1's Adam,
# kappa chosen on seed 0 from {0, 1, 10, 50}; it is not one of the paper's entries, so rankings and claims leave it
# out. The section "FedDBE against its authors' code" draws both codes' curves on our client data
# (`scripts/feddbe_crosscheck.py`).
#
# **Knobs** (environment variables, read by `fedlib.papers.fedlog.table1_settings`): `FEDLIB_DATASETS` (e.g.
# `mnist`: only these datasets), `FEDLIB_SEEDS` (a seed count for the tables instead of the profile's), `FEDLIB_PARTS`
# (`table1`, `tableA1`, `augment`, `beta`: which parts to remake; the others keep their files) and `FEDLIB_METHODS`
# (e.g. `FedLog,FedLog-C`: only these Table 1 rows are remade).

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
import numpy as np

from IPython.display import display

from fedlib import analysis, claims, experiments as ex, paths, plots, stats, sweep
from fedlib.papers.fedlog import tables
from fedlib.papers import fedlog

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

TABLE1 = list(fedlog.TABLE1_METHODS)  # the paper's twelve entries: rankings and claims use these
ALL = TABLE1 + list(fedlog.EXTRA_METHODS)  # and the entries reported beside them
AUGMENTED, BETAS = fedlog.AUGMENTED, fedlog.BETAS
SETTINGS = fedlog.table1_settings(profile)  # narrowed by the knobs FEDLIB_DATASETS, _SEEDS, _PARTS and _METHODS
CHOSEN = fedlog.chosen_methods()  # FEDLIB_METHODS: only these Table 1 rows are remade
plots.style()


table1 = {d: s for d, s in SETTINGS["table1"].items() if ex.dataset_available(d)}
print(profile, {d: (len(s["methods"]), s["seeds"], s["rounds"]) for d, s in table1.items()})

# %% [markdown]
# ## Runs (cached: re-running this notebook recomputes nothing that finished)
# Every run of the notebook goes into one sweep first, so that on a multi-core machine the worker processes (one
# per core, the default backend) stay busy to the end; the parts below then read their runs from the cache.
# A run that is the first rounds of a longer run shipped in `archive/` (the paper-setting runs, 100 rounds) is read
# from there, not computed: a run's first rounds do not depend on how many follow, so this is exact, bit for bit
# (this notebook reads only per-round numbers). `FEDLIB_SHIPPED_PREFIXES=0` computes them instead.

# %%
every_run = [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], **s["over"])
             for d, s in table1.items() for lab in s["methods"] for sd in s["seeds"]]
every_run += [c for (d, k), s in SETTINGS["tableA1"].items() if ex.dataset_available(d)
              for c in fedlog.table_a1_configs(d, k, s)]
every_run += [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], augment=aug, **s["over"])
              for d, s in SETTINGS["augment"].items() if ex.dataset_available(d)
              for lab in AUGMENTED for aug in (False, True) for sd in s["seeds"]]
every_run += [fedlog.table1_config(d, "FedLog-C", seed=sd, rounds=s["rounds"], options={"beta": b} if b else {},
                                  **s["over"])
              for d, s in SETTINGS["beta"].items() if ex.dataset_available(d) for b in [0.0] + BETAS for sd in s["seeds"]]
results = sweep.Runs(every_run, profile, "scripts/paper_runs.py table1, tableA1 (and augment)", shipped_prefixes=True)
print(f"{sum('first_rounds_of' in results([c])[0] for c in every_run if results.has([c]))} read as the first rounds "
      f"of shipped longer runs")
t1 = {d: {lab: [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], **s["over"]) for sd in s["seeds"]]
          for lab in s["methods"]} for d, s in table1.items()}
runs = {d: {lab: results(cfgs) for lab, cfgs in by.items() if results.has(cfgs)} for d, by in t1.items()}
ABSENT = [f"{d} {lab}" for d, by in t1.items() for lab, cfgs in by.items() if not results.has(cfgs)]
if ABSENT:  # the table draws the rows that are shipped; the verdicts wait for every row (a rival may be missing)
    print(results.missing_note(f"Table 1's rows {', '.join(ABSENT)}") + "; the verdicts are not remade")

# %% [markdown]
# ## Table 1
# With n seeds the smallest one-tailed Wilcoxon p-value is $2^{-n}$: markers need at least 5 seeds (p < 0.05)
# or 7 (p < 0.01), so the quick profile shows none; the paper profile runs 10.

# %%
summary = {}
for d, by_label in runs.items():
    numbers, pretty, rows = tables.table1(by_label, d, len(table1[d]["seeds"]), table1[d]["rounds"], profile)
    summary[d] = {r["method"]: r for r in rows if r["method"] in TABLE1}  # the paper's entries: the claims read these
    print(f"{d}: threshold {fedlog.THRESHOLD[d]:.0%}")
    keep = "method" if CHOSEN else None  # a run for some methods keeps the other methods' rows
    plots.save_table(numbers, f"table1_{d}", keep_other=keep)
    display(plots.save_table(pretty, f"table1_{d}_pretty", keep_other=keep))

# %% [markdown]
# ## Bits of one round, from the ledger (the last round: every method's steady state)

# %%
rows = [{"dataset": d, "method": lab, "uplink_bits": rs[0].last("up_bits"), "downlink_bits": rs[0].last("down_bits")}
        for d, by_label in runs.items() for lab, rs in by_label.items()]
plots.save_table(rows, "comm_bits_per_round", keep_other=("dataset", "method")) if rows else None

# %% [markdown]
# ## Accuracy vs communicated bits and vs rounds

# %%
for d, by_label in runs.items():
    curves = {lab: {"method": {**fedlog.TABLE1_METHODS, **fedlog.EXTRA_METHODS}[lab][0],
                    "bits": np.cumsum(rs[0].bits_up + rs[0].bits_down),
                    "acc": np.array([r.curve() for r in rs]) * 100} for lab, rs in by_label.items()}
    fig = plots.accuracy_vs_bits(curves, fedlog.THRESHOLD[d], f"{d}: mean client accuracy (mean ± SE over seeds)")
    plots.caption(fig, profile, len(table1[d]["seeds"]), table1[d]["rounds"])
    plots.save_figure(fig, f"accuracy_vs_bits_{d}")  # the paper profile's name ends in _paper

# %% [markdown]
# ## Table A.1: more classes per client
# The paper gives no thresholds for Table A.1; its rule (Section 4.2) is "the largest integer of accuracy which all
# competitive algorithms have reached in all seeds", computed here from our runs (`stats.common_threshold`) and
# printed in the table. Table 1's 97% is reached by no method with 3 or 5 classes per client.

# %%
for (d, k), s in SETTINGS["tableA1"].items():
    cfgs = fedlog.table_a1_configs(d, k, s) if ex.dataset_available(d) else []
    if cfgs and not results.has(cfgs):
        print(results.missing_note(f"Table A.1 ({d}, {k} classes per client)"))
    elif cfgs:
        n = len(s["seeds"])
        by_label = {lab: results(cfgs[i * n:(i + 1) * n]) for i, lab in enumerate(fedlog.TABLE_A1_METHODS)}
        rows, threshold = tables.table_a1(by_label, d, k, len(s["seeds"]), s["rounds"])
        print(f"{d}, {k} classes per client: threshold {threshold:.0%} (every method reaches it in every seed)")
        display(plots.save_table(rows, f"tableA1_{d}_{k}classes"))

# %% [markdown]
# ## Augmentation ablation (Appendix E: training images "randomly cropped and flipped")
# No Table 1 run uses augmentation. Here FedAvg, FedBabu, FedLog and FedLog-C run with and without it
# (`Config.augment`: a random crop after padding by 2 pixels, and a left-right flip), in the paper setting with 3
# seeds x 100 rounds in the paper profile, and reduced to 1 seed x 40 rounds in the quick profile. For each method:
# which of the two lies nearer the paper's number. Table 1 stays without augmentation unless every method's paper
# number is nearer the augmented run.

# %%
augmentation = []
for d, s in SETTINGS["augment"].items():
    wanted = {lab: {aug: [fedlog.table1_config(d, lab, seed=sd, rounds=s["rounds"], augment=aug, **s["over"])
                          for sd in s["seeds"]] for aug in (False, True)} for lab in AUGMENTED}
    if ex.dataset_available(d) and results.has([c for by in wanted.values() for cs in by.values() for c in cs]):
        pairs = {lab: {aug: results(cs) for aug, cs in by.items()} for lab, by in wanted.items()}
        augmentation += tables.augmentation(pairs, d, len(s["seeds"]), s["rounds"])
    elif ex.dataset_available(d):
        print(results.missing_note(f"the augmentation ablation ({d})"))
if augmentation:
    every = all(r["nearer_the_paper"] == "with" for r in augmentation)
    print("Table 1 " + ("should use augmentation: every method's paper number is nearer the augmented run" if every
                        else "stays without augmentation: not every method's paper number is nearer the augmented run"))
    display(plots.save_table(augmentation, "augmentation_ablation", keep_other=("dataset", "method")))

# %% [markdown]
# ## FedLog-C's second weight (beta): does a separation term help?
# The conference version gives FedLog-C a second weight, beta, that "controls the distance between different
# clusters"; its formula is lost. Our FedLog-C is the long version's Eq. 13 (alpha only). `beta` > 0 adds our labelled
# guess, a triplet-style hinge (see `fedlib/algorithms/fedlog.py`). MNIST paper setting, 40 rounds, 2 seeds in the
# paper profile and 1 in the quick one; beta = 0 is Table 1's FedLog-C (in the quick profile the same run).

# %%
for d, s in SETTINGS["beta"].items():
    wanted = {b: [fedlog.table1_config(d, "FedLog-C", seed=sd, rounds=s["rounds"], options={"beta": b} if b else {},
                                       **s["over"]) for sd in s["seeds"]] for b in [0.0] + BETAS}
    if ex.dataset_available(d) and not results.has([c for cs in wanted.values() for c in cs]):
        print(results.missing_note(f"the beta ablation ({d})"))
    elif ex.dataset_available(d):
        by_beta = {b: results(cs) for b, cs in wanted.items()}
        beta_rows, what = tables.beta_ablation(by_beta, d, len(s["seeds"]), s["rounds"])
        print(what)
        display(plots.save_table(beta_rows, "fedlog_c_beta_ablation", keep_other=("dataset", "beta")))

# %% [markdown]
# ## FedDBE against its authors' code
# `scripts/feddbe_crosscheck.py` runs the authors' FedDBE (TsingZ0/DBE, their `main.py` unchanged) and ours on this
# notebook's MNIST federation (the same clients, samples and initial weights per seed) with `cnn_mnist_nodrop`, SGD
# at 0.005, kappa 50, rho 1, 5 local epochs, batch 10, and writes both curves of the pooled test accuracy to
# `figures/feddbe_crosscheck.csv`, drawn here without the authors' code. Agreement rule (the script's): a paired
# equivalence test, TOST at 5%: at every evaluation |mean paired difference| + t(0.95, n-1) SE <= 1 point, over at
# least 5 seeds (the same seed gives both sides the same clients and initial weights).

# %%
crosscheck = paths.project_root() / "figures" / "feddbe_crosscheck.csv"
for model in analysis.crosscheck_models(crosscheck):
    curves = analysis.crosscheck_curves(crosscheck, model=model)
    eq = analysis.crosscheck_agreement(curves, bound=analysis.crosscheck_bound(curves))
    worst = int(np.argmax(eq.lhs - eq.bound))
    print(f"{model or 'cnn_mnist_nodrop'}: {'passes' if eq.passes else 'fails'}: {eq.equivalent.sum()} of "
          f"{len(eq.equivalent)} evaluations equivalent over {eq.seeds} seeds (paired, TOST at 5%; "
          f"{analysis.EQUIVALENCE_SEEDS} seeds needed); the worst at evaluation {worst}: mean difference "
          f"{eq.mean[worst]:+.2f}, |mean| + t SE {eq.lhs[worst]:.2f} against a bound of {np.broadcast_to(eq.bound, eq.lhs.shape)[worst]:.2f}")
    panel = {{"authors": "FedDBE, the authors' code", "fedlib": "FedDBE, fedlib",
              "authors_stream2": "FedDBE, the authors' code, another random stream"}[side]: {"method": "feddbe", "acc": acc}
             for side, acc in curves.items()}
    fig = plots.accuracy_curves({f"MNIST, Table 1's federation, {model or 'cnn_mnist_nodrop'}": panel},
                                "FedDBE: our code against its authors' (accuracy over all test samples)",
                                ylabel="test accuracy, all samples (%)",
                                xlabel="evaluation (after this many rounds of training)")
    plots.caption(fig, "crosscheck", eq.seeds, curves["fedlib"].shape[1] - 1, note="SGD 0.005, kappa 50, rho 1")
    plots.save_figure(fig, "feddbe_crosscheck" + ("" if model in (None, "cnn_mnist_nodrop") else f"_{model}"))
if not analysis.crosscheck_models(crosscheck):
    print(f"{crosscheck} is missing: run scripts/feddbe_crosscheck.py with a checkout of TsingZ0/DBE")

# %% [markdown]
# ## What the numbers say

# %%
ledger = claims.ClaimsLedger("02_communication_cost", profile)
for d, rows in summary.items():
    rank = sorted(rows, key=lambda m: -rows[m]["accuracy_mean"])
    print(f"{d}: ranking by best-round accuracy (Table 1's reading): " + " > ".join(rank))
    final_rank = sorted(rows, key=lambda m: -rows[m]["final_accuracy_mean"])
    print(f"{d}: ranking by final-round accuracy:                  " + " > ".join(final_rank))
    cheapest = min(rows, key=lambda m: rows[m]["bits_to_threshold"])
    print(f"{d}: least communication to the threshold (or best round): {cheapest}")
    runs_of = dict(seeds=len(table1[d]["seeds"]), rounds=table1[d]["rounds"])
    if "FedLog-C" in rows and len(rows) > 1:
        others = [m for m in rows if m != "FedLog-C"]
        per_seed = lambda m, f: [f(r) for r in runs[d][m]]  # noqa: E731  (one number per seed)
        best_round = lambda r: 100 * r.best()  # noqa: E731
        last_round = lambda r: 100 * r.last()  # noqa: E731
        for name, f, key in (("best round", best_round, "accuracy_mean"), ("final round", last_round,
                                                                           "final_accuracy_mean")):
            rival = max(others, key=lambda m: rows[m][key])
            ledger.compare("FedLog", f"Table 1 ({d})", f"FedLog-C reaches the best accuracy ({name}; against the "
                           f"strongest other entry, {rival})", per_seed("FedLog-C", f), per_seed(rival, f), ">",
                           rounds=table1[d]["rounds"])
        bits_of = lambda r: stats.bits_to_threshold(r.curve(), r.curve("up_bits"),  # noqa: E731
                                                    r.curve("down_bits"), fedlog.THRESHOLD[d])[0]
        rival = min(others, key=lambda m: rows[m]["bits_to_threshold"])
        ledger.compare("FedLog", f"Table 1 ({d})", f"FedLog-C needs the least communication (bits to the threshold, "
                       f"or to the best round; against the cheapest other entry, {rival})",
                       per_seed("FedLog-C", bits_of), per_seed(rival, bits_of), "<", rounds=table1[d]["rounds"])
        acc_rank = 1 + sum(rows[m]["accuracy_mean"] > rows["FedLog-C"]["accuracy_mean"] for m in others)
        bits_rank = 1 + sum(rows[m]["bits_to_threshold"] < rows["FedLog-C"]["bits_to_threshold"] for m in others)
        verdict = ledger.record("FedLog", f"Table 1 ({d})", "FedLog-C reaches the best accuracy with the least "
                                "communication (ours: the worse of its ranks by best-round accuracy and by bits)",
                                max(acc_rank, bits_rank), 1, "ours <= reference", **runs_of)
        print(f"{d}: \"FedLog-C reaches the best accuracy with the least communication\" {verdict} on our numbers: "
              f"FedLog-C ranks {acc_rank} by best-round accuracy and {bits_rank} by bits")
    for m in ("FedAvg", "FedLog", "FedLog-C"):
        if m in rows and m in fedlog.TABLE1.get(d, {}):
            gap = rows[m]["accuracy_mean"] - fedlog.TABLE1[d][m][0]
            print(f"{d}: {m} {rows[m]['accuracy_mean']:.2f} vs paper {fedlog.TABLE1[d][m][0]:.2f} ({gap:+.2f} points, "
                  f"{table1[d]['rounds']} rounds here)")
            if m != "FedAvg":
                ledger.record("FedLog", f"Table 1 ({d})", f"{m}'s accuracy is reproduced within 1.5 points",
                              rows[m]["accuracy_mean"], fedlog.TABLE1[d][m][0], "abs(ours - reference) <= 1.5",
                              paper_value=fedlog.TABLE1[d][m][0], **runs_of)
                if len(table1[d]["seeds"]) >= 2:  # the fine row: within two standard errors of the difference
                    band = 2 * (rows[m]["accuracy_se"] ** 2 + fedlog.TABLE1_SE[d][m] ** 2) ** 0.5
                    ledger.record("FedLog", f"Table 1 ({d})", f"{m}'s accuracy matches the paper's within two "
                                  f"standard errors of the difference (2 x sqrt(ours^2 + the paper's^2) = {band:.2f})",
                                  rows[m]["accuracy_mean"], fedlog.TABLE1[d][m][0], f"abs(ours - reference) <= {band:.4g}",
                                  paper_value=fedlog.TABLE1[d][m][0], **runs_of)

# %% [markdown]
# ## Is the ranking the paper setting's?
# Kendall's tau between the ranking here and the paper's Table 1, and, in a shorter profile, the ranking of the
# paper setting's own runs when they are cached (run the paper profile once to have them). A discordant pair that
# the paper setting separates by less than 2 standard errors is one of its ties; `contradicted` lists the others.
# Written to figures/table1_<dataset>_ranking.csv (quick) and table1_<dataset>_ranking_paper.csv.

# %%
for d, rows in summary.items():
    if CHOSEN:  # a ranking of some methods only would mislead
        break
    here, full, reference = {m: r["accuracy_mean"] for m, r in rows.items()}, fedlog.TABLE1_PROFILES["paper"]["table1"].get(d), None
    if profile != "paper" and full:  # the paper setting's runs, where at least 2 seeds of every method are cached
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
                      tau, 0.5, "ours >= reference", seeds=len(table1[d]["seeds"]), rounds=table1[d]["rounds"])
    display(plots.save_table(out, f"table1_{d}_ranking"))
if not CHOSEN and SETTINGS["table1"] and not ABSENT:  # a run of some methods or parts would leave the claims half made
    ledger.save(keep_other_where=bool(fedlog.chosen_datasets()))  # a run on some datasets keeps the others' claims
