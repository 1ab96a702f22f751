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
# # Convergence: Fig. 2, Fig. 3 (left) and Thms. 3-5
#
# FedLog paper, Sections 3.5, 4.3 and 4.4.
# 1. **Fig. 2**: every method trains each client to its local optimum before each aggregation
#    (`Config.local_optimum`: a client stops after the first epoch whose loss is not 1% below its best,
#    `local_epochs` is the cap). CelebA and Sent140 (LEAF) run when their files are present; otherwise the
#    same experiment runs on MNIST and FashionMNIST with many small clients (100 clients, 2 classes, 30
#    training samples each).
# 2. **Fig. 3 (left)**: flexible architectures. A random half of the clients get the smaller body, every
#    client its own initialisation; the global head is shared. CIFAR-100 when present; MNIST and
#    FashionMNIST (50 clients, 2 classes, 5% of the data) in any case. On MNIST-sized inputs the smaller body
#    halves conv2 (`models.cnn_mnist`: there is no second-last fully connected layer to remove).
# 3. Accuracy vs communicated bits for the same runs.
# 4. **Thms. 3-5** measured: plain SGD on the bodies at several step sizes; every client's local loss before
#    and after each round, the body gradient norm of Thm. 5, and how often the step size was inside
#    Thm. 4's bound (estimated from the Hessian; `fedlib.papers.fedlog.analysis.convergence`).
#
# Methods: FedLog, FedLog-C, LG-FedAvg 1 (one global layer) and FedProto, as the paper compares them.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import outputs, papers, paths, plots
from fedlib.papers import fedlog
from fedlib.papers.fedlog.analysis import convergence

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

METHODS = fedlog.CONVERGENCE_METHODS
SETTINGS = fedlog.CONVERGENCE_PROFILES[profile]
plots.style()
print(profile, SETTINGS)

# %% [markdown]
# ## Fig. 2: each client trained to its local optimum before every aggregation

# %%
fig2_parts, fig3_parts = fedlog.convergence_parts()  # Fig. 2 on CelebA/Sent140 where here, else MNIST, FashionMNIST
# every run of both figures in one sweep (the workers stay busy to the end); the paper profile computes none
reads = papers.read_notebook(profile, fedlog.plans.NOTEBOOK_05, [*fig2_parts, *fig3_parts, fedlog.STEP_SIZES])
fig2, _ = convergence.by_dataset(*(reads[p] for p in fig2_parts))  # dataset -> label -> Results (one per seed)
fig3, _ = convergence.by_dataset(*(reads[p] for p in fig3_parts))
_, lines, verdict = convergence.speeds(fig2)
print("\n".join(lines))
fedlog.figures.convergence_figure(fig2, METHODS, "fig2_local_optimum", "Fig. 2: local optimum before each aggregation "
                                  "(mean ± std over seeds)", "std", profile, verdict, fedlog.PAPER_DATA["fig2"])

# %% [markdown]
# ## Fig. 3 (left): flexible architectures

# %%
fedlog.figures.convergence_figure(fig3, METHODS, "fig3_left_flexible", "Fig. 3 (left): half the clients with a smaller "
                                  "body (mean ± SE over seeds)", "se", profile, paper_data=fedlog.PAPER_DATA["fig3_left"])
print("\n".join(line for d, by_label in fig3.items() for line in convergence.faster(f"Fig. 3 left, {d}", by_label)[2]))
print("\n".join(convergence.fig3_order(fig3, fedlog.FIG3_LEFT_CIFAR100)))
summary = outputs.save_table(convergence.summary_rows(fig2, "fig2_local_optimum")
                             + convergence.summary_rows(fig3, "fig3_left_flexible"), "convergence_summary")

# %% [markdown]
# ## Thms. 3-5: local losses and gradients under plain SGD
# FedLog on MNIST with SGD on the bodies at several step sizes $\zeta$. Per client and round: the local loss
# before and after the round, $\|\nabla_\theta \mathcal{L}_c\|$ at the start of the round (Thm. 5), and the
# smoothness $L_1$ estimated from the Hessian, so we can say how often $\zeta < 2/L_1$ (the noise-free form of
# Thm. 4's bound; the full bound is smaller) held. One study per seed of the profile: the figure shows the first,
# the claim reads them all.

# %%
thm = reads[fedlog.STEP_SIZES]  # Thm. 4's traces, read with the runs: step size -> one trace per seed
studies = convergence.step_size_studies(thm)  # seed -> step size -> trace
fedlog.figures.step_size_part(studies, thm.settings, profile)

# %% [markdown]
# ## What the numbers say

# %%
ledger = fedlog.claims.record(reads)  # fedlib/papers/fedlog/claims.py
