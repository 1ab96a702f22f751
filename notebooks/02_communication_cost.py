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
# **Knobs** (environment variables, read by `fedlib.papers.fedlog.plans.table1_parts`): `FEDLIB_DATASETS` (e.g.
# `mnist`: only these datasets), `FEDLIB_SEEDS` (a seed count for the tables instead of the profile's), `FEDLIB_PARTS`
# (`table1`, `tableA1`, `augment`, `beta`: which parts to remake; the others keep their files) and `FEDLIB_METHODS`
# (e.g. `FedLog,FedLog-C`: only these Table 1 rows are remade).
#
# **Two regimes, and which decides.** Appendix E says "Training data are normalized and randomly cropped and
# flipped", and that most settings follow LG-FedAvg, whose code crops and flips CIFAR only and only normalises MNIST.
# Table 1 and Table A.1 are run both ways (tables and figures without a suffix: without augmentation; `_augmented`:
# with crop-and-flip). Which regime decides a dataset's claims is not assumed: the section "Which regime decides"
# reads the paper's own numbers (which regime reproduces more of its entries, and which reaches 97% at the round its
# bits imply) and applies a stated rule (`fedlog.analysis.regime.choose`). The other regime stays beside it, verdict
# for verdict; a claim that fails in both says so. FashionMNIST stands in for CIFAR-10, whose pipeline in that code
# does crop and flip, and the paper gives no FashionMNIST numbers to weigh: it is decided with crop-and-flip.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
from fedlib import papers, paths, plots
from fedlib.papers import fedlog
from fedlib.papers.fedlog.analysis import table1

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

parts = fedlog.table1_parts(profile)  # its parts, narrowed by the knobs FEDLIB_DATASETS, _SEEDS, _PARTS and _METHODS
plots.style()
print(profile, {d: (len(s.methods), s.seeds, s.rounds) for d, s in parts.settings.table1.items()})

# %% [markdown]
# ## Runs (cached: re-running this notebook recomputes nothing that finished)
# Every part of the notebook (`fedlog.TABLE1_PARTS`, `TABLE_A1_PARTS` per regime and dataset, `AUGMENT`, `BETA`) is
# read in one sweep, so that on a multi-core machine the worker processes (one per core, the default backend) stay
# busy to the end.
# A run that is the first rounds of a longer run shipped in `archive/` (the paper-setting runs, 100 rounds) is read
# from there, not computed: a run's first rounds do not depend on how many follow, so this is exact, bit for bit
# (this notebook reads only per-round numbers). `FEDLIB_SHIPPED_PREFIXES=0` computes them instead.


# %%
reads = papers.read_notebook(profile, fedlog.plans.NOTEBOOK_02, parts.every(), shipped_prefixes=True)  # one sweep
numbers = table1.numbers(reads)  # the numbers its figures draw and its claims judge (`analysis/table1.py`)
print("\n".join(numbers.notes))  # what is missing, and what was read from longer shipped runs

# %% [markdown]
# ## Table 1 in both regimes, beside the paper
# Each entry's best-round accuracy with crop-and-flip and without augmentation, over the seeds that are there (how
# many: the `seeds` columns), and the paper's number.


# %%
regimes = fedlog.figures.table1_regimes(numbers.p)  # each table shown as it is saved

# %% [markdown]
# ## Which regime decides
# Two lines of the paper's own numbers. *Placement*: each entry's accuracy in each regime against the paper's, by the
# reproduction rule (equivalence within 0.5 points). *Speed*: for each entry the paper shows at or above 97%, its
# bits to 97% divided by one round of our messages (both ways, as the text counts them; one way beside it) give the
# round at which it got there; beside it, our mean round to 97% in each regime (a seed that never reaches 97% counts
# its best round; `reached` says how many did). **The rule:** the regime the text names (crop-and-flip) decides unless
# both lines point to the other one; a line that ties points nowhere. It is tested on made-up numbers both ways
# (`tests/test_fedlog_regime.py`). The sentence below says which regime it picks on the runs here, and why.


# %%
chosen = fedlog.figures.table1_regime_evidence(numbers.runs, numbers.p)  # the evidence: table1_<dataset>_regime

# %% [markdown]
# ## Table 1, each regime whose entries are all there
# With n seeds the smallest one-tailed Wilcoxon p-value is $2^{-n}$: markers need at least 5 seeds (p < 0.05)
# or 7 (p < 0.01), so the quick profile shows none; the paper profile runs 10.


# %%
pretty = fedlog.figures.table1_tables(numbers)

# %% [markdown]
# ## Bits of one round, from the ledger (the last round: every method's steady state)


# %%
bits = fedlog.figures.bits_per_round(numbers.runs, numbers.p)

# %% [markdown]
# ## Accuracy vs communicated bits and vs rounds


# %%
fedlog.figures.table1_curves(numbers.runs, numbers.absent, numbers.p)

# %% [markdown]
# ## Table A.1: more classes per client
# The paper gives no thresholds for Table A.1; its rule (Section 4.2) is "the largest integer of accuracy which all
# competitive algorithms have reached in all seeds", computed here from our runs (`stats.common_threshold`) and
# printed in the table. Table 1's 97% is reached by no method with 3 or 5 classes per client. Markers against
# FedLog-C: ours (`accuracy_marker`, `bits_marker`: the exact one-tailed Wilcoxon signed-rank test, ⇓/⇑ at p < 0.01,
# ↓/↑ at p < 0.05) beside the paper's (`paper_accuracy_marker`, `paper_bits_marker`). Its caption names both levels
# but the text renders both arrows alike, so only the paper's direction can be read; the claims below test each of
# its markers at p < 0.05.


# %%
tables_a1 = fedlog.figures.table_a1_tables(numbers)

# %% [markdown]
# ## Augmentation ablation (Appendix E: training images "randomly cropped and flipped")
# FedAvg, FedBabu, FedLog and FedLog-C with and without augmentation (`Config.augment`: a random crop after padding by
# 2 pixels, and a left-right flip), 3 seeds x 100 rounds in the paper profile, 1 seed x 40 rounds in the quick one:
# which of the two lies nearer the paper's number. Neither regime matches every entry; the claims are decided in the
# one the rule above picks.


# %%
ablation = fedlog.figures.augmentation_table(numbers.p)

# %% [markdown]
# ## FedLog-C's second weight (beta): does a separation term help?
# The conference version gives FedLog-C a second weight, beta, that "controls the distance between different
# clusters"; its formula is lost. Our FedLog-C is the long version's Eq. 13 (alpha only). `beta` > 0 adds our labelled
# guess, a triplet-style hinge (see `fedlib/algorithms/fedlog.py`). MNIST paper setting, 40 rounds, 2 seeds in the
# paper profile and 1 in the quick one; beta = 0 is Table 1's FedLog-C (in the quick profile the same run).


# %%
betas = fedlog.figures.beta_table(numbers.p)

# %% [markdown]
# ## FedDBE against its authors' code
# `scripts/feddbe_crosscheck.py` runs the authors' FedDBE (TsingZ0/DBE, their `main.py` unchanged) and ours on this
# notebook's MNIST federation (the same clients, samples and initial weights per seed) with `cnn_mnist_nodrop`, SGD
# at 0.005, kappa 50, rho 1, 5 local epochs, batch 10, and writes both curves of the pooled test accuracy to
# `figures/feddbe_crosscheck.csv`, drawn here without the authors' code; `--model cnn_mnist` does the same with
# Table A.2's CNN and its dropout. Agreement rule (the script's): a paired equivalence test, TOST at 5%: at every
# evaluation |mean paired difference| + t(0.95, n-1) SE <= 1 point, over at least 5 seeds (the same seed gives both
# sides the same clients and initial weights). Seed pairing does not pair the two codes' batch orders or dropout
# masks, so the authors' code also runs a second time per seed on another random stream, and the bound at each
# evaluation is the larger of 1 point and that noise floor's |mean| + t SE (`figures/feddbe_crosscheck.json` holds it,
# with the authors' commit and how their generators were seeded). Where that floor sets the bound, a code that
# behaves exactly like the authors' passes an evaluation about half the time (ours and their second stream are then
# two draws of the same thing), so a steep early round can fail by chance; the line "against the mean of the
# authors' two streams" is a less noisy view of the same gap, and the lines "over the whole curve" test it with seeds
# as the independent unit (one run's evaluations are not), beside the same test of their code against itself. Where
# their code ran more than twice per seed (`--streams`), the last line puts their own code in our place under the
# same rule, once for every choice of candidate, reference and floor partner among their streams: how often a code
# that is theirs passes (drawn as a bar chart, ours marked).


# %%
fedlog.figures.crosscheck(paths.project_root() / "figures" / "feddbe_crosscheck.csv")

# %% [markdown]
# ## What the numbers say
# Our ranking of the entries against the paper's (Kendall's tau, reported with no verdict), written to
# figures/table1_<dataset>_ranking.csv (quick) and table1_<dataset>_ranking_paper.csv; then the claims, each a
# function of the runs, in the regime the rule picks, each naming the other regime's verdict.

# %%
fedlog.figures.rankings(numbers)  # each saved and shown
ledger = fedlog.claims.record(reads)  # fedlib/papers/fedlog/claims.py
