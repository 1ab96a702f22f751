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
# # Gaussian representations: Eq. 9, Thm. 2, FedProf Props. 1-2, Fig. A.1/A.2
#
# FedLog models the representation $\phi$ of class $y$ with the kernel $\exp(\eta_y^\top\phi - \phi^\top\phi)$,
# a Gaussian per class; FedLog-C adds a loss that pulls representations to their global class mean so
# that the assumption holds better. FedProf (Wu et al.) argues that outputs of linear layers are
# near-Gaussian by the Lyapunov CLT. This notebook checks each of these numerically. All computing is in
# `fedlib.expfam`, `fedlib.papers.fedlog.analysis` (`representations`, `synthetic`) and `fedlib.stats`.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import papers, paths, plots
from fedlib.papers import fedlog
from fedlib.papers.fedlog.analysis import gaussian, representations

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/
plots.style()
reads = papers.read_notebook(profile, fedlog.plans.NOTEBOOK_04)  # each part computed here, seconds to a minute, cached
checks = gaussian.checks(reads)  # the numbers this notebook draws and its claims judge
SETTINGS = checks.settings
print(profile, SETTINGS)

# %% [markdown]
# ## 1. Eq. 9: the closed-form log-partition against numerical integration
# $A(\eta) = \ln \sum_y \int \exp(\eta_y^\top\phi - \phi^\top\phi)/\sqrt{\pi^m}\,d\phi = \ln\sum_y \exp(\|\eta_y\|^2/4)$.
# The integral is computed by the trapezoid rule on $[-12, 12]^m$.


# %%
table = fedlog.figures.eq9_table(checks.eq9)  # shown as saved

# %% [markdown]
# ## 2. Thm. 2: the summed statistic is all the server needs
# (a) Two *different* sets of representations with the same summed statistic give the same posterior and the
# same MAP head. (b) Moving one point changes the statistic, and the head with it. (c) The posterior from the
# summed client statistics equals the posterior from the pooled representations.


# %%
print("\n".join(checks.thm2.said))

# %% [markdown]
# ## 3. FedProf Props. 1-2: are representations of linear layers Gaussian?
# For the MNIST CNN of Table A.2, untrained and trained (Adam, centralized), we take (a) the pre-activation
# outputs of the dense layer fc1 (50 dimensions) and (b) the channel-fused outputs of the second convolution
# (each of its 20 channels summed over positions). Every dimension gets D'Agostino-Pearson's $K^2$ test on
# `test_samples` test images: over all images (a mixture of classes) and within each class (FedLog's
# assumption is a Gaussian per class). The table reports the share of dimensions that pass at 5%.


# %%
table = fedlog.figures.normality_table(checks.normality)

# %%
fig = fedlog.figures.qq_figure(checks.qq, SETTINGS, profile)

# %% [markdown]
# ## 4. Fig. A.1 and A.2: FedLog-C's auxiliary loss and the Henze-Zirkler test
# The synthetic setting with 120 points; FedLog-C with weight $\alpha$, `rounds` rounds of 10 full-batch
# local iterations. We test each class's representations with Henze-Zirkler, once with both clients pooled
# and once per client (about 30 points each), mean $\pm$ SE over seeds.


# %%
fig = fedlog.figures.figure_a1(checks.ablation, SETTINGS.alphas, SETTINGS.rounds, profile)
fedlog.figures.figure_a2(checks.ablation, SETTINGS.alphas, len(SETTINGS.seeds), SETTINGS.rounds, profile)

# %% [markdown]
# Fig. A.1 shows the clusters tightening as alpha grows but lying almost on one line, along the direction
# of the head. The ratio of the smaller to the larger eigenvalue of each class's covariance (seed 0) measures
# that elongation; a nearly singular covariance is what the Henze-Zirkler test rejects.


# %%
print("\n".join(representations.elongation(checks.ablation, SETTINGS.alphas)))

# %% [markdown]
# ## What the numbers say


# %%
ledger = fedlog.claims.record(reads)  # fedlib/papers/fedlog/claims.py: says what Fig. A.2 and Prop. 1 show
