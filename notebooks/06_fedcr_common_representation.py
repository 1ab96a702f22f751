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
# # FedCR: a common Gaussian representation (Zhang et al., ICML 2023)
#
# FedCR ends every client's body in a Gaussian layer, pulls each sample's Gaussian towards a global one per class
# (Eq. 7's KL term, "CMI"), and the server takes products of experts of the clients' class Gaussians (Eqs. 8-9).
# Its protocol (Sec. 5.1, `fedcr.config`): each dataset's train and test sets pooled, 100 equal clients
# split 70/30, 10% of them per round, 10 local epochs of SGD (batch 48), then every client's 10-epoch fine-tune of
# its personal part. Partitions: n1 = 5 classes per client, n2 = per-client Dirichlet(0.5) class priors.
#
# | part | reproduces |
# |---|---|
# | A | Table 2: FashionMNIST (real columns), MNIST standing in for EMNIST-L (its MLP); CIFAR reported missing |
# | B | Fig. 3(a-c): accuracy against rounds, the runs of A |
# | C | Table 3: the Gaussian dimension V |
# | D | Fig. 3(d): the weight beta of the KL term |
# | E | Fig. 2: 2-D Gaussian means of one client's test images, beta = 0 against beta > 0 |
# | F | Table 9 stand-in: no model aggregation (FedCR-NA) on FashionMNIST with k classes per client |
# | G | FedCR and FedCR-NA in FedLog's MNIST Table 1 setting, beside FedLog-C, FedProto, FedPer and FedAvg |
#
# The quick profile shrinks the data (10% of each client's share: 49 training and 21 test images instead of 490 and
# 210), the models (hidden width, V, draws), the rounds and the sweeps, so that the whole notebook runs in minutes
# on a CPU: its accuracies are far below the paper's, and it compares methods early in training. The paper profile
# uses the paper's settings, with each method's learning rate from the authors' run commands and every local step
# clipped to norm 10 as their code does (`fedcr.LR`, `FEDCR_CLIP`); Ditto has the authors' final round in
# which every client trains. Its runs are GPU work (docs/measurements.md has the cost per round on a CPU) and are
# computed by `scripts/paper_runs.py`, not by this notebook: it redraws what is shipped in `archive/`.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
import numpy as np

from IPython.display import display

from fedlib import analysis, claims, experiments as ex, papers, paths, plots, stats, sweep
from fedlib.papers import fedcr, fedlog
from fedlib.result import Result, compare

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

S = papers.settings(fedcr.PROFILES, profile)
BASELINES, PAPER_NAME, SHOWN, NONAGG = fedcr.BASELINES, fedcr.PAPER_NAME, fedcr.SHOWN, fedcr.NONAGGREGATE
plots.style()
print(profile, {k: v for k, v in S.items() if k != "columns"}, "columns:", S["columns"])


def fedcr_config(dataset, label, part, seed, **change):
    return fedcr.run(profile, dataset, label, part, seed, **change)


final_acc = lambda r: 100 * r.final()  # noqa: E731  (after the fine-tune where the method has one: Table 2's)
columns = [(d, p) for d, p in S["columns"] if ex.dataset_available(d)]
missing = [(d, p) for d, p in S["columns"] if (d, p) not in columns]
print("columns run:", columns, "| missing here (no files):", missing)
LABELS = BASELINES + ["FedCR"]
DIM_SETS = [d for d, p in columns if p == "n1"][:None if profile == "paper" else 1]  # quick: FashionMNIST only
BETA_SETS = [d for d in S["beta_sets"] if (d, "n1") in columns]
NONAGG_SET = "fashion_mnist" if ex.dataset_available("fashion_mnist") else None
ROUNDS = fedcr.rounds_label(profile, sorted({d for d, _ in columns}))  # the paper's differ by dataset

# %% [markdown]
# ## Runs
# Every run of parts A, C, D, F and G in one sweep, so that the worker processes (one per core) stay busy;
# finished runs come from the cache. Ditto's runs wait for its lambda (next cell); part E's runs are live.

# %%
d0, p0 = columns[0]
upfront = [fedcr_config(d0, "Ditto", p0, S["seeds"][0], lam=lam) for lam in S["ditto_grid"]]
upfront += [fedcr_config(d, lab, p, sd) for d, p in columns for lab in LABELS if lab != "Ditto" for sd in S["seeds"]]
upfront += [fedcr_config(d, "FedCR", "n1", sd, dim=V) for d in DIM_SETS for V in S["dims"] for sd in S["seeds"]]
upfront += [fedcr_config(d, "FedCR", "n1", sd, beta=b) for d in BETA_SETS for b in S["betas"] for sd in S["seeds"]]
if NONAGG_SET:
    upfront += [fedcr_config(NONAGG_SET, lab, "n1", sd, classes=k, rounds=S["table9"]["rounds"])
                for k in S["table9"]["ks"] for lab in NONAGG for sd in S["seeds"]]
if ex.dataset_available("mnist"):
    upfront += [fedcr.table1_run(profile, m, sd) for m in ("fedcr", "fedcr_na") for sd in S["table1"]["seeds"]]
sweep.require_shipped(upfront, profile, "scripts/paper_runs.py fedcr_table2_n1 (and the other fedcr_* sets)")
_ = sweep.Runs(upfront, profile, "scripts/paper_runs.py fedcr_table2_n1")  # read from the cache below

# %% [markdown]
# ## Ditto's lambda
# The paper profile takes the paper's lambda per column (its appendix: 0.1 for EMNIST-L, so for MNIST here; 0.001
# for FashionMNIST). The quick profile chooses one on seed 0 of the first column from the paper's grid, by final
# accuracy, and freezes it.

# %%
grid = {lam: sweep.run_many([fedcr_config(d0, "Ditto", p0, S["seeds"][0], lam=lam)])[0] for lam in S["ditto_grid"]}
LAM = max(grid, key=lambda lam: final_acc(grid[lam])) if grid else None
print(f"lambda = {LAM:g} for every Ditto run below; final accuracy by lambda:" if grid else
      "lambda per column, the paper's:", {lam: round(final_acc(r), 2) for lam, r in grid.items()} if grid else
      {f"{d} {p}": fedcr.DITTO_LAM[(d, p)] for d, p in columns})

# %% [markdown]
# ## A. Table 2 (and its Table 10 standard deviations)
# Final accuracy: after the 10-epoch fine-tune (the protocol's; Ditto's is the authors' final round, every client);
# FedAvg is read before the fine-tune and FedAvg-FT is the same run after it. "best" is the best round before the
# fine-tune. The paper's "FedBABU" row is FedPer in the authors' code (its `FedBABU` baseline); ours is the real FedBABU, so its
# paper number is shown for reference only.

# %%
_ = sweep.run_many([fedcr_config(d, "Ditto", p, sd, lam=LAM) for d, p in columns for sd in S["seeds"]])
table2 = {(d, p): {lab: sweep.run_many([fedcr_config(d, lab, p, sd, lam=LAM) for sd in S["seeds"]]) for lab in LABELS}
          for d, p in columns}
rows = []
for (d, p), by_label in table2.items():  # FedAvg before the fine-tune, FedAvg-FT (the same runs) after it
    keys, reported = dict(dataset=SHOWN[d], partition=p), fedcr.TABLE2.get((PAPER_NAME[d], p), {})
    paper_name = lambda lab: "FedBABU" if lab.startswith("FedBabu") else lab  # noqa: E731
    rows += compare({"FedAvg": by_label["FedAvg"]}, reported, quantity=Result.last, keys=keys)
    rows += compare({"FedAvg-FT": by_label["FedAvg"], **{lab: rs for lab, rs in by_label.items() if lab != "FedAvg"}},
                    reported, keys=keys, paper_name=paper_name)
rows += compare({}, {}, missing=[dict(dataset=SHOWN[d], partition=p) for d, p in missing])
plots.save_table(rows, "fedcr_table2")

# %% [markdown]
# ## B. Fig. 3(a-c): accuracy against rounds

# %%
panels = {f"{SHOWN[d]} {p}": {lab: {"method": fedcr.METHODS[lab][0],
                                     "acc": np.array([r.curve() for r in rs]) * 100}
                               for lab, rs in by_label.items()} for (d, p), by_label in table2.items()}
fig = plots.accuracy_curves(panels, "FedCR's Fig. 3: mean client accuracy per round, before the final fine-tune "
                                    "(mean ± SE over seeds)")
plots.caption(fig, profile, len(S["seeds"]), ROUNDS,
              note=f"width {S['model']['width']}, V = {S['model']['dim']}, Ditto lambda {LAM:g}")
plots.save_figure(fig, "fedcr_curves")

# %% [markdown]
# ## C. Table 3: the dimension V of the Gaussian layer (n1)

# %%
per_seed = {(name, d, v): [final_acc(r) for r in sweep.run_many([fedcr_config(d, "FedCR", "n1", sd, **{name: v})
                                                                  for sd in S["seeds"]])]
            for name, sets, values in (("dim", DIM_SETS, S["dims"]), ("beta", BETA_SETS, S["betas"]))
            for d in sets for v in values}  # FedCR's final accuracy on n1, seed by seed
dims = {(d, v): stats.mean_se(f) for (name, d, v), f in per_seed.items() if name == "dim"}
betas = {(d, v): stats.mean_se(f) for (name, d, v), f in per_seed.items() if name == "beta"}
series = lambda table, d: tuple(zip(*[(v, *table[(dd, v)]) for dd, v in table if dd == d]))  # noqa: E731
dim_rows = [{"dataset": SHOWN[d], "V": V, "final_mean": m, "final_se": se,
             "paper_accuracy": fedcr.TABLE3.get(V, (float("nan"),) * 2)[0 if d == "mnist" else 1],
             "seeds": len(S["seeds"]), "rounds": ROUNDS} for (d, V), (m, se) in dims.items()]
display(plots.save_table(dim_rows, "fedcr_table3_dims")) if dim_rows else None
sets = sorted({d for d, _ in dims})
fig = plots.parameter_sweep(
    {SHOWN[d]: {"ours": series(dims, d),
                "paper": (list(fedcr.TABLE3), [v[0 if d == "mnist" else 1] for v in fedcr.TABLE3.values()], None)}
     for d in sets}, "Gaussian dimension V", "FedCR's Table 3: final accuracy against V (n1)")
plots.caption(fig, profile, len(S["seeds"]), ROUNDS, note=f"width {S['model']['width']}")
plots.save_figure(fig, "fedcr_dims")

# %% [markdown]
# ## D. Fig. 3(d): the weight beta of the KL term (n1)
# MNIST stands in for EMNIST-L and FashionMNIST for CIFAR-10. beta = 0 trains without the global class Gaussians.

# %%
beta_rows = [{"dataset": SHOWN[d], "beta": b, "final_mean": m, "final_se": se, "seeds": len(S["seeds"]),
              "rounds": ROUNDS} for (d, b), (m, se) in betas.items()]
display(plots.save_table(beta_rows, "fedcr_beta")) if beta_rows else None
fig = plots.parameter_sweep({SHOWN[d]: {"ours": series(betas, d)} for d in sorted({d for d, _ in betas})},
                            "beta (weight of the KL term)",
                            "FedCR's Fig. 3(d): final accuracy against beta (n1; the paper gives no numbers)")
plots.caption(fig, profile, len(S["seeds"]), ROUNDS, note=f"V = {S['model']['dim']}")
plots.save_figure(fig, "fedcr_beta")

# %% [markdown]
# ## E. Fig. 2: the 2-D Gaussian means of one client's test images
# V = 2 on MNIST; after the rounds, one client (n1: a client with 5 classes; n2: the client with the most classes)
# trains 10 more local epochs, and the means mu(x) of its test images are drawn, beta = 0 against beta = 5e-4.
# Separation is the silhouette score of the means by class (higher = classes further apart).

# %%
f2 = S["fig2"]
scatter, silhouettes = {}, {}
if ex.dataset_available("mnist"):
    cases = [(p, beta) for p in ("n1", "n2") for beta in (0.0, 5e-4)]
    cfgs = [fedcr_config("mnist", "FedCR", p, 0, dim=2, beta=beta, rounds=f2["rounds"], **f2["over"]) for p, beta in cases]
    views = sweep.call_many(analysis.fedcr_fig2_view, [(cfg, f2["epochs"], f2["points"]) for cfg in cfgs])  # in the workers
    for (p, beta), v in zip(cases, views):
        silhouettes[(p, beta)] = stats.silhouette(v["mu"], v["y"])
        scatter[f"{p}, beta = {beta:g} (client {v['client']}, {v['classes']} classes)"] = (
            v["mu"], v["y"], silhouettes[(p, beta)])
        print(f"Fig. 2 {p} beta={beta:g}: silhouette {silhouettes[(p, beta)]:.3f} over {len(v['y'])} test images")
    fig = plots.feature_scatter(scatter, "FedCR's Fig. 2: Gaussian means (V = 2) of one client's MNIST test images")
    plots.caption(fig, profile, 1, f2["rounds"], note=f"then {f2['epochs']} local epochs at the client shown")
    plots.save_figure(fig, "fedcr_fig2_features")

# %% [markdown]
# ## F. Table 9 stand-in: no model aggregation (FashionMNIST, k classes per client)
# The paper's Table 9 is CIFAR-100 with 10, 15 and 20 classes per client; here FashionMNIST with 3, 5 and 7.
# Local training sends nothing; FedCR-NA and FedLog send per-class statistics only; FedAvg and FedPer send models.

# %%
t9 = S["table9"]
table9 = {(k, lab): sweep.run_many([fedcr_config(NONAGG_SET, lab, "n1", sd, classes=k, rounds=t9["rounds"])
                                    for sd in S["seeds"]]) for k in t9["ks"] for lab in NONAGG} if NONAGG_SET else {}
t9_rows = [{"classes_per_client": k, "method": lab, **dict(zip(("final_mean", "final_se"),
                                                               stats.mean_se([final_acc(r) for r in rs]))),
            "total_bits": rs[0].total_bits(), "seeds": len(S["seeds"]), "rounds": t9["rounds"]}
           for (k, lab), rs in table9.items()]
display(plots.save_table(t9_rows, "fedcr_table9_nonaggregate")) if t9_rows else None

# %% [markdown]
# ## G. FedCR and FedCR-NA in FedLog's MNIST Table 1 setting
# 50 clients with 2 classes each, 5% of MNIST, full participation, 5 local epochs of Adam, Table A.2's CNN with a
# Gaussian layer of V = 50 (`cnn_mnist_vib_v50`, 50 = FedLog's feature size). The other methods' runs are the
# paper-setting runs of notebook 02 (100 rounds, shipped in `archive/`), read for their first rounds when this
# profile runs fewer (`experiments.first_rounds`: a run's first rounds are the shorter run's).

# %%
g = S["table1"]
t1 = {}
if ex.dataset_available("mnist"):
    for lab in ["FedAvg", "FedPer", "FedProto", "FedLog-C"]:
        if g["over"]:  # the smoke profile's own small setting
            t1[lab] = sweep.run_many([fedlog.table1_config("mnist", lab, seed=sd, rounds=g["rounds"], **g["over"])
                                      for sd in g["seeds"]])
        else:
            t1[lab] = [ex.first_rounds(r, g["rounds"]) for r in
                       sweep.run_many([fedlog.table1_config("mnist", lab, seed=sd) for sd in g["seeds"]])]
    for lab, method in [("FedCR", "fedcr"), ("FedCR-NA", "fedcr_na")]:
        t1[lab] = sweep.run_many([fedcr.table1_run(profile, method, sd) for sd in g["seeds"]])
    t1_rows = [{**r, "seeds": len(g["seeds"]), "rounds": g["rounds"]}
               for r in stats.table_rows(t1, fedlog.THRESHOLD["mnist"], reference="FedLog-C")]
    display(plots.save_table(t1_rows, "table1_mnist_seed_systems_fedcr"))

# %% [markdown]
# ## What the numbers say
# In the quick profile each client takes part in about 2 of the 20 rounds (10%), on a tenth of its data, so the
# verdicts compare methods early in training: the paper's runs are 250-500 rounds. A method whose body learns from
# every participant (FedAvg, FedPer, FedCR) gains most there; a client that trains its own body (local training,
# FedCR-NA, FedLog) has had about 20 local steps.

# %%
ledger = claims.ClaimsLedger("06_fedcr_common_representation", profile)
n_rounds = ROUNDS
finals = lambda c, lab: [final_acc(r) for r in table2[c][lab]]  # noqa: E731  (one number per seed)
for c in [c for c in table2 if c[0] == "fashion_mnist"]:
    p = c[1]
    strongest = max(BASELINES, key=lambda lab: np.mean(finals(c, lab)))  # FedAvg's final_acc is FedAvg-FT's
    ledger.compare("FedCR", "Table 2", f"FedCR is more accurate than the strongest implemented baseline on "
                   f"FashionMNIST {p} ({strongest}; final accuracy after the fine-tune)", finals(c, "FedCR"),
                   finals(c, strongest), ">", paper_value=fedcr.TABLE2[("fashion_mnist", p)]["FedCR"],
                   rounds=n_rounds)
    if p == "n1":
        for lab, shown in (("FedAvg", "FedAvg-FT"), ("FedRep", "FedRep")):
            ledger.compare("FedCR", "Table 2", f"FedCR is more accurate than {shown} on FashionMNIST n1",
                           finals(c, "FedCR"), finals(c, lab), ">",
                           paper_value=round(fedcr.TABLE2[("fashion_mnist", "n1")]["FedCR"]
                                             - fedcr.TABLE2[("fashion_mnist", "n1")][shown], 2), rounds=n_rounds)
if dims:
    d = sets[0]
    high = [V for V in S["dims"] if V >= 8]
    low = [V for V in S["dims"] if V <= 4]
    if high and low:
        worst_high = [min(v) for v in zip(*(per_seed[("dim", d, V)] for V in high))]
        best_low = [max(v) for v in zip(*(per_seed[("dim", d, V)] for V in low))]
        ledger.compare("FedCR", "Table 3", f"accuracy drops only at V <= 4 ({SHOWN[d]}: the lowest accuracy at V >= 8 "
                       "against the highest at V <= 4)", worst_high, best_low, ">",
                       paper_value=round(min(fedcr.TABLE3[V][1] for V in (8, 16, 32, 64))
                                         - fedcr.TABLE3[4][1], 2), rounds=n_rounds)
if betas:
    for d in sorted({d for d, _ in betas}):
        positive = [b for dd, b in betas if dd == d and b > 0]
        best_b = max(positive, key=lambda b: betas[(d, b)][0])
        ledger.compare("FedCR", "Fig. 3(d)", f"beta = 0 is worse than the best beta > 0 ({SHOWN[d]}, beta "
                       f"{best_b:g})", per_seed[("beta", d, best_b)], per_seed[("beta", d, 0.0)], ">", rounds=n_rounds)
        if len(positive) > 1 and best_b != max(positive):
            ledger.compare("FedCR", "Fig. 3(d)", f"too large a beta degrades accuracy ({SHOWN[d]}: beta {best_b:g} "
                           f"against {max(positive):g})", per_seed[("beta", d, best_b)],
                           per_seed[("beta", d, max(positive))], ">", rounds=n_rounds)
for p in ("n1", "n2"):
    if (p, 0.0) in silhouettes:
        ledger.compare("FedCR", "Fig. 2", f"with the KL term (beta = 5e-4) the class clusters of the Gaussian means are "
                       f"more separated than with beta = 0 (silhouette, {p}; seed 0)", [silhouettes[(p, 5e-4)]],
                       [silhouettes[(p, 0.0)]], ">", rounds=S["fig2"]["rounds"])
for k in t9["ks"] if table9 else []:
    ledger.compare("FedCR", "Table 9", f"FedCR-NA beats local training (FashionMNIST, k = {k} classes per client)",
                   [final_acc(r) for r in table9[(k, "FedCR-NA")]], [final_acc(r) for r in table9[(k, "Local")]],
                   ">", rounds=t9["rounds"],
                   paper_value={kk: round(fedcr.TABLE9[kk]["FedCR-NA"] - fedcr.TABLE9[kk]["Local"], 2)
                                for kk in fedcr.TABLE9})
if t1:
    best_acc_of = lambda lab: [100 * r.best() for r in t1[lab]]  # noqa: E731  (one number per seed)
    for other in ("FedCR", "FedCR-NA"):
        ledger.compare("FedLog", "Table 1 (seed systems)", f"FedLog-C is more accurate than {other} in FedLog's MNIST "
                       "setting (best round)", best_acc_of("FedLog-C"), best_acc_of(other), ">", rounds=g["rounds"])
ledger.save()
