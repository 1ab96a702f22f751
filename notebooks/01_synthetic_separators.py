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
# # Fig. 1: local representations and separators on synthetic data
#
# FedLog paper, Section 4.1. 80 training points uniform in $[-5, 5]^2$; class 1 lies outside the
# circle of radius 26/7 at the origin. Two clients split the points by sorted $x_1$: client 0
# (circles) has a 3-layer MLP body, client 1 (triangles) a 2-layer one; both map to a 2-D
# representation, so every head is a line. FedLog, LG-FedAvg (one global layer) and FedProto run
# **one** global round with 1 to 30 full-batch local iterations; the heads of LG-FedAvg and
# FedProto start equal. Test points are drawn i.i.d. from the same square, and each client is
# evaluated on the test points of its own $x_1$ range.
#
# Everything is computed by `fedlib.synthetic`; this notebook only draws.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import claims, papers, paths, plots, synthetic
from fedlib.data import circle_federation
from fedlib.papers import fedlog

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

SETTINGS = papers.settings(fedlog.SYNTHETIC_PROFILES, profile)
METHODS = ["fedlog", "lg_fedavg", "fedproto"]
plots.style()
print(profile, SETTINGS)

# %% [markdown]
# ## Representations and separators after one round, and accuracy after one round vs local iterations
# Local representations of the two clients and the lines their heads draw (the figure's last panel says what each
# mark means): FedLog's line is the global head; LG-FedAvg's two local heads are drawn before averaging, with the
# average in red; FedProto keeps two local heads. The accuracy panels show the mean $\pm$ SE over seeds, and each
# method's test accuracy minus FedLog's, paired by seed.

# %%
fed = circle_federation(seed=0)
E = SETTINGS["shown_iters"]
snapshots = {m: synthetic.one_round(m, E, seed=0) for m in METHODS}
acc = synthetic.accuracy_vs_iterations(METHODS, SETTINGS["iters"], SETTINGS["seeds"])
data = [(fed.train.x[c, :int(fed.train.counts[c])].numpy(), fed.train.y[c, :int(fed.train.counts[c])].numpy())
        for c in range(2)]
panels = [(snapshots["fedlog"][0], "random initialisation (FedLog)", True),
          (snapshots["fedlog"][1], f"FedLog after 1 round, {E} local iterations", True),
          (snapshots["lg_fedavg"][1], f"LG-FedAvg after 1 round, {E} local iterations", True),
          (snapshots["fedproto"][1], f"FedProto after 1 round, {E} local iterations", False)]
fig = plots.fig1(data, 26 / 7, panels, acc, SETTINGS["iters"])
plots.caption(fig, profile, len(SETTINGS["seeds"]), 1, note=f"{len(SETTINGS['iters'])} local-iteration counts")
plots.save_figure(fig, "fig1_synthetic")

# %%
rows = []
for m in METHODS:
    for j, e in enumerate(SETTINGS["iters"]):
        rows.append({"method": plots.LABELS[m], "local_iterations": e,
                     "train_mean": float(acc[m]["train"][:, j].mean()), "train_std": float(acc[m]["train"][:, j].std()),
                     "test_mean": float(acc[m]["test"][:, j].mean()), "test_std": float(acc[m]["test"][:, j].std())})
plots.save_table(rows, "fig1_accuracy")

# %% [markdown]
# ## What the numbers say
# The paper claims: (i) FedLog makes more progress in one round than the averaging methods,
# (ii) it overfits less (small train-test gap). The cell below states what our runs show.

# %%
last = len(SETTINGS["iters"]) - 1
for m in METHODS:
    tr, te = acc[m]["train"][:, last].mean(), acc[m]["test"][:, last].mean()
    area = acc[m]["test"].mean()
    print(f"{plots.LABELS[m]:10s} after {SETTINGS['iters'][last]:2d} iterations: train {tr:.3f}, test {te:.3f}, "
          f"gap {tr - te:+.3f}; test accuracy averaged over all iteration counts {area:.3f}")
best = max(METHODS, key=lambda m: acc[m]["test"].mean())
print(f"highest mean test accuracy over the iteration range: {plots.LABELS[best]}")

# the claims ledger: each verdict computed from the numbers above (figures/claims.csv)
ledger = claims.ClaimsLedger("01_synthetic_separators", profile)
others = [m for m in METHODS if m != "fedlog"]
per_seed_test = {m: [float(v) for v in acc[m]["test"].mean(1)] for m in METHODS}  # one number per seed
per_seed_gap = {m: [float(v) for v in acc[m]["train"][:, last] - acc[m]["test"][:, last]] for m in METHODS}
rival = max(others, key=lambda m: sum(per_seed_test[m]))
ledger.compare("FedLog", "Fig. 1", "after one round FedLog's test accuracy (mean over the local-iteration range) is "
               f"the highest of FedLog, LG-FedAvg and FedProto (against {plots.LABELS[rival]})", per_seed_test["fedlog"],
               per_seed_test[rival], ">", rounds=1)
rival = min(others, key=lambda m: sum(per_seed_gap[m]))
ledger.compare("FedLog", "Fig. 1", f"FedLog overfits least: the smallest train-test gap after "
               f"{SETTINGS['iters'][last]} local iterations (against {plots.LABELS[rival]})", per_seed_gap["fedlog"],
               per_seed_gap[rival], "<", rounds=1)
ledger.save()
