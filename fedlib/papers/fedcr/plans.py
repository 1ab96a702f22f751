"""Notebook 06's profiles and each part's runs; RUN_SETS: what scripts/paper_runs.py computes and packs."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial

from ..part import Derived, Part
from .protocol import BASELINES, BETA, DITTO_LAM, NONAGGREGATE, ROUNDS, config

NOTEBOOK = "06_fedcr_common_representation"


TABLE2_LABELS = ("FedCR", "FedAvg", "Ditto", "FedRep")  # FedRep: the strongest other baseline of the paper's
# FashionMNIST rows (89.78 n1, 88.90 n2); Ditto at the paper's lambda for the column (DITTO_LAM)
# Table 2's other baselines, declared on FashionMNIST n1 at the paper profile (after its first four, so those keys and
# their order stay): FedPAC, the paper's strongest there (93.45), and FedPer, LG-FedAvg and FedBABU. None was screened
# (a screen is 6 runs of 50 rounds a method); each takes 0.1, the rate all three screened baselines chose on this
# column (protocol.TUNED_LR), where the README's 0.01 was the worst of the screened rates but one for each of them.
N1_LABELS = ("FedPAC", "FedPer", "LG-FedAvg", "FedBabu (frozen head)")
N1_LR = 0.1


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
    """Part G: FedCR and FedCR-NA in FedLog's MNIST Table 1 setting, FedCR's samples in training and evaluation (its
    profile's), their seeds, rounds and setting's changes."""
    samples: tuple[int, int]
    seeds: tuple[int, ...]
    rounds: int
    over: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Profile:
    """Notebook 06 at one profile: the model (width, Gaussian dimension V), FedCR's samples in training and
    evaluation, the seeds, the rounds (one number, or Table 4's per dataset: `rounds_of`), the data's size, Table 2's
    columns (and, at the paper profile, its methods), Ditto's lambda grid (none: the paper's per column), the sweeps
    of Table 3 (V) and Fig. 3(d) (beta, and their datasets), and parts E-G."""
    name: str  # smoke, quick or paper
    paper: bool  # the paper's scale: its parts plan the columns the run sets hold, data here or not, and Ditto's
    # second reading; other profiles plan what their data allow
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

    def __post_init__(self):
        if self.table1.samples != self.samples:  # part G's settings are read alone (its part's profiles)
            raise ValueError(f"{self.name}: part G's FedCR samples {self.table1.samples} are not the profile's "
                             f"{self.samples}")

    def rounds_of(self, dataset: str) -> int:
        return self.rounds[dataset] if isinstance(self.rounds, dict) else self.rounds


PROFILES = {  # notebook 06, per profile (its parts; see the notebook)
    "smoke": Profile(name="smoke", paper=False, width=64, dim=8, samples=(2, 2), seeds=(0,), rounds=2, over=TINY,
                     columns=(("fashion_mnist", "n1"),), ditto_grid=(0.1,), dims=(2, 8), betas=(0.0, 5e-4),
                     beta_sets=("fashion_mnist",), fig2=Fig2(rounds=2, epochs=1, points=100, over=TINY),
                     table9=Table9(ks=(3,), rounds=2),
                     table1=SeedSystems((2, 2), seeds=(0,), rounds=2,
                                        over=dict(n_clients=10, train_fraction=0.02, local_epochs=1))),
    "quick": Profile(name="quick", paper=False, width=256, dim=64, samples=(4, 8), seeds=(0,), rounds=20,
                     over=dict(train_fraction=0.1),  # 10% of the pool: 49 train / 21 test images per client
                     columns=(("fashion_mnist", "n1"), ("fashion_mnist", "n2"), ("mnist", "n1"), ("mnist", "n2")),
                     ditto_grid=(0.001, 0.01, 0.1, 1.0), dims=(2, 4, 16, 64), betas=(0.0, 5e-4, 5e-3),
                     beta_sets=("fashion_mnist",),  # quick: FashionMNIST only (the paper profile adds MNIST)
                     fig2=Fig2(rounds=20, epochs=10, points=200, over=dict(train_fraction=0.2)),
                     table9=Table9(ks=(5, 7), rounds=20), table1=SeedSystems((4, 8), seeds=(0,), rounds=5)),
    "paper": Profile(  # Ditto: the paper's lambda per column (DITTO_LAM), no grid; rounds per dataset (ROUNDS)
        name="paper", paper=True, width=1024, dim=512, samples=(18, 18), seeds=(0, 1, 2), rounds=ROUNDS, over={},
        labels=TABLE2_LABELS,  # Table 2's methods: its run sets' (the other profiles run every implemented one)
        columns=tuple((d, p) for d in ("fashion_mnist", "mnist", "cifar10", "cifar100") for p in ("n1", "n2")),
        ditto_grid=(), dims=(2, 4, 8, 16, 32, 64, 128, 256, 512), betas=(0.0, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2),
        beta_sets=("fashion_mnist", "mnist"), fig2=Fig2(rounds=20, epochs=10, points=200),
        table9=Table9(ks=(3, 5, 7), rounds=250), table1=SeedSystems((18, 18), seeds=tuple(range(5)), rounds=100)),
}


def rounds_of(profile: str, dataset: str) -> int:
    """The rounds of `profile`'s runs on `dataset` (the paper profile: Table 4's, per dataset)."""
    return PROFILES[profile].rounds_of(dataset)


def rounds_label(profile: Profile, datasets=None, unit: bool = False) -> str:
    """The rounds of `datasets` (default all) at `profile` (the Profile, never its name): "20", or "250
    (fashion_mnist), 500 (mnist)" where they differ; with `unit`, as a caption says them: "20 rounds", "250 rounds
    (fashion_mnist)"."""
    r, word = profile.rounds, " rounds" if unit else ""
    if not isinstance(r, dict):
        return f"{r}{word}"
    return ", ".join(f"{r[d]}{word} ({d})" for d in (datasets or r))


def run(profile: Profile | str, dataset: str, label: str, part: str, seed: int, dim: int | None = None,
        beta: float | None = None, lam: float | None = None, rounds: int | None = None, **over):
    """One run of notebook 06 (FedCR's protocol) at `profile`'s model size (PROFILES); `dim`, `beta` (FedCR)
    and `lam` (Ditto; default the paper's for the column, DITTO_LAM) override. `profile`: the Profile (a build's),
    or its name."""
    at = PROFILES[profile] if isinstance(profile, str) else profile
    options = {}
    if label.startswith("FedCR"):
        options = dict(train_samples=at.samples[0], eval_samples=at.samples[1])
        if beta is not None or (dataset, part) in BETA:
            options["beta"] = BETA[(dataset, part)] if beta is None else beta
    if label == "Ditto":
        options["lam"] = DITTO_LAM[(dataset, part)] if lam is None else lam
    return config(dataset, label, part, seed=seed, rounds=rounds or at.rounds_of(dataset), width=at.width,
                  dim=dim or at.dim, options=options, **{**at.over, **over})


def table1_run(at: SeedSystems | str, method: str, seed: int):
    """Notebook 06's part G: FedCR or FedCR-NA in FedLog's MNIST Table 1 setting, Table A.2's CNN with a Gaussian
    layer, at part G's settings `at` (or those of the profile it names)."""
    from ..fedlog import paper_config

    ss = PROFILES[at].table1 if isinstance(at, str) else at
    return paper_config("mnist", method, model="cnn_mnist_vib_v50", seed=seed, rounds=ss.rounds,
                        options=dict(train_samples=ss.samples[0], eval_samples=ss.samples[1]), **ss.over)


# Ditto's second reading (notebook 06, part A): the authors' main_fed.py takes `--method ditto` but, by a review's
# reading of their code, never computes Ditto's proximal term on that path, so it trains one shared model by plain
# cross-entropy with weight decay mu (their Ditto's lambda, 0.001 on FashionMNIST) and fine-tunes the head in the
# last round: FedAvg-FT with weight decay. Run at FedAvg's screened rate (0.1, also Ditto's), on n1.
DITTO_AS_MAIN_FED = "FedAvg-FT (weight decay 0.001: main_fed.py's Ditto)"
SWEEP_SETS = ("fashion_mnist", "mnist")  # Table 3's and Fig. 3(d)'s datasets at the paper profile (MNIST standing
# in for EMNIST-L)
REAL = "fashion_mnist"  # the run sets of Table 2 and Table 9 hold its runs only
SEED_BASELINE_LABELS = ("FedAvg", "FedPer", "FedProto", "FedLog-C")  # part G's rows of FedLog's own Table 1 runs


# ---------------------------------------------------------------------------------------------- notebook 06's parts
# A build plans what its profile declares, whatever this machine holds; which data are here is decided where a part is
# read (`part.read` leaves out the keys whose files are not here: `Read.absent`) and, below, where a notebook says so.
def here(dataset: str) -> bool:
    """Whether `dataset`'s files are here (`experiments.data_here`: once a process, quietly)."""
    from ... import experiments as ex

    return ex.data_here(dataset)


def columns_here(profile: Profile) -> list[tuple[str, str]]:
    """Table 2's columns whose data are here."""
    return [(d, q) for d, q in profile.columns if here(d)]


def columns_missing(profile: Profile) -> list[tuple[str, str]]:
    """Table 2's columns whose data are not here."""
    return [(d, q) for d, q in profile.columns if not here(d)]


def fig2_cases(run, f2: Fig2) -> list[tuple]:
    """Part E's four runs: ((partition, beta), Config) for n1 and n2, beta 0 and 5e-4, V = 2, seed 0, at a
    profile's `run` (`partial(run, profile)`) and Fig. 2 settings `f2` (its Profile's `fig2`)."""
    return [((q, beta), run("mnist", "FedCR", q, 0, dim=2, beta=beta, rounds=f2.rounds, **f2.over))
            for q in ("n1", "n2") for beta in (0.0, 5e-4)]


def labels(profile: Profile, column: tuple[str, str] | None = None) -> list[str]:
    """Table 2's methods at `profile` in `column` (dataset, partition), in the table's order (the paper profile: its
    run sets', TABLE2_LABELS, and in FashionMNIST n1 also N1_LABELS)."""
    every = BASELINES + ["FedCR"]
    declared = (profile.labels + (N1_LABELS if column == (REAL, "n1") else ())) if profile.labels else every
    return [lab for lab in every if lab in declared]


def _ditto_grid_plan(profile: Profile, seeds) -> dict:
    """Ditto's lambda grid on seed 0 of the first column (the quick profile chooses by it; the paper's has none)."""
    if not profile.columns or not profile.ditto_grid:
        return {}
    d0, p0 = profile.columns[0]
    return {lam: [run(profile, d0, "Ditto", p0, seeds[0], lam=lam)] for lam in profile.ditto_grid}


def _table2_plan(partition: str, lam, profile: Profile, seeds) -> dict:
    """Table 2's columns of `partition`: (dataset, label) -> one Config per seed, Ditto at `lam` (None: the paper's
    per column); the run sets' label order first (TABLE2_LABELS), as they were pinned."""
    order, plan = list(profile.labels or labels(profile)), {}
    for d, q in [c for c in profile.columns if c[1] == partition]:
        extra = [lab for lab in N1_LABELS if lab in labels(profile, (d, q)) and lab not in order]  # after the pinned
        for lab in order + extra:
            plan[(d, lab)] = [run(profile, d, lab, q, s, lam=lam, **({"lr": N1_LR} if lab in extra else {}))
                              for s in seeds]
    return plan


def table2_at(lam) -> tuple[Part, Part]:
    """Table 2's two parts with Ditto at `lam` (the quick profile's choice from its grid; None: the paper's)."""
    return tuple(replace(p, build=partial(_table2_plan, q, lam)) for p, q in ((TABLE2_N1, "n1"), (TABLE2_N2, "n2")))


def _ditto_main_fed_plan(profile: Profile, seeds) -> dict:
    """Ditto's second reading, partition -> runs (n1, then n2: n1's runs kept their keys when n2's were added), at
    the paper profile only (each run is as costly as Table 2's FedAvg)."""
    if not profile.paper:
        return {}
    return {q: [run("paper", REAL, "FedAvg", q, s, weight_decay=DITTO_LAM[(REAL, q)]) for s in seeds]
            for q in ("n1", "n2")}


def sweep_sets(profile: Profile, name: str) -> list[str]:
    """Table 3's (name "dim") or Fig. 3(d)'s ("beta") datasets: the paper profile's SWEEP_SETS; elsewhere Table 3 on
    the first n1 column and Fig. 3(d) on the profile's beta_sets among them (a dataset whose files are not here is
    left out where the part is read, `part.read`)."""
    n1 = [d for d, q in profile.columns if q == "n1"]
    if profile.paper:
        return [d for d in SWEEP_SETS if d in (n1 if name == "dim" else profile.beta_sets)]
    return n1[:1] if name == "dim" else [d for d in profile.beta_sets if d in n1]


def _sweep_plan(name: str, profile: Profile, seeds) -> dict:
    """Table 3 or Fig. 3(d): (dataset, value) -> FedCR's runs on n1 at each V or beta."""
    values = profile.dims if name == "dim" else profile.betas
    return {(d, v): [run(profile, d, "FedCR", "n1", s, **{name: v}) for s in seeds]
            for d in sweep_sets(profile, name) for v in values}


def _table9_plan(profile: Profile, seeds) -> dict:
    """Table 9's stand-in: (k, label) -> runs without model aggregation on FashionMNIST, FedCR-NA and local training
    first (the run set's)."""
    order = ["FedCR-NA", "Local"] + [lab for lab in NONAGGREGATE if lab not in ("FedCR-NA", "Local")]
    t9 = profile.table9
    return {(k, lab): [run(profile, REAL, lab, "n1", s, classes=k, rounds=t9.rounds) for s in seeds]
            for k in t9.ks for lab in order}


def _seed_systems_plan(ss: SeedSystems, seeds) -> dict:
    """Part G: FedCR and FedCR-NA in FedLog's MNIST Table 1 setting."""
    return {lab: [table1_run(ss, method, s) for s in seeds] for lab, method in (("FedCR", "fedcr"),
                                                                                        ("FedCR-NA", "fedcr_na"))}


def _seed_baselines_plan(ss: SeedSystems, seeds) -> dict:
    """Part G's other rows: FedLog's own Table 1 runs (its shipped paper-setting runs, read for their first rounds;
    the smoke profile's own small setting)."""
    from ..fedlog import table1_config

    over = dict(rounds=ss.rounds, **ss.over) if ss.over else {}
    return {lab: [table1_config("mnist", lab, seed=s, **over) for s in seeds] for lab in SEED_BASELINE_LABELS}


_SWEEPS = "MNIST for EMNIST-L; FedCR at width 1024"
_T2 = "FashionMNIST only; FedCR, FedAvg(-FT), Ditto and FedRep"
_IN_REAL = lambda key: key[0] == REAL  # noqa: E731
DITTO_GRID = Part("fedcr_ditto_grid", NOTEBOOK, PROFILES, _ditto_grid_plan, where=("Table 2 (Ditto's lambda)",),
                  packed=False)
TABLE2_N1 = Part("fedcr_table2_n1", NOTEBOOK, PROFILES, partial(_table2_plan, "n1", None), label=lambda k: k[1],
                 where=("Table 2 (n1)",), deviations=_T2, in_set=_IN_REAL)
TABLE2_N2 = Part("fedcr_table2_n2", NOTEBOOK, PROFILES, partial(_table2_plan, "n2", None), label=lambda k: k[1],
                 where=("Table 2 (n2)",), deviations=_T2, in_set=_IN_REAL)
DITTO_MAIN_FED = Part("fedcr_ditto_main_fed", NOTEBOOK, PROFILES, _ditto_main_fed_plan,
                      label=lambda q: f"{DITTO_AS_MAIN_FED} {q}",
                      where=("Table 2 (n1 and n2, Ditto's second reading)",),
                      deviations="FashionMNIST only; Ditto read as the authors' main_fed.py runs it (FedAvg-FT with "
                                 "weight decay)")
TABLE9 = Part("fedcr_table9", NOTEBOOK, PROFILES, _table9_plan, label=lambda k: f"{k[1]} k={k[0]}",
              where=("Table 9",), deviations="FashionMNIST for CIFAR-100 (k = 3, 5, 7 classes per client for its 10, "
                                             "15, 20)", in_set=lambda k: k[1] in ("FedCR-NA", "Local"),
              stage=lambda k: k[0])
DIMS = Part("fedcr_table3", NOTEBOOK, PROFILES, partial(_sweep_plan, "dim"),
            label=lambda k: f"FedCR dim={k[1]:g} {k[0]}", where=("Table 3",), deviations=_SWEEPS)
BETAS = Part("fedcr_beta", NOTEBOOK, PROFILES, partial(_sweep_plan, "beta"),
             label=lambda k: f"FedCR beta={k[1]:g} {k[0]}", where=("Fig. 3(d)",), deviations=_SWEEPS)
_SEED_PROFILES = {name: p.table1 for name, p in PROFILES.items()}
SEED_SYSTEMS = Part("fedcr_seed_systems", NOTEBOOK, _SEED_PROFILES, _seed_systems_plan,
                    where=("Table 1 (seed systems)",))
SEED_BASELINES = Part("fedcr_seed_baselines", NOTEBOOK, _SEED_PROFILES, _seed_baselines_plan,
                      where=("Table 1 (seed systems): FedLog's rows",), packed=False)
def _fig2_plan(profile: Profile, seeds) -> dict:
    """Part E's four views (`fig2_cases`), (partition, beta) -> its one Config."""
    return {key: [cfg] for key, cfg in fig2_cases(partial(run, profile), profile.fig2)}


def _fig2_view(cfg, settings):
    """`analysis.view_value` (imported when a view is computed: analysis reads these plans)."""
    from .analysis import view_value

    return view_value(cfg, settings)


def _fig2_file(cfg, settings):
    from .analysis import view_file

    return view_file(cfg, settings)


def _fig2_load(value):
    from .analysis import load_view

    return load_view(value)


# Fig. 2's views are derived from a Config, not runs: each trained, then one client trains on and its test images'
# Gaussian means are kept (cached like runs; scripts/fedcr_fig2_views.py makes and ships them for the paper profile)
FIG2 = Part("fedcr_fig2", NOTEBOOK, PROFILES, _fig2_plan, where=("Fig. 2",), packed=False,
            derive=Derived("fedcr_fig2_view_v1", _fig2_view, file=_fig2_file, load=_fig2_load))
# Computed by its own script, with no run set: Ditto's cross-check against its authors' code
# (scripts/fedcr_crosscheck.py); its claims name it
DITTO_CROSSCHECK = Part("fedcr_ditto_crosscheck", NOTEBOOK, PROFILES, None, where=("Ditto against its authors' code",),
                        packed=False)
FEDPAC_CROSSCHECK = Part("fedcr_fedpac_crosscheck", NOTEBOOK, PROFILES, None,
                         where=("FedPAC against PFLlib's code (after its authors')",), packed=False)
UPFRONT = (DITTO_GRID, DIMS, BETAS, TABLE9, SEED_SYSTEMS, DITTO_MAIN_FED, FIG2)  # read before Ditto's lambda is
# chosen (FIG2's views after the runs: computed where the profile may compute, in the workers)
# SEED_BASELINES (FedLog's own runs) are read in part G's cell, so the tables before it name only this notebook's runs
PARTS = (TABLE2_N1, TABLE2_N2, DITTO_MAIN_FED, TABLE9, DIMS, BETAS, SEED_SYSTEMS, DITTO_GRID, SEED_BASELINES, FIG2,
         DITTO_CROSSCHECK, FEDPAC_CROSSCHECK)  # the
# run sets in the order they were declared (the claims page lists them so)
RUN_SETS = [p for p in PARTS if p.packed]  # what scripts/paper_runs.py computes and packs: derived, never listed
