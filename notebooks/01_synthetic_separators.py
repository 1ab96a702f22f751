# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
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
# Everything is computed by `fedlib.papers.fedlog.analysis.synthetic`; this notebook only draws.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import outputs, papers, paths, plots
from fedlib.data import circle_federation
from fedlib.papers import fedlog
from fedlib.papers.fedlog.analysis import synthetic

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

SETTINGS = fedlog.FIG1.settings(profile)  # Fig. 1's part: its seeds and local-iteration counts
METHODS = fedlog.FIG1_METHODS
plots.style()
outputs.settings(profile, SETTINGS)

# %% [markdown]
# ## Representations and separators after one round, and accuracy after one round vs local iterations
# Local representations of the two clients and the lines their heads draw (the figure's last panel says what each
# mark means): FedLog's line is the global head; LG-FedAvg's two local heads are drawn before averaging, with the
# average in red; FedProto keeps two local heads. The accuracy panels show the mean $\pm$ SE over seeds, and each
# method's test accuracy minus FedLog's, paired by seed.

# %%
fed = circle_federation(seed=0)
shown = SETTINGS.shown_iters  # the local iterations the representation panels show
snapshots = {m: synthetic.one_round(m, shown, seed=0) for m in METHODS}
reads = papers.read_notebook(profile, fedlog.plans.NOTEBOOK_01)  # Fig. 1's one-round runs, cached
acc = synthetic.accuracy_of(reads[fedlog.FIG1])  # method -> train and test accuracy [seeds, local iterations]
data = [(fed.train.x[c, :int(fed.train.counts[c])].numpy(), fed.train.y[c, :int(fed.train.counts[c])].numpy())
        for c in range(2)]
panels = [(snapshots["fedlog"][0], "random initialisation (FedLog)", True),
          (snapshots["fedlog"][1], f"FedLog after 1 round, {shown} local iterations", True),
          (snapshots["lg_fedavg"][1], f"LG-FedAvg after 1 round, {shown} local iterations", True),
          (snapshots["fedproto"][1], f"FedProto after 1 round, {shown} local iterations", False)]
fig = fedlog.figures.fig1(data, 26 / 7, panels, acc, SETTINGS.iters)
plots.caption(fig, profile, len(SETTINGS.seeds), 1, note=f"{len(SETTINGS.iters)} local-iteration counts")
saved = outputs.save_figure(fig, "fig1_synthetic")  # its .png and .pdf under figures/

# %%
table = fedlog.figures.fig1_table(acc, SETTINGS.iters)  # shown as saved

# %% [markdown]
# ## What the numbers say
# The paper claims: (i) FedLog makes more progress in one round than the averaging methods,
# (ii) it overfits less (small train-test gap). The cell below states what our runs show.

# %%
print(fedlog.claims.fig1_summary(acc, SETTINGS.iters))
ledger = fedlog.claims.record(reads)  # each claim a function in fedlog/claims.py
