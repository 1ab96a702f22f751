"""Notebook 07's profiles (frozen `Profile`s), the ladder of matching steps (`Ladder`), FedNova's toy (`Toy`) and the
notebook's parts (`part.Part`), declared once: the notebook reads each part, scripts/paper_runs.py computes and packs
the packed ones (RUN_SETS, derived) and claims.md counts what of them is shipped."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..part import Part
from .protocol import DPC_RGB, GRID, METHODS, MU_GRID, RGB_DATASETS, config

NOTEBOOK = "07_fedrd_representation_distillation"
REAL = "fashion_mnist"  # the paper's column our data can fill; the run sets hold its runs only


@dataclass(frozen=True)
class Profile:
    """Notebook 07 at one profile: the protocol's size (the ConvNet's width, the rounds, the data, FedRD's projection
    epochs and batch, the matching's samples per class, steps, real batch and server epochs) and the sweeps of parts
    C-F. `sweep_rounds`: the rounds of parts C-F's runs, compared with the first as many rounds of part A's (None:
    all of them)."""
    name: str  # smoke, quick or paper
    width: int
    rounds: int
    data: dict = field(hash=False)  # Config fields of the data's size (n_clients, train_fraction, local_epochs)
    proj_epochs: int = 10
    proj_batch: int = 256
    dpc: int = 10
    iterations: int = 1000
    real_batch: int = 256
    server_epochs: int = 500
    seeds: tuple[int, ...] = (0,)
    datasets: tuple[str, ...] = (REAL,)
    init_sets: tuple[str, ...] = (REAL,)
    dpc_dm: tuple[int, ...] = ()
    dpc_rd: tuple[int, ...] = ()
    equal_uplink: tuple[int, ...] = ()
    sides: tuple[int, ...] = ()
    depths: tuple[int, ...] = ()
    sweep_rounds: int | None = None
    rgb_dpc: int | None = None  # FedRD's samples per class on colour data where they differ (the paper's: DPC_RGB)

    @property
    def matching(self) -> dict:
        """FedDM's and FedRD's options: samples per class, matching steps, real batch and server epochs."""
        return dict(dpc=self.dpc, iterations=self.iterations, real_batch=self.real_batch,
                    server_epochs=self.server_epochs)

    def said(self) -> str:
        """The profile in one short line (its settings as a reader needs them, not the dataclass's repr)."""
        data = ", ".join(f"{k} {v}" for k, v in self.data.items()) or "the paper's data"
        return (f"{self.name}: ConvNet width {self.width}, {self.rounds} rounds, seeds "
                f"{', '.join(map(str, self.seeds))}, {data}; matching: {self.dpc} samples per class, "
                f"{self.iterations} steps, real batch {self.real_batch}, {self.server_epochs} server epochs; "
                f"projection: {self.proj_epochs} epochs, batch {self.proj_batch}")

    @property
    def swept(self) -> int:
        """The rounds parts C-F compare after."""
        return self.sweep_rounds or self.rounds


# The protocol's size per notebook profile. Paper: Sec. V.A (ConvNet-128, T = 1000 matching steps on real batches
# of 256, 500 server epochs, 10 projection epochs at batch 256, 20 rounds). Quick: one FashionMNIST round at the
# paper's size is GPU work (a matching step of ConvNet-32 on 5% of the data takes 4.4 s on one CPU core), so the
# quick scale keeps the protocol and shrinks everything else to fit 10 minutes on 2 cores. With 2% of the data a
# client holds about 110 images, one batch of 256: the projection's batch shrinks with the data (32), so that its
# Adam steps per round stay in the tens (the paper's: about 220). The sweeps of parts C-F (spec 4.3; quick: cut to
# fit 10 minutes).
PROFILES = {
    "smoke": Profile(name="smoke", width=8, rounds=2, data=dict(n_clients=4, train_fraction=0.01, local_epochs=1),
                     proj_epochs=1, proj_batch=16, dpc=2, iterations=5, real_batch=16, server_epochs=2, dpc_dm=(1,),
                     dpc_rd=(1,), sides=(8,), depths=(1,)),
    "quick": Profile(name="quick", width=16, rounds=5, data=dict(train_fraction=0.02), proj_epochs=2, proj_batch=32,
                     dpc=10, iterations=10, real_batch=64, server_epochs=20, sweep_rounds=3),
    "paper": Profile(name="paper", width=128, rounds=20, data={}, seeds=(0, 1, 2),
                     datasets=(REAL, "mnist", "cifar10", "cifar100"), init_sets=(REAL, "mnist"), dpc_dm=(1, 3),
                     dpc_rd=(1, 3), equal_uplink=(3, 9, 30), sides=(8, 14, 20), depths=(1, 3, 4), rgb_dpc=DPC_RGB),
}


@dataclass(frozen=True)
class Toy:
    """FedNova's Sec. 4 toy: three clients' optima, their exact gradient steps a round, the step size, the rounds."""
    centers: tuple[tuple[float, float], ...] = ((0.0, 0.0), (4.0, 0.0), (0.0, 4.0))
    taus: tuple[int, ...] = (1, 5, 20)
    lr: float = 0.05
    rounds: int = 300


TOY = Toy()


def scaled(dataset: str, label: str, profile: Profile | str, *, seed: int, options: dict | None = None,
           rounds: int | None = None, **over):
    """config at a profile's scale (PROFILES): its width, rounds and data fraction, and for FedDM and FedRD
    its matching steps, real batch, server epochs and (FedRD) projection epochs and batch; in the paper profile FedRD
    condenses DPC_RGB samples per class on the three-channel datasets. `options` and `over` go last. `profile`: the
    Profile (a build's), or its name."""
    at = PROFILES[profile] if isinstance(profile, str) else profile
    method = METHODS[label][0] if label in METHODS else None
    opts = at.matching if method in ("feddm", "fedrd") else {}
    if method == "fedrd" and at.rgb_dpc and dataset in RGB_DATASETS:
        opts["dpc"] = at.rgb_dpc
    projection = {"local_epochs": at.proj_epochs, "batch_size": at.proj_batch} if method == "fedrd" else {}
    fields = dict(at.data, **projection)
    return config(dataset, label, seed=seed, rounds=rounds or at.rounds, width=at.width,
                  options={**opts, **(options or {})}, **{**fields, **over})


@dataclass(frozen=True)
class Ladder:
    """A ladder of matching steps (T): the claims a CPU can judge at a labelled, reduced scale, since one
    FashionMNIST run at the paper's size costs more than 22 core-hours here. Everything but T is fixed, reduced from
    Sec. V.A: ConvNet-32 (not 128), 32 real images per class per step (not 256), 10% of FashionMNIST (Dirichlet 0.1
    over 10 clients, as the paper), 50 server epochs (not 500), 5 distillation rounds (FedRD "has already converged
    well" in 5) while the averaging baselines keep 20, dpc 10, FedRD's projection 5 epochs at batch 32. No rung is
    the paper's scale."""
    width: int = 32
    real_batch: int = 32
    train_fraction: float = 0.1
    server_epochs: int = 50
    dd_rounds: int = 5
    baseline_rounds: int = 20
    dpc: int = 10
    proj_epochs: int = 5
    proj_batch: int = 32
    steps: tuple[int, ...] = (10, 30, 100, 300)
    seeds: tuple[int, ...] = (0, 1, 2)

    @property
    def rounds(self) -> str:
        """What each ladder row says of its rounds."""
        return f"{self.dd_rounds} (averaging: {self.baseline_rounds})"


LADDER = Ladder()


def ladder(label: str, seed: int, steps: int | None = None, init: str | None = None):
    """One run of the FedRD ladder (LADDER) on FashionMNIST: FedDM and FedRD at `steps` matching steps (a rung),
    with `init` "real" (the paper's) or "random" (Table III); the averaging baselines at no rung (their runs serve
    every rung)."""
    L = LADDER
    method = METHODS[label][0] if label in METHODS else None
    if method in ("feddm", "fedrd"):
        if steps is None:
            raise ValueError(f"{label} on the ladder needs its rung: steps, one of {L.steps}")
        options = dict(dpc=L.dpc, iterations=steps, real_batch=L.real_batch, server_epochs=L.server_epochs,
                       **({"init": init} if init else {}))
        over = dict(local_epochs=L.proj_epochs, batch_size=L.proj_batch) if method == "fedrd" else {}
        return config(REAL, label, seed=seed, rounds=L.dd_rounds, width=L.width, options=options,
                      train_fraction=L.train_fraction, **over)
    return config(REAL, label, seed=seed, rounds=L.baseline_rounds, width=L.width, train_fraction=L.train_fraction)


def rung_label(steps: int | None) -> str:
    """What a ladder row says of its scale."""
    L = LADDER
    at = f"T = {steps}, " if steps else ""
    return (f"FedRD ladder ({at}ConvNet-{L.width}, {int(100 * L.train_fraction)}% of FashionMNIST, "
            f"{L.real_batch} real per class, {L.server_epochs} server epochs, {L.dd_rounds} DD rounds / "
            f"{L.baseline_rounds} averaging rounds; reduced from the paper's)")


def search_configs(dataset: str, profile: str = "quick", prox_at: dict | None = None) -> dict[tuple, object]:
    """The baselines' search on seed 0: (label, lr, momentum, local_epochs, mu) -> Config over GRID (FedProx at
    its default mu); with `prox_at` (FedProx's best fields), FedProx's mu grid there."""
    out = {}
    if prox_at is None:
        for label in ("FedAvg", "FedProx", "FedNova"):
            for lr in GRID["lr"]:
                for mom in GRID["momentum"]:
                    for e in GRID["local_epochs"]:
                        mu = 0.01 if label == "FedProx" else None
                        out[(label, lr, mom, e, mu)] = scaled(
                            dataset, label, profile, seed=0, lr=lr, momentum=mom, local_epochs=e,
                            options={"mu": mu} if mu else None)
    else:
        for mu in MU_GRID:
            out[("FedProx", prox_at["lr"], prox_at["momentum"], prox_at["local_epochs"], mu)] = scaled(
                dataset, "FedProx", profile, seed=0, options={"mu": mu}, **prox_at)
    return out


def notebook_run(profile: Profile | str, dataset: str, label: str, seed: int, side: int | None = None, depth: int = 2,
                 rounds: int | None = None, **options):
    """One run of notebook 07 at `profile`'s scale (PROFILES): FedRD's representation side (sqrt d') and projection
    depth, the rounds, and FedDM's or FedRD's options (dpc, init), override. `profile`: the Profile, or its name."""
    at = PROFILES[profile] if isinstance(profile, str) else profile
    model = None
    if label == "FedRD" and (side or depth != 2):
        model = f"fedrd_proj{depth}" + (f"_d{side}" if side else "") + f"_convnet{at.width}"
    return scaled(dataset, label, at, seed=seed, options=options or None, model=model, rounds=rounds)


def ladder_runs(seeds=None) -> dict:
    """Every ladder run: (label, T, init) -> one Config per seed; the averaging baselines under (label, None, None)."""
    seeds = LADDER.seeds if seeds is None else seeds
    runs = {(lab, None, None): [ladder(lab, s) for s in seeds] for lab in ("FedAvg", "FedProx", "FedNova")}
    runs.update({(lab, T, init): [ladder(lab, s, T, init) for s in seeds] for T in LADDER.steps
                 for lab in ("FedDM", "FedRD") for init in ("real", "random")})
    return runs


# ---------------------------------------------------------------------------------------------- notebook 07's parts
def datasets_here(profile: Profile) -> list[str]:
    """The profile's datasets whose files are here, and FashionMNIST (REAL: its run sets' runs are read wherever they
    are shipped), as a notebook says them (the plans themselves never ask which data are here)."""
    from ... import experiments as ex

    return [d for d in profile.datasets if d == REAL or ex.data_here(d)]


def _table1_plan(profile: Profile, seeds) -> dict:
    """Part A: (dataset, label) -> one Config per seed, every label of METHODS on each of the profile's datasets (those
    whose files are not here are left out where the part is read, `part.read`)."""
    return {(d, lab): [notebook_run(profile, d, lab, s) for s in seeds] for d in profile.datasets
            for lab in METHODS}


def _swept(profile: Profile, seeds, dataset: str, label: str, **change) -> list:
    """One Config per seed of parts C-F: `profile.swept` rounds, `change` (side, depth, dpc, init)."""
    return [notebook_run(profile, dataset, label, s, rounds=profile.swept, **change) for s in seeds]


def _init_plan(profile: Profile, seeds) -> dict:
    """Part C: (dataset, label) -> the noise-initialised runs (the real-initialised ones are part A's)."""
    return {(d, lab): _swept(profile, seeds, d, lab, init="random") for d in profile.init_sets
            if d in profile.datasets for lab in ("FedDM", "FedRD")}


def _dpc_plan(profile: Profile, seeds) -> dict:
    """Part D: (label, dpc) -> one Config per seed; part A's FashionMNIST runs are the points at the profile's dpc."""
    plan = {("FedDM", k): _swept(profile, seeds, REAL, "FedDM", dpc=k) for k in profile.dpc_dm}
    plan |= {("FedRD", k): _swept(profile, seeds, REAL, "FedRD", dpc=k) for k in profile.dpc_rd}
    plan |= {("FedRD d'=256", k): _swept(profile, seeds, REAL, "FedRD", side=16, dpc=k) for k in profile.equal_uplink}
    if plan:
        table1 = _table1_plan(profile, seeds)
        plan |= {(lab, profile.dpc): table1[(REAL, lab)] for lab in ("FedDM", "FedRD")}
    return plan


def _side_plan(profile: Profile, seeds) -> dict:
    """Part E: sqrt(d') -> FedRD's runs; 28 (no resizing) is part A's."""
    plan = {s: _swept(profile, seeds, REAL, "FedRD", side=s) for s in profile.sides}
    return plan | ({28: _table1_plan(profile, seeds)[(REAL, "FedRD")]} if plan else {})


def _depth_plan(profile: Profile, seeds) -> dict:
    """Part F: projection depth -> FedRD's runs; 2 (the paper's) is part A's."""
    plan = {L: _swept(profile, seeds, REAL, "FedRD", depth=L) for L in profile.depths}
    return plan | ({2: _table1_plan(profile, seeds)[(REAL, "FedRD")]} if plan else {})


def _ladder_plan(ladder_: Ladder, seeds) -> dict:
    return ladder_runs(seeds)


def _ladder_label(key) -> str:
    lab, T, init = key
    return lab if T is None else f"{lab} T={T} {init}"


TABLE1 = Part("fedrd_table1", NOTEBOOK, PROFILES, _table1_plan, label=lambda k: k[1], where=("Table I", "Fig. 2"),
              deviations="FashionMNIST only", in_set=lambda k: k[0] == REAL)  # Fig. 2: their first rounds
INIT = Part("fedrd_table3", NOTEBOOK, PROFILES, _init_plan, label=lambda k: f"{k[1]} random", where=("Table III",),
            deviations="FashionMNIST only; the real-initialised runs are fedrd_table1's", in_set=lambda k: k[0] == REAL)
DPC = Part("fedrd_dpc", NOTEBOOK, PROFILES, _dpc_plan, where=("Fig. 4",), packed=False)
SIDES = Part("fedrd_sides", NOTEBOOK, PROFILES, _side_plan, where=("Table IV",), packed=False)
DEPTHS = Part("fedrd_depths", NOTEBOOK, PROFILES, _depth_plan, where=("Fig. 5",), packed=False)
# Part G: read from archive/ in every profile (its runs are the ladder's whatever the profile), never computed here
LADDER_PART = Part("fedrd_ladder", NOTEBOOK, {name: LADDER for name in PROFILES}, _ladder_plan, label=_ladder_label,
                   where=("Table I (ladder)", "Table III (ladder)", "Fig. 2 (ladder)"),
                   deviations=f"FashionMNIST, ConvNet-{LADDER.width} (not 128), {LADDER.train_fraction:.0%} of the "
                              f"data, {LADDER.server_epochs} server epochs (not 500), the T its row names (not 1000)",
                   stage=lambda k: k[1] or 0,  # the averaging baselines first (once for every rung), cheap to dear
                   read_at="paper")  # its shipped runs, whatever the notebook's profile: never computed in a notebook
AT_PROFILE = (TABLE1, INIT, DPC, SIDES, DEPTHS)  # parts A-F, run at the notebook's profile (G: the archive's)
TOY_PART = Part("fedrd_toy", NOTEBOOK, {name: TOY for name in PROFILES}, None, where=("Sec. 4 (toy)",),
                packed=False)  # FedNova's toy, computed in the notebook (no run of the engine)
PARTS = (*AT_PROFILE, LADDER_PART, TOY_PART)
RUN_SETS = [p for p in PARTS if p.packed]  # what scripts/paper_runs.py computes and packs: derived, never listed


# How notebook 07's parts read their runs (figures draw them, claims judge them: both read them this way)
def by_label(table1, dataset: str) -> dict | None:
    """Part A's runs on `dataset`: label -> Results, or None when any is not there."""
    got = {lab: table1[(dataset, lab)] for lab in METHODS}
    return None if any(rs is None for rs in got.values()) else got


def swept(results: list, profile: Profile) -> list:
    """Parts C-F read their runs' first `profile.swept` rounds (the real-initialised runs are part A's): Results."""
    from ... import experiments as ex

    return [ex.first_rounds(r, profile.swept) for r in results]


def initialisations(init, table1) -> dict:
    """(dataset, label, init) -> the runs of Table III's two sides (real: part A's; random: part C's), None where
    any seed is not there."""
    return {(d, lab, side): (table1 if side == "real" else init)[(d, lab)] for d, lab in init.keys()
            for side in ("real", "random")}
