"""An experiment's `Config` and its cache key.

The key is a hash of every field, the cache version and the method's version. Fields added later are
hashed only when set to something other than their default (`ADDED_FIELDS`), so every key made before
they existed stays valid (tests/test_reference_numbers.py pins the Table 1 keys).
"""
from __future__ import annotations

import functools
import hashlib
import json
import math
import weakref
from dataclasses import asdict, dataclass, field, fields

import torch

from . import algorithms, engine, models

DATASETS = ("mnist", "fashion_mnist", "cifar10", "cifar100", "circle", "celeba", "sent140")
PARTITIONED = ("mnist", "fashion_mnist", "cifar10", "cifar100")  # the datasets `partition` and friends apply to
IMAGES = ("mnist", "fashion_mnist", "cifar10", "cifar100", "celeba")
INPUT_SHAPES = {"mnist": (1, 28, 28), "fashion_mnist": (1, 28, 28), "cifar10": (3, 32, 32), "cifar100": (3, 32, 32),
                "circle": (2,), "celeba": (3, 84, 84), "sent140": (25,)}

# Resource caps: values in range but beyond these would exhaust memory or not finish (a batch of B samples is
# allocated for every client at once; torch seeds are 64-bit). Refused when a Config is built, naming the cap.
CAPS = {"n_clients": (100_000, "memory"), "rounds": (100_000, "run time"), "local_epochs": (10_000, "run time"),
        "final_finetune_epochs": (10_000, "run time"), "batch_size": (65_536, "memory"),
        "n_train": (10_000_000, "memory"), "seed": (2 ** 63 - 1, "torch's 64-bit seeds")}
CACHE_VERSION = 1  # bump when a change alters the numbers every config produces
# Config fields added after CACHE_VERSION 1 -> their default; hashed only when set to something else
ADDED_FIELDS: dict = {"local_optimum": False, "augment": False, "participation": 1.0, "lr_decay": 1.0,
                      "momentum": 0.0, "weight_decay": 0.0, "final_finetune_epochs": 0, "pool_split": 0.0,
                      "server_fraction": 0.0, "dominant_share": 0.6, "corruption": {},
                      "clip_grad_norm": 0.0, "lr_decay_unit": "round", "drop_last": False,
                      "fast_engine": False, "skip_finished": False, "capture_steps": False}


_KEYS: dict[int, tuple] = {}  # id of a Config -> (what its key was computed from, the key): `Config.key`


@dataclass
class Config:
    method: str = "fedlog"
    dataset: str = "mnist"
    model: str = "auto"
    partition: str = "pathological"
    n_clients: int = 50
    classes_per_client: int = 2
    dirichlet_alpha: float = 0.5
    train_fraction: float = 0.05
    n_train: int = 0  # synthetic data only: number of training points (0: the dataset's default)
    rounds: int = 100
    local_epochs: int = 5  # with local_optimum: the most epochs a client trains in one round
    local_optimum: bool = False  # Section 4.3: train to the local optimum before every aggregation
    augment: bool = False  # random crops (padding 2) and horizontal flips of training images (the paper's appendix)
    batch_size: int = 10
    optimizer: str = "adam"
    lr: float = 1e-3
    same_init: bool = True
    seed: int = 0
    options: dict = field(default_factory=dict)
    device: str = "auto"
    participation: float = 1.0  # fraction of the clients chosen each round (at least one)
    lr_decay: float = 1.0  # local learning rate of round t: lr * lr_decay^t (lr_decay_unit "round")
    momentum: float = 0.0  # SGD only
    weight_decay: float = 0.0
    final_finetune_epochs: int = 0  # after the last round: every client trains its personal parameters alone
    pool_split: float = 0.0  # > 0: pool the official train and test sets, split each client's share train:test
    server_fraction: float = 0.0  # > 0: a stratified clean share of the training pool held by the server
    dominant_share: float = 0.6  # partition="dominant": each client's share of samples from its dominant class
    corruption: dict = field(default_factory=dict)  # {"irrelevant"|"blur"|"saltpepper": fraction of the clients}
    clip_grad_norm: float = 0.0  # > 0: each client's gradient is clipped to this norm every local step (FedCR's 10)
    lr_decay_unit: str = "round"  # "participation": a client's rate is lr * lr_decay^(rounds it has trained in)
    drop_last: bool = False  # each local epoch drops a client's last partial batch (a DataLoader's drop_last=True)
    fast_engine: bool = False  # the engine's wide-layer path: column-major Linear weights, fused clip and SGD, no
    # padded steps or evaluation chunks. Same mathematics, other summation orders (the last bits move), so opt-in
    skip_finished: bool = False  # a local step computes only the clients still training (a ragged federation's
    # clients with fewer batches sit out); dropout and noise then draw for fewer clients, so the numbers move: opt-in
    capture_steps: bool = False  # a local step is recorded once and replayed (a CUDA graph on a GPU; on the CPU the
    # same step through the same static buffers). The plain engine's numbers on the CPU; with fast_engine each batch
    # stays at full width, so dropout draws for other shapes and the numbers move; on a GPU the generator's: opt-in

    def __post_init__(self):
        """Every field is checked when the Config is built, before any data is loaded."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _RULES:
                kind, check, text = _RULES[f.name]
                if not (_is(kind, value) and check(value)):
                    raise ValueError(f"Config.{f.name} must be {text}, got {value!r}")
            if f.name in CAPS and value > CAPS[f.name][0]:
                cap, why = CAPS[f.name]
                raise ValueError(f"Config.{f.name}={value:,} is beyond fedlib's cap of {cap:,} ({why}; "
                                 f"fedlib.config.CAPS)")
        if self.method not in algorithms.REGISTRY:
            raise ValueError(f"Config.method: unknown method {self.method!r}; choose one of "
                             f"{', '.join(sorted(algorithms.REGISTRY))}")
        algorithms.REGISTRY[self.method].check_options(self.options)
        self._check_combinations()

    def _check_combinations(self) -> None:
        if self.n_clients == 0 and self.dataset not in ("celeba", "sent140"):
            raise ValueError(f"Config.n_clients must be an integer >= 1 for {self.dataset} (0 means every user, "
                             f"for celeba and sent140 only)")
        if self.momentum and self.optimizer != "sgd":
            raise ValueError(f"Config.momentum is for optimizer='sgd'; got optimizer={self.optimizer!r}")
        if self.participation < 1 and not algorithms.REGISTRY[self.method].supports_partial:
            able = ", ".join(sorted(n for n, c in algorithms.REGISTRY.items() if c.supports_partial))
            raise ValueError(f"Config.participation: {self.method} does not support participation < 1 (got "
                             f"{self.participation}); use 1.0, or one of {able}")
        if self.lr_decay_unit == "participation" and not algorithms.REGISTRY[self.method].participation_decay:
            able = ", ".join(sorted(n for n, c in algorithms.REGISTRY.items() if c.participation_decay))
            raise ValueError(f"Config.lr_decay_unit='participation': {self.method} sets one learning rate for all "
                             f"its clients; use 'round', or one of {able}")
        if self.augment and self.dataset not in IMAGES:
            raise ValueError(f"Config.augment crops and flips images; {self.dataset} has none")
        moved = [n for n in ("pool_split", "server_fraction", "corruption") if getattr(self, n)]
        if moved and self.dataset not in PARTITIONED:
            raise ValueError(f"Config.{moved[0]} applies to {', '.join(PARTITIONED)}, not {self.dataset}")
        if self.model != "auto":
            _check_model_fits(self.model, self.dataset)
        algorithms.REGISTRY[self.method].check_config(self)
        self._warn_ignored()

    def _warn_ignored(self) -> None:
        """A field set away from its default that the chosen dataset or partition does not read is accepted (its
        cache key stays as it is) with a warning that says so."""
        import warnings

        partitioned = self.dataset in PARTITIONED
        ignored = {"dirichlet_alpha": not partitioned or self.partition not in ("dirichlet", "dirichlet_client"),
                   "classes_per_client": not partitioned or self.partition != "pathological",
                   "dominant_share": not partitioned or self.partition != "dominant",
                   "partition": not partitioned, "n_train": self.dataset != "circle"}
        defaults = {f.name: f.default for f in fields(self)}
        for name, unused in ignored.items():
            if unused and getattr(self, name) != defaults[name]:
                warnings.warn(f"Config.{name}={getattr(self, name)!r} has no effect with dataset={self.dataset!r}, "
                              f"partition={self.partition!r}", UserWarning, stacklevel=5)

    def key(self, device_type: str | None = None) -> str:
        """The cache key: a hash of every field (the device as the type it resolves to here, or `device_type`, e.g.
        "cuda" for the key the same config has when run on a GPU), the method's version and CACHE_VERSION.
        Remembered beside the Config (`_KEYS`, not in its fields or __dict__) with what it was computed from
        (`_key_signature`: every field's value, the dict fields as text, the device type and the method's class), so
        a Config read several times computes it once and one changed since (`cfg.rounds = 5`, `cfg.options["x"] =
        1`) computes it again. A method defined outside
        fedlib is keyed by its code, which an edit of a helper changes without a new class: never remembered."""
        cls = algorithms.REGISTRY.get(self.method)
        own = cls is None or not algorithms.code_digest(cls)
        signature = self._key_signature(device_type, cls) if own else None
        memo = _KEYS.get(id(self))
        if signature is not None and memo is not None and memo[0] == signature:
            return memo[1]
        key = self._compute_key(device_type)
        if signature is not None:
            if memo is None:  # the entry goes with the Config, before its id can be another's
                weakref.finalize(self, _KEYS.pop, id(self), None)
            _KEYS[id(self)] = (signature, key)
        return key

    def _key_signature(self, device_type: str | None, cls) -> tuple:
        values = tuple(json.dumps(v, sort_keys=True, default=repr) if isinstance(v, (dict, list)) else v
                       for v in (getattr(self, f.name) for f in fields(self)))
        return values, device_type or engine.resolve_device(self.device).type, cls, CACHE_VERSION

    def _compute_key(self, device_type: str | None) -> str:
        d = asdict(self)
        for name, default in ADDED_FIELDS.items():  # fields added later leave older keys (and caches) valid
            if d[name] == default:
                del d[name]
        d["device"] = device_type or engine.resolve_device(self.device).type
        method_version = algorithms.REGISTRY[self.method].version if self.method in algorithms.REGISTRY else 1
        if method_version != 1:
            d["method_version"] = method_version
        if self.method in algorithms.REGISTRY and (code := algorithms.code_digest(algorithms.REGISTRY[self.method])):
            d["method_code"] = code  # a method defined outside fedlib/algorithms/: its code is part of its key
        d["cache_version"] = CACHE_VERSION
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def input_shape(self) -> tuple:
        """The shape of one of the dataset's inputs."""
        return INPUT_SHAPES[self.dataset]

    def label(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return f"{self.method}{'(' + opts + ')' if opts else ''} {self.dataset} seed={self.seed}"


def restore(stored: dict) -> "Config":
    """A Config rebuilt from the fields of one built before: a stored run's config, one sent to a worker, one
    checked again before it runs. Checked as every Config is, but without the warning about a field the setting
    ignores, which went to whoever set that field when it was first built (FedCR's n2 keeps
    classes_per_client=5 for its keys; every shipped n2 run would warn each time it is read)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Config\.\w+=.* has no effect with dataset=", category=UserWarning)
        return Config(**stored)


def field_help() -> dict[str, str]:
    """Each Config field's meaning, from the comment beside it in this class's source (the one place it is said),
    and what values it takes (`_RULES`): the CLI's help text."""
    import inspect
    import re

    out = {}
    for line in inspect.getsource(Config).splitlines():
        m = re.match(r"\s+(\w+): [^=]+=[^#]*#\s*(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    for name, (_, _, text) in _RULES.items():
        out[name] = f"{out[name]}; " if name in out else ""
        out[name] += f"{text}"
    return out


def _is(kind: str, v) -> bool:
    if kind == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if kind == "real":
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "dict":
        return isinstance(v, dict)
    return isinstance(v, str)


def _device_ok(name: str) -> bool:
    try:
        return name == "auto" or torch.device(name).type in ("cpu", "cuda", "mps")
    except (RuntimeError, ValueError):
        return False


# field -> (type, check, what it must be)
_RULES = {
    "method": ("str", lambda v: True, "a method name"),
    "dataset": ("str", lambda v: v in DATASETS, "one of " + ", ".join(DATASETS)),
    "model": ("str", lambda v: v == "auto" or models.is_known(v), "auto or one of " + ", ".join(models.MODELS)
              + ", mlpK, X_flexible, cnn_mnist_vib_vV, fedcr_mlpW_vV, fedcr_cnnW_vV, fedcr_cifarW_vV, convnetW, "
              "fedrd_projK[_dS]_convnetW (python -m fedlib list)"),
    "partition": ("str", lambda v: v in ("pathological", "dirichlet", "dirichlet_client", "iid", "dominant"),
                  "pathological, dirichlet, dirichlet_client, iid or dominant"),
    "n_clients": ("int", lambda v: v >= 0, "an integer >= 1 (0: every user of celeba or sent140)"),
    "classes_per_client": ("int", lambda v: v >= 1, "an integer >= 1"),
    "dirichlet_alpha": ("real", lambda v: v > 0, "a number > 0"),
    "train_fraction": ("real", lambda v: 0 < v <= 1, "in (0, 1]"),
    "n_train": ("int", lambda v: v >= 0, "an integer >= 0"),
    "rounds": ("int", lambda v: v >= 1, "an integer >= 1"),
    "local_epochs": ("int", lambda v: v >= 1, "an integer >= 1"),
    "local_optimum": ("bool", lambda v: True, "true or false"),
    "augment": ("bool", lambda v: True, "true or false"),
    "batch_size": ("int", lambda v: v >= 1, "an integer >= 1"),
    "optimizer": ("str", lambda v: v in ("adam", "sgd"), "adam or sgd"),
    "lr": ("real", lambda v: v > 0, "a number > 0"),
    "same_init": ("bool", lambda v: True, "true or false"),
    "seed": ("int", lambda v: v >= 0, "an integer >= 0"),
    "options": ("dict", lambda v: True, "a dict of method options"),
    "device": ("str", _device_ok, "auto, cpu or cuda[:k]"),
    "participation": ("real", lambda v: 0 < v <= 1, "in (0, 1]"),
    "lr_decay": ("real", lambda v: 0 < v <= 1, "in (0, 1]"),
    "momentum": ("real", lambda v: 0 <= v < 1, "in [0, 1)"),
    "weight_decay": ("real", lambda v: v >= 0, "a number >= 0"),
    "final_finetune_epochs": ("int", lambda v: v >= 0, "an integer >= 0"),
    "pool_split": ("real", lambda v: v == 0 or 0 < v < 1, "0 (off) or in (0, 1)"),
    "server_fraction": ("real", lambda v: 0 <= v < 1, "in [0, 1)"),
    "lr_decay_unit": ("str", lambda v: v in ("round", "participation"), "round or participation"),
    "drop_last": ("bool", lambda v: True, "true or false"),
    "fast_engine": ("bool", lambda v: True, "true or false"),
    "skip_finished": ("bool", lambda v: True, "true or false"),
    "capture_steps": ("bool", lambda v: True, "true or false"),
    "clip_grad_norm": ("real", lambda v: v >= 0, "a number >= 0 (0: no clipping)"),
    "dominant_share": ("real", lambda v: 0 < v <= 1, "in (0, 1]"),
    "corruption": ("dict", lambda v: set(v) <= {"irrelevant", "blur", "saltpepper"} and all(
        isinstance(f, (int, float)) and not isinstance(f, bool) and 0 <= f <= 1 for f in v.values())
        and sum(v.values()) <= 1, "a dict from irrelevant, blur, saltpepper to fractions of the clients in [0, 1] "
        "that sum to at most 1"),
}


@functools.lru_cache(maxsize=64)  # Configs are built often (sweeps, cached results): build each probe once
def _check_model_fits(model: str, dataset: str) -> None:
    """Build the model and pass it one input of the dataset's shape (torch's random state is left as it was; the
    meta device would be cheaper per call but its first use imports torch._dynamo, seconds)."""
    shape = INPUT_SHAPES[dataset]
    for arch in set(models.client_architectures(model, 2, torch.Generator().manual_seed(0))):
        try:
            with torch.random.fork_rng(devices=[]), torch.no_grad():
                net = models.build(arch, shape, 2, vocab_size=10_002).eval()
                net(torch.zeros(1, *shape, dtype=torch.long if dataset == "sent140" else torch.float32))
        except (RuntimeError, ValueError, IndexError) as err:
            raise ValueError(f"Config.model={model!r} does not fit {dataset}'s inputs {shape}: "
                             f"{str(err).splitlines()[0]}; use model='auto'") from None
