"""Notebooks 01-05's profiles and each part's runs, declared once; RUN_SETS: what scripts/paper_runs.py computes and
packs."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ... import knobs
from ..part import Derived, Part, Read, Study
from .protocol import (
    DP_B, DP_DELTA, EXTRA_METHODS, FEDDBE_KAPPA_GRID, PAPER_SETTINGS, TABLE1_METHODS, TABLE_A1_METHODS,
    paper_config, table1_config)

LABELS = {"fedlog": "FedLog", "fedlog_c": "FedLog-C", "fedavg": "FedAvg", "lg_fedavg": "LG-FedAvg",
          "fedproto": "FedProto"}  # how notebooks 01 and 05 name the methods of Figs. 1-3 (figures and claims alike)


# Each notebook's settings per profile (smoke / quick / paper). Notebook 01: Fig. 1's seeds and local-iteration counts.
@dataclass(frozen=True)
class Synthetic:
    """Fig. 1 on the circle data: the seeds, the local-iteration counts of the accuracy panels and the count the
    representation panels show."""
    seeds: tuple[int, ...]
    iters: tuple[int, ...]
    shown_iters: int


FIG1_METHODS = ("fedlog", "lg_fedavg", "fedproto")  # FedLog first: the claims read it against the stronger other
SYNTHETIC_PROFILES = {
    "smoke": Synthetic(seeds=(0, 1), iters=(1, 5, 10), shown_iters=10),
    "quick": Synthetic(seeds=tuple(range(6)), iters=tuple(range(1, 31)), shown_iters=10),
    "paper": Synthetic(seeds=tuple(range(6)), iters=tuple(range(1, 31)), shown_iters=10),
}

# Notebook 02: Table 1, Table A.1 and two ablations (augmentation, FedLog-C's beta).
TABLE1_COMPETITIVE = ["FedAvg", "LG-FedAvg 1", "FedProto", "FedLog", "FedLog-C"]
AUGMENTED = ["FedAvg", "FedBabu", "FedLog", "FedLog-C"]  # the augmentation ablation's methods
BETAS = [0.01, 0.1]  # FedLog-C's separation weight in the beta ablation (alpha is 0.01); 0 is Table 1's FedLog-C


@dataclass(frozen=True)
class Runs:
    """One part of notebook 02 on one dataset (Table A.1: one dataset and classes per client): its seeds, rounds and
    the client setting's overrides."""
    seeds: tuple[int, ...]
    rounds: int
    over: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Entries:
    """Table 1 on one dataset: its entries (labels), seeds, rounds and the client setting's overrides."""
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    rounds: int
    over: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Table1Profile:
    """Notebook 02's scale: Table 1 per dataset, Table A.1 per (dataset, classes per client), the augmentation and
    beta ablations per dataset. Its fields are the parts FEDLIB_PARTS names."""
    table1: Mapping[str, Entries]
    tableA1: Mapping[tuple[str, int], Runs]
    augment: Mapping[str, Runs]
    beta: Mapping[str, Runs]


_SMALL = dict(n_clients=10, train_fraction=0.02, local_epochs=1)
_T1, _ALL = tuple(TABLE1_METHODS), tuple(TABLE1_METHODS) + tuple(EXTRA_METHODS)
TEN = tuple(range(10))
TABLE1_PROFILES = {
    "smoke": Table1Profile(table1={"mnist": Entries(_ALL, (0, 1), 2, _SMALL)},
                           tableA1={("mnist", 3): Runs((0, 1), 2, _SMALL)},
                           augment={"mnist": Runs((0,), 2, _SMALL)}, beta={"mnist": Runs((0, 1), 2, _SMALL)}),
    # quick (25 minutes on two cores): 40 rounds, because the slow starters (FedDBE, LG-FedAvg 2, FedRep 1) rank low
    # after 10 or 20, and one seed, because a 40-round MNIST run costs about 3 CPU minutes. On the paper setting's runs
    # (2 seeds x 100 rounds) seed 0's first 40 rounds rank the twelve methods with Kendall tau 0.88 and no discordant
    # pair beyond 2 standard errors there (both seeds: 0.88; seed 0 after 30 rounds: 0.85, after 20: 0.79)
    "quick": Table1Profile(table1={"mnist": Entries(_T1, (0,), 40),
                                   "fashion_mnist": Entries(tuple(TABLE1_COMPETITIVE), (0, 1), 5)},
                           tableA1={("mnist", 3): Runs((0,), 10), ("mnist", 5): Runs((0,), 10)},
                           augment={"mnist": Runs((0,), 40)},  # a reduced version: 1 seed, 40 rounds
                           beta={"mnist": Runs((0,), 40)}),  # 1 seed; the paper profile runs 2
    "paper": Table1Profile(table1={"mnist": Entries(_ALL, TEN, 100), "fashion_mnist": Entries(_ALL, tuple(range(5)), 100),
                                   "cifar10": Entries(_ALL, TEN, 100), "cifar100": Entries(_ALL, TEN, 150)},
                           tableA1={(d, k): Runs(TEN, 100 if d != "cifar100" else 150)
                                    for d, k in [("mnist", 3), ("mnist", 5), ("cifar10", 3), ("cifar10", 5),
                                                 ("cifar100", 5)]},
                           augment={"mnist": Runs((0, 1, 2), 100)},
                           beta={"mnist": Runs((0, 1), 40)}),  # the fidelity issue's setting
}
KNOB_PARTS = "table1,tableA1,augment,beta"  # FEDLIB_PARTS' choices
_TABLE1_DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100")
# Notebook 02's knobs (fedlib.knobs checks every FEDLIB_* variable before any work, these as the paper registers them)
knobs.register("FEDLIB_DATASETS", knobs.names_from(_TABLE1_DATASETS, "notebook 02's datasets"))
knobs.register("FEDLIB_PARTS", knobs.names_from(KNOB_PARTS.split(","), "notebook 02's parts"))
knobs.register("FEDLIB_METHODS", knobs.names_from(_ALL, "Table 1's rows"))


def chosen_datasets(env=None) -> list[str]:
    """Notebook 02's FEDLIB_DATASETS: only these datasets (empty: every one present)."""
    import os

    from ...knobs import names

    return names((os.environ if env is None else env).get("FEDLIB_DATASETS", ""))


def chosen_methods(env=None) -> list[str]:
    """Notebook 02's FEDLIB_METHODS: the Table 1 rows to remake (empty: every one); an unknown label is refused."""
    import os

    env = os.environ if env is None else env
    from ...knobs import names

    chosen = names(env.get("FEDLIB_METHODS", ""))
    unknown = set(chosen) - set(_ALL)
    if unknown:
        raise ValueError(f"FEDLIB_METHODS: unknown {sorted(unknown)}; choose from {_ALL}")
    return chosen


def table1_settings(profile: str, env=None) -> Table1Profile:
    """Notebook 02's settings at `profile`, narrowed by its knobs (environment variables, see the notebook's first
    cell): FEDLIB_DATASETS ("mnist,..."; default every one), FEDLIB_SEEDS (> 0: this many seeds for the tables; default
    each dataset's own, the paper profile's MNIST the paper's 10), FEDLIB_PARTS (which parts to remake; the others keep their
    files) and FEDLIB_METHODS (only these Table 1 rows). Unknown parts or methods are refused, naming the valid ones."""
    import dataclasses
    import os

    from ...knobs import check_one, names

    env = os.environ if env is None else env
    if profile not in TABLE1_PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(TABLE1_PROFILES)}")
    for knob in ("FEDLIB_DATASETS", "FEDLIB_SEEDS", "FEDLIB_PARTS", "FEDLIB_METHODS"):
        if env.get(knob, ""):  # before anything is built: a typo is refused by name, never a silent empty run
            check_one(knob, env[knob])
    chosen_methods(env)  # an unknown Table 1 row, by name
    S = TABLE1_PROFILES[profile]
    seeds = int(env.get("FEDLIB_SEEDS", "0") or 0)  # 0: each dataset's own (the paper profile: MNIST's 10, as the
    # paper, on any machine; FashionMNIST's 5, its run set's)
    only, chosen = chosen_datasets(env), chosen_methods(env)
    fields = [f.name for f in dataclasses.fields(Table1Profile)]
    parts = names(env.get("FEDLIB_PARTS", "")) or KNOB_PARTS.split(",")
    bad = set(parts) - set(fields)
    if bad:
        raise ValueError(f"FEDLIB_PARTS: unknown {sorted(bad)}; choose from {', '.join(fields)}")

    def narrowed(part: str, s):
        if seeds and part in ("table1", "tableA1"):  # the tables' seeds; the ablations keep their own
            s = dataclasses.replace(s, seeds=tuple(range(seeds)))
        if chosen and part == "table1":
            s = dataclasses.replace(s, methods=tuple(m for m in s.methods if m in chosen))
        return s

    def kept(key) -> bool:
        return not only or (key[0] if isinstance(key, tuple) else key) in only

    return Table1Profile(**{part: {k: narrowed(part, s) for k, s in getattr(S, part).items() if kept(k)}
                            if part in parts else {} for part in fields})


# FedLog's appendix E: "Training data are normalized and randomly cropped and flipped", for every run. The sets with
# no run shipped when this was read (2026-11-27: DP, Table 1 and Fig. 3 left on FashionMNIST) run that way; the sets
# shipped before keep their unaugmented keys (Table 1 and A.1 are run both ways: table1_augmented, tableA1_augmented).
STATED = {"augment": True}
AUGMENTED_DATASETS = ("fashion_mnist",)  # Fig. 3 left's datasets run with augmentation (MNIST's was shipped without)

# Notebook 03: DP, one `DpRuns` per dataset and profile (its parts below: DP_PARTS).
NOTEBOOK_03 = "03_differential_privacy"
@dataclass(frozen=True)
class Formal:
    """The formal variant's runs: its epsilon grid, DP-SGD's noise multiplier z and clip norm, and its seeds."""
    eps: tuple[float, ...]
    z: float
    clip: float
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class DpRuns:
    """One dataset's DP runs at one profile: the epsilon grid, seeds and rounds, whether the tighter (Renyi-DP)
    accountant runs beside Thm. 7's, the client setting's overrides, and the formal variant (None: not run)."""
    eps: tuple[float, ...]
    seeds: tuple[int, ...]
    rounds: int
    tight: bool
    over: Mapping[str, Any] = field(default_factory=dict)
    formal: Formal | None = None


_DP_SMALL = dict(n_clients=10, train_fraction=0.01, local_epochs=1)
DP_PROFILES = {  # profile -> dataset -> its runs
    "smoke": {"mnist": DpRuns(eps=(1.0, 50.0), seeds=(0,), rounds=2, tight=True, over=_DP_SMALL,
                              formal=Formal(eps=(50.0,), z=2.0, clip=1.0, seeds=(0,)))},
    "quick": {"mnist": DpRuns(eps=(0.5, 2.0, 5.0, 20.0, 50.0), seeds=(0,), rounds=5, tight=True,
                              formal=Formal(eps=(20.0, 50.0), z=2.0, clip=1.0, seeds=(0,))),
              "fashion_mnist": DpRuns(eps=(0.5, 5.0, 50.0), seeds=(0,), rounds=2, tight=False, over=STATED)},
    "paper": {"mnist": DpRuns(eps=(0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0), seeds=tuple(range(5)),
                              rounds=100, tight=True, formal=Formal(eps=(10.0, 20.0, 50.0), z=5.0, clip=1.0,
                                                                    seeds=(0, 1, 2))),
              "fashion_mnist": DpRuns(eps=(0.1, 0.5, 1.0, 5.0, 10.0, 50.0), seeds=tuple(range(5)), rounds=100,
                                      tight=True, over=STATED),
              "cifar10": DpRuns(eps=(0.1, 0.5, 1.0, 5.0, 10.0, 50.0), seeds=tuple(range(5)), rounds=100, tight=True)},
}

# Notebook 04: the Gaussian representations (Sec. 3.1's assumption, checked).
@dataclass(frozen=True)
class Gaussian:
    """Notebook 04's scale: FedProf Props. 1-2's central training (samples, epochs) and test images per dataset, and
    Fig. A.1/A.2's alphas, seeds and rounds."""
    train_samples: int
    epochs: int
    test_samples: int
    alphas: tuple[float, ...]
    seeds: tuple[int, ...]
    rounds: int
    datasets: tuple[str, ...]


_ALPHAS = (0.0, 0.001, 0.003, 0.01, 0.03, 0.1)
GAUSSIAN_PROFILES = {
    "smoke": Gaussian(train_samples=1000, epochs=1, test_samples=200, alphas=(0.0, 0.01, 0.1), seeds=(0, 1),
                      rounds=3, datasets=("mnist",)),
    "quick": Gaussian(train_samples=6000, epochs=2, test_samples=500, alphas=_ALPHAS, seeds=tuple(range(5)), rounds=10,
                      datasets=("mnist", "fashion_mnist")),
    "paper": Gaussian(train_samples=60000, epochs=3, test_samples=500, alphas=_ALPHAS, seeds=tuple(range(5)),
                      rounds=10, datasets=("mnist", "fashion_mnist")),
}

# Notebook 05: convergence (Fig. 2, Fig. 3 and Thm. 7's step sizes).
CONVERGENCE_METHODS = {"FedLog": ("fedlog", {}), "FedLog-C": ("fedlog_c", {}),
                       "LG-FedAvg 1": ("lg_fedavg", {"global_layers": 1}), "FedProto": ("fedproto", {})}
_MANY_SMALL = dict(n_clients=100, classes_per_client=2, train_fraction=0.05)  # 30 training samples per client


@dataclass(frozen=True)
class Fig2:
    """Fig. 2's runs: each client trained to its local optimum (at most `cap` epochs) before every aggregation."""
    seeds: tuple[int, ...]
    rounds: int
    cap: int
    over: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Fig3:
    """Fig. 3 left's runs: flexible architectures (half the clients with the smaller body)."""
    seeds: tuple[int, ...]
    rounds: int
    over: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepSizes:
    """Thms. 3-5 measured: FedLog on MNIST with plain SGD on the bodies at each step size, one study per seed."""
    rounds: int
    steps: tuple[float, ...]
    seeds: tuple[int, ...]
    over: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Convergence:
    """Notebook 05's scale: Fig. 2, Fig. 3 left and the step-size study."""
    fig2: Fig2
    fig3: Fig3
    thm: StepSizes


_TINY = dict(n_clients=10, train_fraction=0.02)
CONVERGENCE_PROFILES = {
    "smoke": Convergence(fig2=Fig2(seeds=(0, 1), rounds=2, cap=3, over=_TINY),
                         fig3=Fig3(seeds=(0, 1), rounds=2, over=dict(_TINY, local_epochs=1)),
                         thm=StepSizes(rounds=2, steps=(0.003, 3.0), seeds=(0,),
                                       over=dict(n_clients=6, train_fraction=0.01, local_epochs=1))),
    "quick": Convergence(fig2=Fig2(seeds=(0, 1), rounds=3, cap=10, over=_MANY_SMALL),
                         fig3=Fig3(seeds=(0, 1, 2), rounds=4),
                         thm=StepSizes(rounds=4, steps=(0.003, 0.01, 0.03, 0.3, 3.0), seeds=(0,),
                                       over=dict(n_clients=10, train_fraction=0.01, local_epochs=1))),
    "paper": Convergence(fig2=Fig2(seeds=tuple(range(10)), rounds=20, cap=50, over=_MANY_SMALL),
                         fig3=Fig3(seeds=tuple(range(10)), rounds=100),
                         thm=StepSizes(rounds=20, steps=(0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 3.0), seeds=tuple(range(5)),
                                       over=dict(n_clients=20, train_fraction=0.02, local_epochs=1))),
}


# The runs of notebooks 03 and 05, built here once: the notebooks, scripts/paper_runs.py and the cost table read them.
def dp_plan(dataset: str, s: DpRuns, seeds=None) -> dict:
    """Notebook 03's runs on `dataset` at its settings `s` (DP_PROFILES[profile][dataset]), for `seeds` (default its
    own; the formal variant keeps those of its own seeds among them): (mode, accountant, epsilon) -> one Config per
    seed. FedLog without DP ("none", "-", inf), the formal variant ("formal", "rdp-sgd", epsilon) over its grid, and
    central and local DP over the grid with Thm. 7's accountant ("thm7") and, where `s.tight`, the Renyi-DP one
    ("rdp") beside it."""
    seeds = list(s.seeds if seeds is None else seeds)
    base = dict(rounds=s.rounds, **s.over)
    out = {("none", "-", float("inf")): [paper_config(dataset, "fedlog", seed=sd, **base) for sd in seeds]}
    f = s.formal
    for e in f.eps if f else []:
        opts = {"dp": "formal", "epsilon": e, "delta": DP_DELTA, "clip_b": DP_B, "sgd_noise": f.z, "sgd_clip": f.clip}
        out[("formal", "rdp-sgd", e)] = [paper_config(dataset, "fedlog", seed=sd, options=opts, **base)
                                         for sd in seeds if sd in f.seeds]
    for mode in ("central", "local"):
        for acct in ("thm7", "rdp") if s.tight else ("thm7",):
            for e in s.eps:
                opts = {"dp": mode, "epsilon": e, "delta": DP_DELTA, "clip_b": DP_B, "accountant": acct}
                out[(mode, acct, e)] = [paper_config(dataset, "fedlog", seed=sd, options=opts, **base) for sd in seeds]
    return out


def dp_configs(dataset: str, s: DpRuns) -> list:
    """Every run of `dp_plan`, key by key."""
    return [c for cfgs in dp_plan(dataset, s).values() for c in cfgs]


def fig2_configs(dataset: str, s: Fig2, seeds=None) -> dict:
    """Notebook 05's Fig. 2 runs on `dataset` (label -> one Config per seed of `seeds`, default `s.seeds`): every
    client trained to its local optimum (at most `s.cap` epochs) before every aggregation; LEAF data in their own
    setting, the others in MNIST's client setting with `s.over`."""
    from ... import leaf
    from ...config import Config

    over = dict(lr=1e-3, batch_size=10) if dataset in leaf.LEAF_DATASETS else {**PAPER_SETTINGS["mnist"], **s.over}
    over = {k: v for k, v in over.items() if k != "rounds"}
    return {lab: [Config(method=m, dataset=dataset, options=o, seed=sd, rounds=s.rounds, local_optimum=True,
                         **{**over, "local_epochs": s.cap}) for sd in (s.seeds if seeds is None else seeds)]
            for lab, (m, o) in CONVERGENCE_METHODS.items()}


def fig3_configs(dataset: str, s: Fig3, seeds=None) -> dict:
    """Notebook 05's Fig. 3 left runs on `dataset` (label -> one Config per seed of `seeds`, default `s.seeds`):
    flexible architectures (half the clients with the smaller body), FashionMNIST in MNIST's client setting."""
    from ...config import Config

    base = PAPER_SETTINGS["mnist" if dataset == "fashion_mnist" else dataset]
    model = "cnn_cifar_flexible" if dataset.startswith("cifar") else "cnn_mnist_flexible"
    stated = STATED if dataset in AUGMENTED_DATASETS else {}
    return {lab: [Config(method=m, dataset=dataset, options=o, seed=sd, model=model, same_init=False,
                         **{**base, "rounds": s.rounds, **s.over, **stated}) for sd in (s.seeds if seeds is None else seeds)]
            for lab, (m, o) in CONVERGENCE_METHODS.items()}


# The paper's Sec. 4.5 runs CIFAR-10 (not to be had here): 100 clients of 500 records. The released statistic sums a
# client's records and its noise does not depend on how many there are, so a stand-in with fewer records is noisier
# against what it releases (the counts: tests/test_run_sets.py reads them from the federations).
DP_STAND_IN = {"mnist": "MNIST in Table 1's MNIST setting for CIFAR-10 (not to be had here): 3,000 training records "
                        "over 50 clients (56-65 each) against CIFAR-10's 50,000 over 100 (500 each), so the same "
                        "noise is about 17 times larger against the summed statistic, 8 times against a client's",
               "fashion_mnist": "FashionMNIST for CIFAR-10 (not to be had here): 60,000 training records over 100 "
                                "clients (600 each), near CIFAR-10's 50,000 (500 each)"}


def _dp_label(key) -> str:
    """A DP run's label as scripts/paper_runs.py lists it: "no DP eps=-", "formal eps=10.0", "central eps=0.5 thm7"."""
    mode, acct, eps = key
    return "no DP eps=-" if mode == "none" else f"{mode} eps={eps}" + ("" if mode == "formal" else f" {acct}")


def _dp_part(name: str, dataset: str, **kw) -> Part:
    """Fig. 3 right and Thm. 7 on `dataset`: its runs at every profile that runs it, key by key (the order its set
    was computed in), seeds inner."""
    return Part(name, NOTEBOOK_03, {p: by[dataset] for p, by in DP_PROFILES.items() if dataset in by},
                lambda s, seeds: dp_plan(dataset, s, seeds), label=_dp_label, stage=lambda key: key,
                where=(f"Fig. 3 right ({dataset})", "Thm. 7"), **kw)


DP_PARTS = {"mnist": _dp_part("dp", "mnist", deviations=DP_STAND_IN["mnist"]),
            "fashion_mnist": _dp_part("dp_fashion_mnist", "fashion_mnist", deviations=DP_STAND_IN["fashion_mnist"]),
            "cifar10": _dp_part("dp_cifar10", "cifar10", packed=False)}  # the paper's data, where its files are


def _convergence_part(name: str, figure: str, datasets: tuple[str, ...], **kw) -> Part:
    """Fig. 2 ("fig2") or Fig. 3 left ("fig3") on `datasets`: (dataset, label) -> one Config per seed, dataset by
    dataset and label by label, seeds inner (the order its set was computed in)."""
    build = fig2_configs if figure == "fig2" else fig3_configs
    return Part(name, "05_convergence", {p: getattr(c, figure) for p, c in CONVERGENCE_PROFILES.items()},
                lambda s, seeds: {(d, lab): cs for d in datasets for lab, cs in build(d, s, seeds).items()},
                label=lambda key: f"{key[1]} {key[0]}", stage=lambda key: key, **kw)


_FIG2_STAND_IN = ("100 small clients of MNIST and FashionMNIST, each trained to its local optimum, for CelebA and "
                  "Sent140 (not to be had here)")
# Fig. 2 on the paper's LEAF data where their files are (FIG2_LEAF), else on the stand-ins (FIG2); Fig. 3 left one
# part per dataset (its runs and keys those of the one set before 2026-11-26): part c of FedLog's paper issue is
# MNIST's, FashionMNIST's belongs with part e; CIFAR-100, the paper's, where its files are
FIG2 = _convergence_part("fig2", "fig2", ("mnist", "fashion_mnist"), where=("Fig. 2",), deviations=_FIG2_STAND_IN)
FIG2_LEAF = {d: _convergence_part(f"fig2_{d}", "fig2", (d,), where=("Fig. 2",), packed=False)
             for d in ("celeba", "sent140")}
FIG3_LEFT = {d: _convergence_part(name, "fig3", (d,), where=("Fig. 3 left",), packed=packed,
                                  deviations="MNIST and FashionMNIST for CIFAR-100" if packed else "")
             for d, name, packed in (("cifar100", "fig3_left_cifar100", False), ("mnist", "fig3_left", True),
                                     ("fashion_mnist", "fig3_left_fashion_mnist", True))}


def convergence_parts() -> tuple[list[Part], list[Part]]:
    """The parts notebook 05 reads: Fig. 2 on the paper's LEAF data whose files are here, else on the stand-ins; Fig. 3
    left on MNIST and FashionMNIST, and on CIFAR-100 where its files are (`experiments.data_here`)."""
    from ... import experiments as ex

    leaf = [p for d, p in FIG2_LEAF.items() if ex.data_here(d)]
    return leaf or [FIG2], [p for d, p in FIG3_LEFT.items() if p.packed or ex.data_here(d)]


# Notebook 02's parts: Table 1 and Table A.1 per regime and dataset, the augmentation and beta ablations and FedDBE's
# kappa probe on MNIST, each declared once. Both regimes are run (appendix E: "Training data are normalized and
# randomly cropped and flipped"; the code it follows crops and flips CIFAR only); `analysis.regime.choose` picks the
# one that decides by a rule over the paper's own numbers, and the other stays beside it, verdict for verdict. The
# paper profile's MNIST parts (and Table 1 on FashionMNIST with crop-and-flip) are the run sets
# scripts/paper_runs.py computes, their keys and order pinned in tests/test_run_sets.py.
NOTEBOOK_02 = "02_communication_cost"
REGIMES = ("augmented", "plain")
REGIME_WORDS = {"augmented": "with crop-and-flip", "plain": "without augmentation"}  # which decides: analysis.regime
SAME_AS_AUGMENTED = "FedDBE (FedLog's augmentation)"  # with augmentation it is FedDBE itself: one entry there
STAND_IN_FOR = {"fashion_mnist": "cifar10"}  # a stand-in dataset's claims quote the column it stands in for
_OVER = {"augmented": dict(augment=True), "plain": {}}
# Table 1 at the stated protocol, in the order the background slots compute it: the verdicts' own rows first. Its
# FedDBE is "FedDBE (FedLog's augmentation)" (one entry there); those runs, and the augmentation ablation's (FedAvg,
# FedBabu, FedLog, FedLog-C, seeds 0-2), keep their keys: they are this set's too.
VERDICT_ROWS = ("FedLog-C", "FedLog", "FedDBE", "FedProto", "LG-FedAvg 2", "FedRep 1")  # computed first: the two
# subjects, FedDBE (its own fidelity claim) and the paper's three strongest rivals on MNIST (98.19, 98.18, 98.15)
# Every Table 1 entry in its order of computation with crop and flip: the verdicts' rows, then the others as
# declared (Table 1's, then the other entries'), so an entry declared once is in it (before, a hand-kept list that an
# added entry was missing from made table1_augmented.runs() raise "'FedNew' is not in list")
AUGMENTED_ORDER = [*VERDICT_ROWS, *(lab for lab in _ALL if lab not in VERDICT_ROWS and lab != SAME_AS_AUGMENTED)]


def augmented_order(label: str) -> int:
    """A Table 1 entry's place in the order its crop-and-flip runs are computed (AUGMENTED_ORDER), a label it does not
    hold after them all."""
    return AUGMENTED_ORDER.index(label) if label in AUGMENTED_ORDER else len(AUGMENTED_ORDER)


@dataclass(frozen=True)
class TableA1:
    """Table A.1 on one dataset: classes per client -> its runs."""
    classes: Mapping[int, Runs]

    @property
    def seeds(self) -> tuple[int, ...]:
        return next(iter(self.classes.values())).seeds if self.classes else ()


def _table1_build(regime: str, dataset: str):
    def build(s: Entries, seeds) -> dict:  # entry -> one Config per seed, in the profile's row order
        return {lab: [table1_config(dataset, lab, seed=sd, rounds=s.rounds, **{**s.over, **_OVER[regime]})
                      for sd in seeds]
                for lab in s.methods if not (regime == "augmented" and lab == SAME_AS_AUGMENTED)}
    return build


def _table_a1_build(regime: str, dataset: str):
    def build(s: TableA1, seeds) -> dict:  # (classes per client, entry) -> one Config per seed
        return {(k, lab): [table1_config(dataset, lab, seed=sd, rounds=r.rounds, classes_per_client=k,
                                         **{**r.over, **_OVER[regime]}) for sd in seeds]
                for k, r in s.classes.items() for lab in TABLE_A1_METHODS}
    return build


_TABLE1_SETS = {  # (regime, dataset) -> what its paper-profile run set is called and stands for; the others: no set
    ("plain", "mnist"): dict(name="table1", archive="table1_mnist_paper", where=("Table 1",),
                             deviations="MNIST only (CIFAR-10/100 not to be had here)"),
    ("augmented", "mnist"): dict(name="table1_augmented", archive="table1_augmented_mnist_paper",
                                 where=("Table 1 (augmented)",), deviations="MNIST only (CIFAR-10/100 not to be had "
                                                                            "here)",
                                 order=augmented_order),
    ("augmented", "fashion_mnist"): dict(name="table1_fashion_mnist", where=("Table 1 (fashion_mnist)",),
                                         deviations="FashionMNIST in CIFAR-10's client setting, for CIFAR-10 (not "
                                                    "to be had here)", order=augmented_order),
    ("plain", "fashion_mnist"): dict(name="table1_fashion_mnist_plain", where=("Table 1 (fashion_mnist)",),
                                     deviations="FashionMNIST in CIFAR-10's client setting, for CIFAR-10 (not to be "
                                                "had here), without augmentation: the ablation of "
                                                "table1_fashion_mnist", order=augmented_order)}
_A1_SETS = {("plain", "mnist"): dict(name="tableA1", where=("Table A.1",), deviations="MNIST only"),
            ("augmented", "mnist"): dict(name="tableA1_augmented", where=("Table A.1 (augmented)",),
                                         deviations="MNIST only")}


def _table1_part(regime: str, dataset: str) -> Part:
    kw = _TABLE1_SETS.get((regime, dataset)) or dict(name=f"table1_{dataset}_{regime}", packed=False,
                                                     where=(f"Table 1 ({dataset})",))
    return Part(notebook=NOTEBOOK_02, build=_table1_build(regime, dataset),
                profiles={p: S.table1[dataset] for p, S in TABLE1_PROFILES.items() if dataset in S.table1}, **kw)


def _table_a1_part(regime: str, dataset: str) -> Part:
    kw = _A1_SETS.get((regime, dataset)) or dict(name=f"tableA1_{dataset}_{regime}", packed=False,
                                                 where=(f"Table A.1 ({dataset})",))
    profiles = {p: TableA1({k: r for (d, k), r in S.tableA1.items() if d == dataset})
                for p, S in TABLE1_PROFILES.items() if any(d == dataset for d, _ in S.tableA1)}
    return Part(notebook=NOTEBOOK_02, build=_table_a1_build(regime, dataset), profiles=profiles,
                label=lambda key: f"{key[1]} k={key[0]}", stage=lambda key: key, **kw)  # each entry's seeds together


TABLE1_PARTS = {(reg, d): _table1_part(reg, d) for d in _TABLE1_DATASETS for reg in REGIMES}  # (regime, dataset) -> part
TABLE_A1_PARTS = {(reg, d): _table_a1_part(reg, d) for d in ("mnist", "cifar10", "cifar100") for reg in REGIMES}


def _augment_build(s: Runs, seeds) -> dict:  # (entry, augmented) -> one Config per seed
    return {(lab, aug): [table1_config("mnist", lab, seed=sd, rounds=s.rounds, augment=aug, **s.over) for sd in seeds]
            for lab in AUGMENTED for aug in (False, True)}


def _beta_build(s: Runs, seeds) -> dict:  # beta -> one Config per seed (0: Table 1's FedLog-C)
    return {b: [table1_config("mnist", "FedLog-C", seed=sd, rounds=s.rounds, options={"beta": b} if b else {},
                              **s.over) for sd in seeds] for b in [0.0] + BETAS}


def _kappa_build(s: Runs, seeds) -> dict:  # seed 0 only: a probe of FedDBE's kappa in Table 1's Adam regime
    return {k: [table1_config("mnist", next(iter(EXTRA_METHODS)), seed=0, options={"kappa": k})]
            for k in FEDDBE_KAPPA_GRID}


# The augmentation ablation's set holds its augmented runs; those without augmentation are Table 1's
AUGMENT = Part("augment", NOTEBOOK_02, {p: S.augment["mnist"] for p, S in TABLE1_PROFILES.items() if S.augment},
               _augment_build, label=lambda key: key[0], in_set=lambda key: key[1], where=("Table 1 (augmentation)",),
               archive="augment_mnist_paper")
BETA = Part("fedlog_c_beta", NOTEBOOK_02, {p: S.beta["mnist"] for p, S in TABLE1_PROFILES.items() if S.beta},
            _beta_build, where=("FedLog-C's beta",), packed=False)
KAPPA = Part("feddbe_kappa", NOTEBOOK_02, {"paper": Runs((0,), 100)}, _kappa_build, label=lambda k: f"kappa {k:g}",
             where=("Table 1 (FedDBE's kappa)",))
CROSSCHECK = Part("feddbe_crosscheck", NOTEBOOK_02, TABLE1_PROFILES, None, packed=False,
                  where=("Table 1 (FedDBE against its authors' code: scripts/feddbe_crosscheck.py)",))


@dataclass(frozen=True)
class Table1Reads:
    """Notebook 02's parts read at one profile (`table1_reads`): Table 1 and Table A.1 per regime and dataset
    (entry -> Results; (classes per client, entry) -> Results), the ablations per dataset ((entry, augmented) ->
    Results; beta -> Results), the settings after the knobs and the Table 1 rows chosen (FEDLIB_METHODS)."""
    profile: str
    settings: Table1Profile
    table1: Mapping[str, Mapping[str, Read]]
    tableA1: Mapping[str, Mapping[str, Read]]
    augment: Mapping[str, Read]
    beta: Mapping[str, Read]
    chosen: tuple[str, ...]
    paper_entries: tuple[str, ...] = tuple(TABLE1_METHODS)


@dataclass(frozen=True)
class Table1Parts:
    """Notebook 02's parts at one profile, narrowed by its knobs and to the datasets whose files are here
    (`table1_parts`)."""
    settings: Table1Profile
    table1: Mapping[str, Mapping[str, Part]]  # regime -> dataset -> part
    tableA1: Mapping[str, Mapping[str, Part]]
    augment: Mapping[str, Part]
    beta: Mapping[str, Part]
    chosen: tuple[str, ...]

    def every(self) -> list[Part]:
        return [*(p for by in self.table1.values() for p in by.values()),
                *(p for by in self.tableA1.values() for p in by.values()), *self.augment.values(), *self.beta.values()]



def table1_reads(reads) -> Table1Reads:
    """Notebook 02's reads (`papers.read_notebook` of `table1_parts(...).every()`, in one sweep) by table, regime and
    dataset, in the order they were read, with the settings each part was read at (the knobs' narrowing is in the
    parts) and the Table 1 rows chosen (FEDLIB_METHODS)."""
    names = {p.name: ("table1", *key) for key, p in TABLE1_PARTS.items()} | \
        {p.name: ("tableA1", *key) for key, p in TABLE_A1_PARTS.items()} | \
        {AUGMENT.name: ("augment", "", "mnist"), BETA.name: ("beta", "", "mnist")}  # both ablations run on MNIST
    by: dict = {"table1": {reg: {} for reg in REGIMES}, "tableA1": {reg: {} for reg in REGIMES}, "augment": {},
                "beta": {}}
    for name, read in reads.by_part.items():
        table, reg, d = names[name]
        (by[table][reg] if reg else by[table])[d] = read
    first = REGIMES[0]
    settings = Table1Profile({d: r.settings for d, r in by["table1"][first].items()},
                             {(d, k): s for d, r in by["tableA1"][first].items() for k, s in r.settings.classes.items()},
                             {d: r.settings for d, r in by["augment"].items()},
                             {d: r.settings for d, r in by["beta"].items()})
    return Table1Reads(reads.profile, settings, by["table1"], by["tableA1"], by["augment"], by["beta"],
                       tuple(chosen_methods()))


def table1_parts(profile: str, env=None) -> Table1Parts:
    """Notebook 02's parts at `profile`, narrowed by the knobs (FEDLIB_DATASETS, _SEEDS, _PARTS, _METHODS: see
    `table1_settings`) and to the datasets whose files are here."""
    from ... import experiments as ex

    S = table1_settings(profile, env)
    named = dict.fromkeys([*S.table1, *(d for d, _ in S.tableA1), *S.augment, *S.beta])  # in the profile's order
    here = [d for d in named if ex.dataset_available(d)]  # (a set's order moves with the hash seed: the printed
    # notes of missing datasets did, from one run to the next)
    table1 = {d: s for d, s in S.table1.items() if d in here}
    a1 = {d: TableA1({k: r for (dd, k), r in S.tableA1.items() if dd == d}) for d in here
          if any(dd == d for dd, _ in S.tableA1)}
    return Table1Parts(
        Table1Profile(table1, {k: r for k, r in S.tableA1.items() if k[0] in here}, S.augment, S.beta),
        {reg: {d: TABLE1_PARTS[(reg, d)].at(profile, s) for d, s in table1.items()} for reg in REGIMES},
        {reg: {d: TABLE_A1_PARTS[(reg, d)].at(profile, s) for d, s in a1.items()} for reg in REGIMES},
        {d: AUGMENT.at(profile, s) for d, s in S.augment.items() if d in here},
        {d: BETA.at(profile, s) for d, s in S.beta.items() if d in here}, tuple(chosen_methods(env)))


# The parts computed in their notebook, with no run of the engine: their settings and claims only
def _fig1_plan(s: Synthetic, seeds) -> dict:
    """Fig. 1's accuracy panels: (method, local iterations) -> one circle run per seed (one round each)."""
    from .analysis.synthetic import circle_config

    return {(m, e): [circle_config(m, e, sd) for sd in seeds] for m in FIG1_METHODS for e in s.iters}


def _fig1_accuracy(cfg, settings=None):
    """`analysis.synthetic.accuracy_after_one_round` (imported when computed: analysis reads these plans)."""
    from .analysis.synthetic import accuracy_after_one_round

    return accuracy_after_one_round(cfg)


def _fig1_load(value):
    from .analysis.synthetic import OneRound

    return OneRound(**value)


# Fig. 1's one-round runs are derived values (the accuracies of a run that is not kept), seconds of work: computed in
# every profile, and cached
NOTEBOOK_01 = "01_synthetic_separators"
FIG1 = Part("fig1", NOTEBOOK_01, SYNTHETIC_PROFILES, _fig1_plan, where=("Fig. 1",), packed=False,
            derive=Derived("fig1_one_round_v1", _fig1_accuracy, load=_fig1_load, everywhere=True))
THM7 = Part("thm7", NOTEBOOK_03, {p: by["mnist"] for p, by in DP_PROFILES.items()}, None,
            where=("Thm. 7",), packed=False)


# Notebook 04's parts are derived values of studies no Config describes (`part.Study`): a closed form, a check on
# random statistics, a central training per dataset, and one FedLog-C run on the circle data per (alpha, seed). Seconds
# to a minute of work: computed in every profile, cached with the code's fingerprint, never shipped
def _eq9_value(study, settings=None):
    """`analysis.representations.eq9_value` (imported when computed: analysis reads these plans)."""
    from .analysis.representations import eq9_value

    return eq9_value(study, settings)


def _thm2_value(study, settings=None):
    from .analysis.representations import thm2_value

    return thm2_value(study, settings)


def _thm2_load(value):
    from .analysis.representations import Thm2

    return Thm2(**value)


def _normality_value(study, settings=None):
    from .analysis.representations import normality_value

    return normality_value(study, settings)


def _normality_load(value):
    from .analysis.representations import normality_from

    return normality_from(value)


def _alpha_value(study, settings=None):
    from .analysis.synthetic import alpha_value

    return alpha_value(study, settings)


def _alpha_load(value):
    from .analysis.synthetic import alpha_of

    return alpha_of(value)


def _normality_plan(s: Gaussian, seeds) -> dict:
    """Props. 1-2: dataset -> its central training and test (one study: the training is seeded by its own seed 0)."""
    return {d: [Study("normality", (d, s.train_samples, s.epochs, s.test_samples))] for d in s.datasets}


def _compactness_plan(s: Gaussian, seeds) -> dict:
    """Fig. A.1/A.2: alpha -> one FedLog-C run on the circle data per seed, `s.rounds` rounds."""
    return {a: [Study("compactness", (a, sd, s.rounds)) for sd in seeds] for a in s.alphas}


NOTEBOOK_04 = "04_gaussian_representations"
_GAUSSIAN = dict(notebook=NOTEBOOK_04, profiles=GAUSSIAN_PROFILES, packed=False)
EQ9 = Part("eq9", build=lambda s, seeds: {"eq9": [Study("eq9")]}, where=("Eq. 9",),
           derive=Derived("eq9_v1", _eq9_value, everywhere=True), **_GAUSSIAN)
THM2 = Part("thm2", build=lambda s, seeds: {"thm2": [Study("thm2")]}, where=("Thm. 2",),
            derive=Derived("thm2_v1", _thm2_value, load=_thm2_load, everywhere=True), **_GAUSSIAN)
NORMALITY = Part("normality", build=_normality_plan, where=("Prop. 1 (FedProf)", "Fig. A.1 (QQ)"),
                 derive=Derived("fedprof_normality_v1", _normality_value, load=_normality_load, everywhere=True),
                 **_GAUSSIAN)
COMPACTNESS = Part("compactness", build=_compactness_plan, where=("Fig. A.1", "Fig. A.2"),
                   derive=Derived("figA1_alpha_run_v1", _alpha_value, load=_alpha_load, everywhere=True), **_GAUSSIAN)


def _step_size_plan(s: StepSizes, seeds) -> dict:
    """Thm. 4's study: step size zeta -> one Config per seed, FedLog on MNIST with plain SGD at zeta on the bodies."""
    from dataclasses import replace

    base = paper_config("mnist", "fedlog", rounds=s.rounds, **s.over)
    return {zeta: [replace(base, seed=sd, optimizer="sgd", lr=zeta) for sd in seeds] for zeta in s.steps}


def _step_size_trace(cfg, settings=None):
    """`analysis.convergence.trace_value` of `cfg` (imported when a trace is computed: analysis reads these plans)."""
    from .analysis.convergence import trace_value

    return trace_value(cfg)


def _trace_load(value):
    from .analysis.convergence import trace_of

    return trace_of(value)


# Thm. 4's traces are derived from a Config, not runs of the engine: cached like runs, shipped in archive/ (its folder)
STEP_SIZES = Part("thm4_step_sizes", "05_convergence", {p: c.thm for p, c in CONVERGENCE_PROFILES.items()},
                  _step_size_plan, where=("Thm. 4",), packed=False,
                  derive=Derived("convergence_trace_v2", _step_size_trace, load=_trace_load))
NOTEBOOK_05 = "05_convergence"

NOTEBOOKS = (NOTEBOOK_01, NOTEBOOK_02, NOTEBOOK_03, NOTEBOOK_04, NOTEBOOK_05)
PARTS = (FIG1, TABLE1_PARTS[("plain", "mnist")], TABLE1_PARTS[("augmented", "fashion_mnist")], TABLE_A1_PARTS[("plain", "mnist")],
         TABLE1_PARTS[("plain", "fashion_mnist")],
         TABLE1_PARTS[("augmented", "mnist")], TABLE_A1_PARTS[("augmented", "mnist")], AUGMENT,
         *(p for p in TABLE1_PARTS.values() if not p.packed), *(p for p in TABLE_A1_PARTS.values() if not p.packed), BETA,
         CROSSCHECK, DP_PARTS["mnist"], DP_PARTS["fashion_mnist"], DP_PARTS["cifar10"], THM7, EQ9, THM2, NORMALITY,
         COMPACTNESS, FIG3_LEFT["mnist"], FIG3_LEFT["fashion_mnist"], FIG3_LEFT["cifar100"], FIG2, *FIG2_LEAF.values(),
         STEP_SIZES, KAPPA)
RUN_SETS = [p for p in PARTS if p.packed]  # what scripts/paper_runs.py computes and packs
