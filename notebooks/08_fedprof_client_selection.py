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
# # FedProf: client selection by representation profiles (Wu, He, Lin and Maple; seeds/004)
#
# Each client profiles its data with the global model it receives: per dimension of fc1's pre-activations, a
# Gaussian (mean, variance). The server profiles its own clean validation set with the same model version, scores
# each client by exp(-alpha x the mean KL divergence of the two profiles) and draws the round's clients in
# proportion to the scores, so clients whose data look unlike the clean data are rarely chosen
# (`fedlib/algorithms/fedprof.py`). Protocol (Sec. 5.1's L-Task, `fedprof.config`): MNIST standing in
# for EMNIST digits, 60% of each client's samples from one class, 15% of the clients with irrelevant images
# (FashionMNIST), 20% blurred, 25% with salt-and-pepper noise (density 0.3), a clean 14.3% of the data held by the
# server; Table A.2's CNN, SGD lr 0.01 with "learning rate decay 0.99", 5 local epochs, alpha = 10. Accuracy is the
# global model's on the clients' clean test sets.
#
# **Two readings of the decay.** The paper does not say what the 0.99 multiplies per. The protocol decays a client's
# rate per participation, 0.01 x 0.99^(rounds it has trained in): over 300 rounds of full aggregation a client trains
# 15-30 times, so its rate stays near 0.01. The earlier reading decays it per global round (0.01 x 0.99^t, as SAFA's
# FedAvg code does), which leaves 5% of the rate after 300 rounds and caps what full aggregation can reach (about
# 100 C partial rounds' worth of progress). Part B shows each reading whose runs are shipped; the other parts and
# the verdicts use the protocol's reading, or the per-round one while the protocol's runs are not shipped, and say
# which.
#
# | part | reproduces |
# |---|---|
# | A | Fig. 1: FedAvg under original, biased, noisy and biased + noisy data |
# | B | Table 3 stand-in: full aggregation (FedAvg, FedProf) and partial (FedAvg-RP, FedProx, FedProf) |
# | C | Fig. 5: the accuracy traces of part B |
# | D | Fig. 6: how often each client took part, clients grouped by kind |
# | E | the mean divergence of each kind of client per round; alpha 0 against 10 (not in the paper) |
# | F | Table 2 (GasTurbine, the S-Task): missing here |
#
# The quick profile uses 100 clients on 10% of MNIST (about 52 training images each, where EMNIST's clients hold
# about 240), participation 0.05 and 0.1, 60 rounds of full and 30 of partial aggregation (the spec's quick profile has
# 100 of full: cut to fit the 10-minute budget), 30 rounds for Fig. 1, one seed (the spec's second is cut), and targets of 60% and 80% instead of the paper's 90%,
# which no method reaches in so few rounds on so little data. CFCFM, FedAdam and AFL are not implemented: their
# paper numbers stand alone.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "quick")

# %%
from collections import Counter

import numpy as np
from IPython.display import display

from fedlib import claims, papers, paths, plots, stats, sweep
from fedlib.papers import fedprof

paths.use_profile(profile)

S = papers.settings(fedprof.PROFILES, profile)
FULL, PARTIAL = fedprof.FULL, fedprof.PARTIAL
KINDS = ["clean", "saltpepper", "blur", "irrelevant"]
plots.style()
print(profile, S)


def fedprof_config(label, C, seed, **change):
    return fedprof.run(profile, label, C, seed, **change)


def rounds_to(r, target):
    """The first round whose accuracy reaches `target`; a run that never does counts as its rounds + 1."""
    acc = np.asarray(r.curve("acc_all"))
    hit = np.nonzero(acc >= target)[0]
    return int(hit[0]) + 1 if len(hit) else len(acc) + 1


# %% [markdown]
# ## Runs
# Every run of parts A, B and E in one sweep, so that the worker processes (one per core) stay busy.

# %%
READINGS = {"per participation": {}, "per round": dict(decay_unit="round")}  # the protocol's first
table3_by = {reading: {(C, lab): [fedprof_config(lab, C, sd, **over) for sd in S["seeds"]] for C in S["fractions"]
                       for lab in FULL + PARTIAL} for reading, over in READINGS.items()}
f1 = S["fig1"]
fig1 = {cond: [fedprof_config("FedAvg", f1["participation"], sd, rounds=f1["rounds"], **over) for sd in S["seeds"]]
        for cond, over in fedprof.CONDITIONS.items()}
C0 = S["fractions"][-1]
alphas = {a: [fedprof_config("FedProf (partial)", C0, sd, options={"alpha": a}) for sd in S["seeds"]] for a in S["alphas"]}
every = lambda group: [c for cs in group.values() for c in cs]  # noqa: E731
results = sweep.Runs(sum((every(t) for t in table3_by.values()), []) + every(fig1) + every(alphas), profile,
                     "scripts/paper_runs.py fedprof_table3 (and fedprof_fig1, fedprof_alpha)")
READING = next((r for r, t in table3_by.items() if results.has(every(t))), None)  # what parts D, E and the verdicts use
table3 = table3_by[READING] if READING else {}
print(f"parts D, E and the verdicts read the runs with lr decay {READING}" if READING else
      results.missing_note("Table 3 (either reading)"))

# %% [markdown]
# ## A. Fig. 1: FedAvg under four data conditions (full aggregation)

# %%
panel = {}
if results.has(every(fig1)):
    panel = {cond: {"method": "fedavg", "acc": np.array([r.curve("acc_all") for r in results(cfgs)]) * 100}
             for cond, cfgs in fig1.items()}
    for cond, c in panel.items():
        print(f"{cond:15s} final {c['acc'][:, -1].mean():6.2f}%")
    fig = plots.accuracy_curves({"MNIST, FedAvg": panel}, "FedProf's Fig. 1: FedAvg's global accuracy under biased "
                                                          "and noisy client data", ylabel="global test accuracy (%)")
    plots.caption(fig, profile, len(S["seeds"]), f1["rounds"],
                  note=f"{S['n_clients']} clients, C = {f1['participation']}")
    plots.save_figure(fig, "fedprof_fig1_conditions")
else:
    print(results.missing_note("Fig. 1"))

# %% [markdown]
# ## B and C. Table 3 stand-in and the accuracy traces (Fig. 5)
# Best accuracy and the rounds to each target (first round at or above it; a run that never reaches it counts as
# its rounds + 1); the paper's numbers (EMNIST digits, to 90%) stand beside ours.

# %%
rows, traces = [], {}
for reading, (C, lab), cfgs in [(rd, k, v) for rd, t in table3_by.items() if results.has(every(t)) for k, v in t.items()]:
    rs = results(cfgs)
    best = stats.mean_se([100 * r.best("acc_all") for r in rs])
    reach = [float(np.mean([rounds_to(r, t) for r in rs])) for t in S["targets"]]
    agg = "full" if lab in FULL else "partial"
    paper_row = fedprof.TABLE3.get((agg, C), {}).get(lab.split(" (")[0], (float("nan"),) * 4)
    rows.append({"lr decay": reading, "C": C, "aggregation": agg, "method": lab, "best_mean": best[0], "best_se": best[1],
                 f"rounds_to_{S['targets'][0]:.0%}": reach[0], f"rounds_to_{S['targets'][1]:.0%}": reach[1],
                 "paper_best": paper_row[0], "paper_rounds_to_90%": paper_row[1], "seeds": len(rs),
                 "rounds": rs[0].n_rounds})
    if reading == READING:
        traces.setdefault(f"C = {C}, {agg} aggregation", {})[lab] = {
            "method": fedprof.METHODS[lab][0], "acc": np.array([r.curve("acc_all") for r in rs]) * 100}
for name in ("CFCFM", "FedAdam", "AFL"):
    print(f"{name}: not implemented (paper, C = 0.1: {fedprof.TABLE3.get(('partial', 0.1), {}).get(name)} "
          f"{fedprof.TABLE3.get(('full', 0.1), {}).get(name)})")
if rows:
    display(plots.save_table(rows, "fedprof_table3"))
    fig = plots.accuracy_curves(traces, "FedProf's Fig. 5: global accuracy per round (MNIST with noisy clients)",
                                ylabel="global test accuracy (%)")
    plots.caption(fig, profile, len(S["seeds"]), f"{S['full_rounds']} (full) / {S['partial_rounds']} (partial) rounds",
                  note=f"{S['n_clients']} clients, lr decay {READING}")
    plots.save_figure(fig, "fedprof_curves")

# %% [markdown]
# ## D. Fig. 6: participation by kind of client
# How many times each client was selected over the partial runs, by the kind of its training data.

# %%
def participation(r):
    kinds = r.client_kinds
    picked = Counter(i for s in r.record("selected") for i in s) if r.has_record("selected") else None
    if picked is None:  # FedAvg-RP and FedProx record their participants per round
        picked = Counter(i for s in r.participants for i in s)
    per_kind = {k: [picked.get(i, 0) for i in range(len(kinds)) if kinds[i] == k] for k in KINDS}
    return {k: float(np.mean(v)) if v else float("nan") for k, v in per_kind.items()}


names = {"clean": "clean", "saltpepper": "salt-and-pepper", "blur": "blurred", "irrelevant": "irrelevant"}
if table3:
    shares = {lab: participation(results(table3[(C0, lab)])[0]) for lab in ("FedAvg-RP", "FedProf (partial)")}
    for lab, by_kind in shares.items():
        print(f"{lab:18s} mean selections per client: " + ", ".join(f"{k} {v:.2f}" for k, v in by_kind.items()))
    fig = plots.grouped_bars({lab: {names[k]: v for k, v in by_kind.items()} for lab, by_kind in shares.items()},
                             "rounds taken part in (mean per client)",
                             f"FedProf's Fig. 6: participation by kind of client (C = {C0})")
    plots.caption(fig, profile, 1, S["partial_rounds"], note=f"seed 0, partial aggregation, lr decay {READING}")
    plots.save_figure(fig, "fedprof_participation")

# %% [markdown]
# ## E. The divergence of each kind of client, and alpha
# A client that is not selected again keeps the profile it last sent, scored against the server's baseline of that
# same model version, so the divergence of clients FedProf stops choosing stays flat.

# %%
if table3:
    r0 = results(table3[(C0, "FedProf (partial)")])[0]
    div = np.array(r0.record("div"))  # [rounds, clients]
    kinds = np.array(r0.client_kinds)
    by_kind = {k: {"method": "fedprof", "acc": div[:, kinds == k].mean(1)[None, :]} for k in KINDS if (kinds == k).any()}
    fig = plots.accuracy_curves({"FedProf (partial)": by_kind}, "Mean divergence of the clients' profiles from the "
                                "server's, by kind of client (not in the paper)", ylabel="mean KL divergence (Eq. 3)")
    plots.caption(fig, profile, 1, S["partial_rounds"], note=f"C = {C0}, alpha = 10, lr decay {READING}")
    plots.save_figure(fig, "fedprof_div_by_kind")
alpha_best = {10.0: stats.mean_se([100 * r.best("acc_all") for r in results(table3_by["per participation"][
    (C0, "FedProf (partial)")])])} if results.has(table3_by["per participation"][(C0, "FedProf (partial)")]) else {}
if results.has(every(alphas)):
    alpha_best |= {a: stats.mean_se([100 * r.best("acc_all") for r in results(cfgs)]) for a, cfgs in alphas.items()}
else:
    print(results.missing_note("alpha's sweep"))
if alpha_best:
    plots.save_table([{"alpha": a, "best_mean": m, "best_se": se, "seeds": len(S["seeds"]),
                       "rounds": S["partial_rounds"], "C": C0} for a, (m, se) in sorted(alpha_best.items())],
                     "fedprof_alpha")

# %% [markdown]
# ## F. Table 2 (the S-Task, GasTurbine)
# The UCI GasTurbine data are not to be had here: not run. The paper's numbers are in `fedprof.TABLE2`.

# %% [markdown]
# ## What the numbers say

# %%
ledger = claims.ClaimsLedger("08_fedprof_client_selection", profile)
per_seed = lambda C, lab, f: [f(r) for r in results(table3[(C, lab)])] if table3 else None  # noqa: E731 (per seed)
said = "" if READING in (None, "per participation") else "; lr decay per round, the earlier reading"
best_of = lambda r: 100 * r.best("acc_all")  # noqa: E731
target = S["targets"][0]
for C in S["fractions"]:
    rounds = lambda lab: per_seed(C, lab, lambda r: rounds_to(r, target))  # noqa: E731
    for agg, base, ours_lab in (("full", "FedAvg", "FedProf (full)"), ("partial", "FedAvg-RP", "FedProf (partial)")):
        reported = fedprof.TABLE3.get((agg, C), {})  # the paper's rounds to 90% (none for other C)
        ledger.compare("FedProf", "Table 3", f"FedProf reaches {target:.0%} in fewer rounds than {base} ({agg} "
                       f"aggregation, C = {C}{said})", rounds(ours_lab), rounds(base), "<",
                       paper_value=[reported[base][1], reported["FedProf"][1]] if reported else None,
                       rounds=S[f"{agg}_rounds"], censored_at=S[f"{agg}_rounds"] + 1)  # rounds_to's "never"
    ledger.compare("FedProf", "Table 3", f"FedProf's best accuracy is above FedAvg's (full aggregation, C = {C}{said})",
                   per_seed(C, "FedProf (full)", best_of), per_seed(C, "FedAvg", best_of), ">",
                   rounds=S["full_rounds"])
    strongest = [max(a, b) for a, b in zip(per_seed(C, "FedAvg-RP", best_of), per_seed(C, "FedProx", best_of))] \
        if table3 else None
    ledger.compare("FedProf", "Table 3", f"FedProf's best accuracy is above FedAvg-RP's and FedProx's (partial "
                   f"aggregation, C = {C}{said})", per_seed(C, "FedProf (partial)", best_of), strongest, ">",
                   rounds=S["partial_rounds"])
picked = [participation(r) for r in results(table3[(C0, "FedProf (partial)")])] if table3 else None
for kind in ("irrelevant", "blur"):
    ledger.compare("FedProf", "Fig. 6", f"{names[kind]} clients are selected less often than clean ones (mean "
                   f"selections per client, C = {C0}{said})", [p[kind] for p in picked] if picked else None,
                   [p["clean"] for p in picked] if picked else None, "<", rounds=S["partial_rounds"])
finals = {cond: list(c["acc"][:, -1]) for cond, c in panel.items()}  # none where Fig. 1's runs are missing
others = [min(finals[c][i] for c in finals if c != "biased + noisy") for i in range(len(S["seeds"]))] if panel else None
ledger.compare("FedProf", "Fig. 1", "biased + noisy data slow FedAvg most (final accuracy, against the lowest of the "
               "other three conditions)", finals.get("biased + noisy"), others, "<", rounds=f1["rounds"])
ledger.save()
