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
# clipped to norm 10 as their code does (`fedcr.LR`, `FEDCR_CLIP`; on FashionMNIST, Ditto's, FedRep's and FedAvg's
# screened on the paper's grid, `fedcr.TUNED_LR`); Ditto has the authors' final round in which every client trains.
# Its runs take hours each on a CPU (docs/measurements.md has the cost per round) and are computed by
# `scripts/paper_runs.py`, not by this notebook: it redraws what is shipped in `archive/`.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import outputs, papers, paths, plots
from fedlib.papers import accounting, fedcr

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/
plots.style()
print("columns run:", fedcr.plans.columns_here(fedcr.PROFILES[profile]),
      "| missing here (no files):", fedcr.plans.columns_missing(fedcr.PROFILES[profile]))
outputs.settings(profile, fedcr.PROFILES[profile])

# %% [markdown]
# ## Runs
# Every run of parts C, D, F and G (and Ditto's lambda grid, and its second reading) in one sweep, so that the
# worker processes (one per core) stay busy; finished runs come from the cache. Table 2's runs wait for Ditto's
# lambda (next cells), FedLog's own runs of part G are read in its cell, and part E's runs are live. The paper
# profile computes nothing: a part whose runs are not shipped is named with the command that computes them, is not
# drawn, and its claims say "not run".


# %%
reads = papers.read_notebook(profile, fedcr.plans.NOTEBOOK, fedcr.plans.UPFRONT)
grid, dims, betas, nonaggregate, systems, second, views = (reads[p] for p in fedcr.plans.UPFRONT)

# %% [markdown]
# ## Ditto's lambda
# The paper profile takes the paper's lambda per column (its appendix: 0.1 for EMNIST-L, so for MNIST here; 0.001
# for FashionMNIST). The quick profile chooses one on seed 0 of the first column from the paper's grid, by final
# accuracy, and freezes it.


# %%
LAM, said = fedcr.analysis.ditto_lambda(grid)
print(said)

# %% [markdown]
# ## A. Table 2 (and its Table 10 standard deviations)
# Final accuracy: after the 10-epoch fine-tune (the protocol's; Ditto's is the authors' final round, every client);
# FedAvg is read before the fine-tune and FedAvg-FT is the same run after it. "best" is the best round before the
# fine-tune. The paper's "FedBABU" row is FedPer in the authors' code (its `FedBABU` baseline); ours is the real FedBABU, so its
# paper number is shown for reference only. At the paper profile, Ditto is read a second way on n1 and n2: as the
# authors' main_fed.py runs it (FedAvg-FT with weight decay 0.001), its rows beside ours and the paper's.


# %%
reads = reads | papers.read_notebook(profile, fedcr.plans.NOTEBOOK, fedcr.plans.table2_at(LAM))  # Ditto at LAM
n1, n2 = reads[fedcr.plans.TABLE2_N1], reads[fedcr.plans.TABLE2_N2]
table2 = fedcr.figures.table2(n1, n2, LAM, second)

# %% [markdown]
# ## B. Fig. 3(a-c): accuracy against rounds


# %%
fedcr.figures.curves(table2, n1, LAM)

# %% [markdown]
# ## C. Table 3: the dimension V of the Gaussian layer (n1)


# %%
per_seed = fedcr.analysis.tables.sweep_finals(dims, betas)  # FedCR's final accuracy on n1, seed by seed, at each V and beta
table3 = fedcr.figures.table3(per_seed, dims)

# %% [markdown]
# ## D. Fig. 3(d): the weight beta of the KL term (n1)
# MNIST stands in for EMNIST-L and FashionMNIST for CIFAR-10. beta = 0 trains without the global class Gaussians.


# %%
beta_table = fedcr.figures.betas(per_seed, betas, accounting.measured_costs())  # costs: for a line if none is run

# %% [markdown]
# ## E. Fig. 2: the 2-D Gaussian means of one client's test images
# V = 2 on MNIST; after the rounds, one client (n1: a client with 5 classes; n2: the client with the most classes)
# trains 10 more local epochs, and the means mu(x) of its test images are drawn, beta = 0 against beta = 5e-4.
# Separation is the silhouette score of the means by class (higher = classes further apart).


# %%
fedcr.figures.fig2(views)

# %% [markdown]
# ## F. Table 9 stand-in: no model aggregation (FashionMNIST, k classes per client)
# The paper's Table 9 is CIFAR-100 with 10, 15 and 20 classes per client; here FashionMNIST with 3, 5 and 7.
# Local training sends nothing; FedCR-NA and FedLog send per-class statistics only; FedAvg and FedPer send models.


# %%
fedcr.figures.table9(nonaggregate)

# %% [markdown]
# ## G. FedCR and FedCR-NA in FedLog's MNIST Table 1 setting
# 50 clients with 2 classes each, 5% of MNIST, full participation, 5 local epochs of Adam, Table A.2's CNN with a
# Gaussian layer of V = 50 (`cnn_mnist_vib_v50`, 50 = FedLog's feature size). The other methods' runs are the
# paper-setting runs of notebook 02 (100 rounds, shipped in `archive/`), read for their first rounds when this
# profile runs fewer (`experiments.first_rounds`: a run's first rounds are the shorter run's).


# %%
reads = reads | papers.read_notebook(profile, fedcr.plans.NOTEBOOK, [fedcr.plans.SEED_BASELINES])  # FedLog's own runs
baselines = reads[fedcr.plans.SEED_BASELINES]
fedcr.figures.seed_systems(systems, baselines)

# %% [markdown]
# ## H. Ditto against its authors' code, FedPAC against PFLlib's
# `scripts/fedcr_crosscheck.py` runs the FedCR authors' Ditto (haozzh/FedCR, their `main_fed_ditto.py` unchanged)
# and ours on one FashionMNIST n1 federation per seed: the same clients and samples, the same initial weights, the
# same participants each round, lr 0.1 and lambda 0.001 as Table 2's runs here, with their final round. It is
# smaller than Table 2's (its settings are printed below and in `figures/fedcr_crosscheck.json`), so that each client
# trains several times, and its rows say "reduced". The rule is notebook 02's for FedDBE: a paired equivalence
# test (TOST at 5%) at every evaluation of the mean per-client accuracy of the personal models, within the larger
# of 1 point and the authors' code against itself on a second random stream (batch orders cannot be paired between
# two codes), over at least 5 seeds; beside it, the gap over the whole curve with seeds as the unit.


# %%
fedcr.figures.ditto_crosscheck(paths.project_root() / "figures" / "fedcr_crosscheck.csv")

# %% [markdown]
# FedPAC, the paper's strongest baseline on FashionMNIST n1, has no code from FedCR's authors. `scripts/fedpac_crosscheck.py`
# runs PFLlib's FedPAC (TsingZ0/PFLlib, which follows the FedPAC authors' code) and ours on one smaller FashionMNIST n1
# federation per seed (every client every round, so both sides train the same clients), by the same rule, on the
# pooled test accuracy. Its settings are printed below and kept in `figures/fedpac_crosscheck.json`.

# %%
fedcr.figures.fedpac_crosscheck(paths.project_root() / "figures" / "fedpac_crosscheck.csv")

# %% [markdown]
# ## What the numbers say
# In the quick profile each client takes part in about 2 of the 20 rounds (10%), on a tenth of its data, so the
# verdicts compare methods early in training: the paper's runs are 250-500 rounds. A method whose body learns from
# every participant (FedAvg, FedPer, FedCR) gains most there; a client that trains its own body (local training,
# FedCR-NA, FedLog) has had about 20 local steps.


# %%
ledger = fedcr.claims.record(reads)  # fedcr/claims.py; part H's rows in a ledger of their own scale
