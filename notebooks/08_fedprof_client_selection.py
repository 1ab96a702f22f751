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
# # FedProf: client selection by representation profiles (Wu, He, Lin and Maple)
#
# Each client profiles its data with the global model it receives: per dimension of fc1's pre-activations, a
# Gaussian (mean, variance). The server profiles its own clean validation set with the same model version, scores
# each client by exp(-alpha x the mean KL divergence of the two profiles) and draws the round's clients in
# proportion to the scores, so clients whose data look unlike the clean data are rarely chosen
# (`fedlib/algorithms/fedprof.py`). Protocol (Sec. 5.1's L-Task, `fedprof.protocol`): MNIST standing in
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
# about 240), participation 0.05 and 0.1, 60 rounds of full and 30 of partial aggregation (full aggregation cut from
# 100 to fit a 10-minute budget), 30 rounds for Fig. 1, one seed, and targets of 60% and 80% instead of the paper's
# 90%, which no method reaches in so few rounds on so little data. CFCFM, FedAdam and AFL are not implemented: their
# paper numbers stand alone.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import outputs, papers, paths, plots
from fedlib.papers import fedprof, part

profile = paths.use_profile(profile)
plots.style()
outputs.settings(profile, fedprof.PROFILES[profile])

# %% [markdown]
# ## Runs
# Every run of parts A, B and E in one sweep, so that the worker processes (one per core) stay busy
# (`fedprof.plans.PARTS`: Table 3 under both readings of the lr decay, Fig. 1's conditions, the alpha sweep).

# %%
reads = papers.read_notebook(profile, fedprof.plans.NOTEBOOK)
table3, fig1, alpha, table3_per_round = (reads[p] for p in fedprof.PARTS)
shown = part.first_whole(table3, table3_per_round)  # the reading parts C-E and the verdicts read
print(f"parts C-E and the verdicts read the runs with lr decay {fedprof.plans.READINGS[shown.part]}" if shown else
      f"{table3.note()}; {table3_per_round.note()}")

# %% [markdown]
# ## A. Fig. 1: FedAvg under four data conditions (full aggregation)

# %%
fig1_curves = fedprof.figures.fig1(fig1)

# %% [markdown]
# ## B and C. Table 3 stand-in and the accuracy traces (Fig. 5)
# Best accuracy and the rounds to each target (first round at or above it; a run that never reaches it counts as
# its rounds + 1); the paper's numbers (EMNIST digits, to 90%) stand beside ours.

# %%
table = fedprof.figures.table3([table3, table3_per_round], shown)

# %% [markdown]
# ## D. Fig. 6: participation by kind of client
# How many times each client was selected over the partial runs, by the kind of its training data.

# %%
shares = fedprof.figures.participation(shown)

# %% [markdown]
# ## E. The divergence of each kind of client, and alpha
# A client that is not selected again keeps the profile it last sent, scored against the server's baseline of that
# same model version, so the divergence of clients FedProf stops choosing stays flat.

# %%
divergence = fedprof.figures.divergence(shown)
alphas = fedprof.figures.alpha(alpha, table3)

# %% [markdown]
# ## F. Table 2 (the S-Task, GasTurbine)
# The UCI GasTurbine data are not to be had here: not run. The paper's numbers are in `fedprof.TABLE2`.

# %% [markdown]
# ## What the numbers say
# Each claim is a function in `fedlib/papers/fedprof/claims.py`, tested on made-up results.

# %%
ledger = fedprof.claims.record(reads)
