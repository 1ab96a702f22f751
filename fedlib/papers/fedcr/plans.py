"""Notebook 06's profiles and each part's runs; RUN_SETS: what scripts/paper_runs.py computes and packs."""
from __future__ import annotations

from dataclasses import dataclass, field

from .protocol import BETA, DITTO_LAM, ROUNDS, config


TABLE2_LABELS = ("FedCR", "FedAvg", "Ditto", "FedRep")  # FedRep: the strongest other baseline of the paper's
# FashionMNIST rows (89.78 n1, 88.90 n2); Ditto at the paper's lambda for the column (DITTO_LAM)


TINY = dict(n_clients=10, participation=0.5, local_epochs=1, train_fraction=0.01)


@dataclass(frozen=True)
class Fig2:
    """Part E's live runs: their rounds, then the local epochs of the client shown and the test images drawn."""
    rounds: int
    epochs: int
    points: int
    over: dict = field(default_factory=dict, hash=False)  # Config fields of the data's size


@dataclass(frozen=True)
class Table9:
    """Part F: the classes per client and the rounds of the runs without model aggregation."""
    ks: tuple[int, ...]
    rounds: int


@dataclass(frozen=True)
class SeedSystems:
    """Part G: FedCR and FedCR-NA in FedLog's MNIST Table 1 setting, their seeds, rounds and setting's changes."""
    seeds: tuple[int, ...]
    rounds: int
    over: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Profile:
    """Notebook 06 at one profile: the model (width, Gaussian dimension V), FedCR's samples in training and
    evaluation, the seeds, the rounds (one number, or Table 4's per dataset: `rounds_of`), the data's size, Table 2's
    columns (and, at the paper profile, its methods), Ditto's lambda grid (none: the paper's per column), the sweeps
    of Table 3 (V) and Fig. 3(d) (beta, and their datasets), and parts E-G."""
    width: int
    dim: int
    samples: tuple[int, int]
    seeds: tuple[int, ...]
    rounds: int | dict = field(hash=False)
    over: dict = field(hash=False)
    columns: tuple[tuple[str, str], ...]
    ditto_grid: tuple[float, ...]
    dims: tuple[int, ...]
    betas: tuple[float, ...]
    beta_sets: tuple[str, ...]
    fig2: Fig2
    table9: Table9
    table1: SeedSystems
    labels: tuple[str, ...] | None = None  # Table 2's methods (None: every implemented one)

    def rounds_of(self, dataset: str) -> int:
        return self.rounds[dataset] if isinstance(self.rounds, dict) else self.rounds


PROFILES = {  # notebook 06, per profile (its parts; see the notebook)
    "smoke": Profile(width=64, dim=8, samples=(2, 2), seeds=(0,), rounds=2, over=TINY,
                     columns=(("fashion_mnist", "n1"),), ditto_grid=(0.1,), dims=(2, 8), betas=(0.0, 5e-4),
                     beta_sets=("fashion_mnist",), fig2=Fig2(rounds=2, epochs=1, points=100, over=TINY),
                     table9=Table9(ks=(3,), rounds=2),
                     table1=SeedSystems(seeds=(0,), rounds=2, over=dict(n_clients=10, train_fraction=0.02,
                                                                        local_epochs=1))),
    "quick": Profile(width=256, dim=64, samples=(4, 8), seeds=(0,), rounds=20,
                     over=dict(train_fraction=0.1),  # 10% of the pool: 49 train / 21 test images per client
                     columns=(("fashion_mnist", "n1"), ("fashion_mnist", "n2"), ("mnist", "n1"), ("mnist", "n2")),
                     ditto_grid=(0.001, 0.01, 0.1, 1.0), dims=(2, 4, 16, 64), betas=(0.0, 5e-4, 5e-3),
                     beta_sets=("fashion_mnist",),  # quick: FashionMNIST only (the paper profile adds MNIST)
                     fig2=Fig2(rounds=20, epochs=10, points=200, over=dict(train_fraction=0.2)),
                     table9=Table9(ks=(5, 7), rounds=20), table1=SeedSystems(seeds=(0,), rounds=5)),
    "paper": Profile(  # Ditto: the paper's lambda per column (DITTO_LAM), no grid; rounds per dataset (ROUNDS)
        width=1024, dim=512, samples=(18, 18), seeds=(0, 1, 2), rounds=ROUNDS, over={},
        labels=TABLE2_LABELS,  # Table 2's methods: its run sets' (the other profiles run every implemented one)
        columns=tuple((d, p) for d in ("fashion_mnist", "mnist", "cifar10", "cifar100") for p in ("n1", "n2")),
        ditto_grid=(), dims=(2, 4, 8, 16, 32, 64, 128, 256, 512), betas=(0.0, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2),
        beta_sets=("fashion_mnist", "mnist"), fig2=Fig2(rounds=20, epochs=10, points=200),
        table9=Table9(ks=(3, 5, 7), rounds=250), table1=SeedSystems(seeds=tuple(range(5)), rounds=100)),
}


def rounds_of(profile: str, dataset: str) -> int:
    """The rounds of `profile`'s runs on `dataset` (the paper profile: Table 4's, per dataset)."""
    return PROFILES[profile].rounds_of(dataset)


def rounds_label(profile: str, datasets=None, unit: bool = False) -> str:
    """The rounds of `datasets` (default all): "20", or "250 (fashion_mnist), 500 (mnist)" where they differ; with
    `unit`, as a caption says them: "20 rounds", "250 rounds (fashion_mnist)"."""
    r, word = PROFILES[profile].rounds, " rounds" if unit else ""
    if not isinstance(r, dict):
        return f"{r}{word}"
    return ", ".join(f"{r[d]}{word} ({d})" for d in (datasets or r))


def run(profile: str, dataset: str, label: str, part: str, seed: int, dim: int | None = None,
        beta: float | None = None, lam: float | None = None, rounds: int | None = None, **over):
    """One run of notebook 06 (FedCR's protocol) at `profile`'s model size (PROFILES); `dim`, `beta` (FedCR)
    and `lam` (Ditto; default the paper's for the column, DITTO_LAM) override."""
    at = PROFILES[profile]
    options = {}
    if label.startswith("FedCR"):
        options = dict(train_samples=at.samples[0], eval_samples=at.samples[1])
        if beta is not None or (dataset, part) in BETA:
            options["beta"] = BETA[(dataset, part)] if beta is None else beta
    if label == "Ditto":
        options["lam"] = DITTO_LAM[(dataset, part)] if lam is None else lam
    return config(dataset, label, part, seed=seed, rounds=rounds or rounds_of(profile, dataset), width=at.width,
                  dim=dim or at.dim, options=options, **{**at.over, **over})


def table1_run(profile: str, method: str, seed: int):
    """Notebook 06's part G: FedCR or FedCR-NA in FedLog's MNIST Table 1 setting, Table A.2's CNN with a Gaussian
    layer."""
    from ..fedlog import paper_config

    at = PROFILES[profile]
    return paper_config("mnist", method, model="cnn_mnist_vib_v50", seed=seed, rounds=at.table1.rounds,
                        options=dict(train_samples=at.samples[0], eval_samples=at.samples[1]), **at.table1.over)


def _table2_runs(part, seeds):
    return [(lab, run("paper", "fashion_mnist", lab, part, s)) for s in seeds for lab in TABLE2_LABELS]


# Ditto's second reading (notebook 06, part A): the authors' main_fed.py takes `--method ditto` but, by a review's
# reading of their code, never computes Ditto's proximal term on that path, so it trains one shared model by plain
# cross-entropy with weight decay mu (their Ditto's lambda, 0.001 on FashionMNIST) and fine-tunes the head in the
# last round: FedAvg-FT with weight decay. Run at FedAvg's screened rate (0.1, also Ditto's), on n1.
DITTO_AS_MAIN_FED = "FedAvg-FT (weight decay 0.001: main_fed.py's Ditto)"


def _ditto_main_fed_runs(seeds):
    return [(DITTO_AS_MAIN_FED, run("paper", "fashion_mnist", "FedAvg", "n1", s,
                                    weight_decay=DITTO_LAM[("fashion_mnist", "n1")])) for s in seeds]


def _table9_runs(seeds):
    t9 = PROFILES["paper"].table9
    return [(f"{lab} k={k}", run("paper", "fashion_mnist", lab, "n1", s, classes=k, rounds=t9.rounds))
            for k in t9.ks for s in seeds for lab in ("FedCR-NA", "Local")]


SWEEP_SETS = ("fashion_mnist", "mnist")  # Table 3's and Fig. 3(d)'s datasets here: the paper profile's n1 columns
# whose data are here (MNIST standing in for EMNIST-L), as notebook 06's plan() finds them


def _sweep_runs(name, seeds):  # Table 3 (name "dim") or Fig. 3(d) ("beta"): FedCR on n1 at each value
    at = PROFILES["paper"]
    values = at.dims if name == "dim" else at.betas
    return [(f"FedCR {name}={v:g} {d}", run("paper", d, "FedCR", "n1", s, **{name: v}))
            for s in seeds for d in SWEEP_SETS for v in values]


def _seed_systems_runs(seeds):  # part G: FedCR and FedCR-NA in FedLog's MNIST Table 1 setting
    return [(lab, table1_run("paper", method, s)) for s in seeds for lab, method in (("FedCR", "fedcr"),
                                                                                      ("FedCR-NA", "fedcr_na"))]


def _run_sets():
    from functools import partial

    from ..runset import RunSet

    nb = "06_fedcr_common_representation"
    sweeps = "MNIST for EMNIST-L; FedCR at width 1024"
    return [RunSet(f"fedcr_table2_{part}", nb, partial(_table2_runs, part), where=(f"Table 2 ({part})",),
                   deviations="FashionMNIST only; FedCR, FedAvg(-FT), Ditto and FedRep") for part in ("n1", "n2")] + \
        [DITTO_MAIN_FED,
         RunSet("fedcr_table9", nb, _table9_runs, where=("Table 9",), deviations="FashionMNIST for CIFAR-10"),
         RunSet("fedcr_table3", nb, partial(_sweep_runs, "dim"), where=("Table 3",), deviations=sweeps),
         RunSet("fedcr_beta", nb, partial(_sweep_runs, "beta"), where=("Fig. 3(d)",), deviations=sweeps),
         RunSet("fedcr_seed_systems", nb, _seed_systems_runs, seeds=PROFILES["paper"].table1.seeds,
                where=("Table 1 (seed systems)",))]


def _ditto_main_fed_set():
    from ..runset import RunSet

    return RunSet("fedcr_ditto_main_fed", "06_fedcr_common_representation", _ditto_main_fed_runs,
                  where=("Table 2 (n1, Ditto's second reading)",),
                  deviations="FashionMNIST only; Ditto read as the authors' main_fed.py runs it (FedAvg-FT with weight "
                             "decay)")


DITTO_MAIN_FED = _ditto_main_fed_set()  # Table 2's Ditto as the authors' main_fed.py runs it: read by its name here
RUN_SETS = _run_sets()
