"""The one protocol every method follows, round by round (`fedlib.rounds.run_round` drives it):

    down  = configure(round)             the server picks this round's participants and what they receive
    reply = client_update(round, down)   the participants train locally and answer: Reply(up message, losses)
    aggregate(round, reply.up)           the server combines the answers (and may return a downlink it sends as
                                         the round ends, e.g. FedPAC's personal heads; the ledger counts it)

Messages pass through the ledger, so every bit is counted. After `aggregate`, `population` holds what every
client, participant or not, predicts with (its personalized model, or the new global one); the runner
evaluates all of them. The engine decides how clients run together: `Context.train_clients` trains the
participants of every architecture group as one batched computation, and `Context.for_each_client` applies any
per-client computation the same way.
"""
from __future__ import annotations

from pathlib import Path

from dataclasses import dataclass, field
from typing import Callable

import torch

from .. import engine
from ..data import ClientData, Federation
from ..engine import Group, Population
from ..messages import Message

SELECT_SALT = 7_777_777  # the random stream of client selection, apart from the batch orders


# Rules for method options: (predicate, what the value must be). Types come from each option's default.
def at_least(lo):
    return (lambda v: v >= lo), f">= {lo}"


def above(lo):
    return (lambda v: v > lo), f"> {lo}"


def between(lo, hi, low_open=True):
    return (lambda v: (lo < v if low_open else lo <= v) and v <= hi), f"in {'(' if low_open else '['}{lo}, {hi}]"


def any_number(meaning: str):
    """An option any finite real may take (its type check already refuses NaN and infinity); `meaning` says why."""
    return (lambda v: True), f"a finite number ({meaning})"


def one_of(*choices):
    return (lambda v: v in choices), "one of " + ", ".join(map(repr, choices))


def none_or(rule):
    check, text = rule
    return (lambda v: v is None or check(v)), f"None or {text}"


OPTION_CAPS = {"batch": 65_536, "int": 1_000_000}  # an integer option's cap: batches (memory), the rest (run time)


def _satisfies(rule, value) -> bool:
    """A rule's verdict on a value; a value the rule cannot even compare (a string where a number belongs) fails."""
    try:
        return bool(rule(value))
    except (TypeError, ValueError):
        return False


def _type_error(value, default) -> str | None:
    """Why `value` cannot stand for an option whose default is `default` (None if it can)."""
    is_real = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "must be true or false"
    if isinstance(default, int):
        return None if isinstance(value, int) and not isinstance(value, bool) else "must be an integer"
    if isinstance(default, float):
        return None if is_real(value) and value == value and abs(value) != float("inf") else "must be a finite number"
    if isinstance(default, str):
        return None if isinstance(value, str) else "must be a string"
    return None


@dataclass
class Reply:
    """What `client_update` returns: the uplink (counted by the ledger) and what the runner records."""
    up: Message
    loss: torch.Tensor | None  # [K] each participant's mean training loss, in the order of up.clients
    report: dict = field(default_factory=dict)  # anything else the method reports this round (JSON-serialisable)


@dataclass
class Context:
    """What a method may use: the data, the clients' models and the local-training settings."""
    fed: Federation
    population: Population
    optimizer: str
    lr: float
    epochs: int
    batch_size: int
    seed: int
    rounds: int = 1
    until_converged: bool = False  # Section 4.3: local training runs to the local optimum (epochs is the cap)
    augment: bool = False  # random crops and flips of the training images
    participation: float = 1.0  # fraction of the clients that take part in a round
    lr_decay: float = 1.0  # the local learning rate of round t is lr * lr_decay^t (see lr_decay_unit)
    lr_decay_unit: str = "round"  # "participation": a client's rate is lr * lr_decay^(rounds it has trained in)
    optimizer_kw: dict = field(default_factory=dict)  # momentum, weight_decay
    clip_norm: float = 0.0  # > 0: every local step's gradient is clipped to this norm per client
    drop_last: bool = False  # every local epoch drops each client's last partial batch
    skip_finished: bool = False  # a local step computes only the clients still training (`engine.train`)
    capture_steps: bool = False  # a local step recorded once and replayed (`engine.train`'s capture)

    def __post_init__(self):
        self.train_data = [self.fed.train.select(g.clients) for g in self.population.groups]
        self.times_trained = torch.zeros(self.population.n_clients, dtype=torch.long)  # per client, protocol rounds
        # in which it trained (`participated`, called by `rounds.run_round`): the exponent of per-participation decay

    @property
    def groups(self) -> list[tuple[Group, ClientData]]:
        return list(zip(self.population.groups, self.train_data))

    @property
    def clients(self) -> torch.Tensor:
        return torch.arange(self.population.n_clients)

    def server_model(self, params: dict[str, torch.Tensor], model=None) -> Group:
        """A model the server holds, with (a copy of) `params`, as a group of one row; its architecture is `model`
        or the clients' (the first group's). Read it back with `.row(0)`."""
        first = self.population.groups[0]
        return engine.server_group(first.model if model is None else model, params, first.fast_engine)

    def generator(self, rnd: int, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1_000_003 + rnd * 7919 + salt)

    def lr_at(self, rnd: int, clients: torch.Tensor | None = None) -> float | torch.Tensor:
        """The local learning rate in round `rnd`: lr * lr_decay^rnd (`lr_decay_unit="round"`), or, per
        participation, each of `clients`' own lr * lr_decay^(times it has trained before) as a tensor [len(clients)]."""
        if self.lr_decay == 1.0:
            return self.lr
        if self.lr_decay_unit == "round":
            return self.lr * self.lr_decay ** rnd
        if clients is None:
            raise ValueError("per-participation learning-rate decay gives every client its own rate: lr_at needs "
                             "the clients")
        exponent = self.times_trained[torch.as_tensor(clients).cpu()].double()
        return (self.lr * self.lr_decay ** exponent).float()

    def participated(self, clients: torch.Tensor) -> None:
        """Count one more participation for each of `clients` (once per client, however often it was drawn)."""
        self.times_trained[torch.unique(torch.as_tensor(clients).cpu())] += 1

    def select(self, rnd: int, probs: torch.Tensor | None = None, replace: bool = False) -> torch.Tensor:
        """This round's participants, sorted: K = max(1, round(participation * N)) clients drawn with probabilities
        `probs` (default equal), with or without replacement. Uniform selection is the weighted draw with equal
        probabilities, so a method whose scores are all equal selects exactly the clients uniform selection does.
        With full participation and no `probs`, every client."""
        n = self.population.n_clients
        k = max(1, round(self.participation * n))
        if probs is None:
            if k == n:
                return self.clients
            probs = torch.full((n,), 1.0 / n)
        chosen = torch.multinomial(probs.double().cpu(), k, replacement=replace,
                                   generator=self.generator(rnd, SELECT_SALT))
        return chosen.sort().values

    def for_each_client(self, clients: torch.Tensor, fn: Callable[[Group, ClientData], object],
                        write_back: bool = False):
        """Apply fn(group, data) to the given clients, one call per architecture group with only those clients'
        rows (a copy when the group has others; with `write_back` their parameters are copied back afterwards).
        fn returns a tensor [rows, ...] or a tuple of them; the results come back in the order of `clients`. A client
        listed twice (selection with replacement) computes once and its result repeats."""
        clients = torch.as_tensor(clients, dtype=torch.long)
        unique, inverse = torch.unique(clients, return_inverse=True)
        if len(unique) < len(clients):
            res = self.for_each_client(unique, fn, write_back)
            if not isinstance(res, tuple):
                return res[inverse.to(res.device)]
            parts = [r[inverse.to(r.device)] for r in res]
            return type(res)(*parts) if hasattr(res, "_fields") else tuple(parts)
        position = torch.full((self.population.n_clients,), -1, dtype=torch.long)
        position[clients] = torch.arange(len(clients))
        out = None
        for group, data in self.groups:
            rows = torch.nonzero(position[group.clients] >= 0).flatten()
            if len(rows) == 0:
                continue
            whole = len(rows) == group.n
            part = group if whole else group.subset(rows)
            res = fn(part, data if whole else data.select(rows))
            if write_back and not whole:
                group.assign(rows, part)
            parts = res if isinstance(res, tuple) else (res,)
            if out is None:
                out = [p.new_zeros((len(clients), *p.shape[1:])) for p in parts]
            for o, p in zip(out, parts):
                o[position[group.clients[rows]].to(o.device)] = p
        if out is None:
            raise ValueError("for_each_client needs at least one client")
        if not isinstance(res, tuple):
            return out[0]
        return type(res)(*out) if hasattr(res, "_fields") else tuple(out)  # a NamedTuple keeps its type

    def train(self, group: Group, data: ClientData, rnd: int, trainable: list[str], loss_fn=engine.default_loss,
              epochs: int | None = None, lr: float | None = None, stream: int = 0,
              own_optimizer: dict[str, str] | None = None, on_step=None) -> engine.TrainStats:
        """Local training of one group (all of its rows). `stream` > 0 draws another batch order in the same round
        (FedRep trains its head, then its body). `own_optimizer`: parameter name -> optimizer kind ("sgd",
        "adam") for parameters stepped by an optimizer of their own, at the same learning rate. `on_step`: see
        `engine.train`."""
        lr = self.lr_at(rnd, group.clients) if lr is None else lr
        if torch.is_tensor(lr):
            lr = lr.to(group.params[trainable[0]].device) if trainable else lr
        return engine.train(group, data, trainable=trainable, optimizer=self.optimizer,
                            lr=lr, epochs=self.epochs if epochs is None else epochs,
                            batch_size=self.batch_size, generator=self.generator(rnd + stream, int(group.clients[0])),
                            loss_fn=loss_fn, optimizer_kw=self.optimizer_kw, until_converged=self.until_converged,
                            augment=self.augment, clip_norm=self.clip_norm, on_step=on_step, drop_last=self.drop_last,
                            skip_finished=self.skip_finished, capture=self.capture_steps,
                            own_optimizer={k: (kind, lr) for k, kind in (own_optimizer or {}).items() if k in trainable})

    def train_clients(self, rnd: int, clients: torch.Tensor, trainable: list[str] | Callable[[Group], list[str]],
                      loss_fn=engine.default_loss, epochs: int | None = None, lr: float | None = None,
                      stream: int = 0, own_optimizer: dict[str, str] | None = None,
                      on_step=None) -> engine.TrainStats:
        """Train the given clients, every architecture group as one batched computation; the others stay
        untouched. `trainable`: parameter names, or a function of the group that gives them. Returns each
        client's mean loss and number of steps, in the order of `clients`."""
        def fit(group, data):
            names = trainable(group) if callable(trainable) else trainable
            return self.train(group, data, rnd, names, loss_fn, epochs, lr, stream, own_optimizer, on_step)

        return self.for_each_client(clients, fit, write_back=True)


class _Registry(dict):
    """Method name -> class. A name fedlib's own methods hold is not given to a class defined elsewhere: every shipped
    run under that name would then be another method's (before, `REGISTRY["fedavg"] = Mine` was taken, and every
    command warned about archive keys)."""

    def __setitem__(self, name, cls):
        old = self.get(name)
        if old is not None and old is not cls and old.__module__.startswith("fedlib.") \
                and not str(getattr(cls, "__module__", "")).startswith("fedlib."):
            raise ValueError(f"{name!r} is fedlib's own method ({old.__module__}); give yours another name")
        super().__setitem__(name, cls)


REGISTRY: dict[str, type["Algorithm"]] = _Registry()  # method name -> class (fedlib.algorithms re-exports it)


def load_methods(spec: str, base: Path | None = None) -> list[str]:
    """Import the methods of a file (`my_method.py`, relative to `base` or the current folder) or a module
    (`package.methods`) and return their names: each subclass of Algorithm it defines with its own `name` is
    registered (as a module in fedlib/algorithms/ registers its own), and so is whatever the file puts in REGISTRY
    itself. ValueError, before any run, naming the file, where it cannot be read, defines no method, or takes a name
    of fedlib's."""
    import importlib
    import importlib.util
    import sys

    before = dict(REGISTRY)
    path = Path(spec) if Path(spec).is_absolute() or base is None else Path(base) / spec
    if spec.endswith(".py"):
        if not path.is_file():
            raise ValueError(f"--methods {spec}: no such file ({path}); give a .py file that defines a method, or a "
                             f"module name")
        name = f"fedlib_own_{path.stem}_{abs(hash(str(path.resolve()))) % 10 ** 8}"
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module  # cloudpickle sends its classes by value to the workers (`sweep.methods_by_value`)
        try:
            module_spec.loader.exec_module(module)
        except Exception as err:
            sys.modules.pop(name, None)
            REGISTRY.clear()
            REGISTRY.update(before)
            raise ValueError(f"--methods {spec}: importing it failed ({type(err).__name__}: {err})") from err
    else:
        try:
            module = importlib.import_module(spec)
        except ImportError as err:
            raise ValueError(f"--methods {spec}: neither a .py file nor a module that imports ({err})") from None
    for cls in list(vars(module).values()):
        if isinstance(cls, type) and issubclass(cls, Algorithm) and "name" in cls.__dict__ \
                and cls.__module__ == module.__name__ and REGISTRY.get(cls.name) is not cls:
            REGISTRY[cls.name] = cls
    found = [n for n, c in REGISTRY.items() if before.get(n) is not c]
    if not found:
        raise ValueError(f"--methods {spec}: it defines no method (a subclass of fedlib.algorithms.Algorithm with a "
                         f"`name` of its own; docs/adding_a_method.md)")
    return found



def _code_of(c) -> tuple:
    """A code object's bytecode, names and constants (nested code objects alike): what it computes, not where."""
    import types

    return (c.co_code, c.co_names, c.co_varnames, c.co_freevars,
            tuple(_code_of(k) if isinstance(k, types.CodeType) else repr(k) for k in c.co_consts))


def _names_of(c) -> list[str]:
    """The global names a code object (and the code objects nested in it) reads."""
    import types

    return [*c.co_names, *(n for k in c.co_consts if isinstance(k, types.CodeType) for n in _names_of(k))]


def code_digest(cls: type) -> str | None:
    """A digest of what a method class computes, for a class defined outside fedlib/algorithms/ (a notebook cell, a
    script, another package), whose code the code fingerprint does not cover: its cache key includes it, so editing
    the class computes its runs again. None for fedlib's own methods (their keys stay as they are, and `version`
    marks a change; tests/test_method_sources.py pins each method file's source). From each function's bytecode,
    constants and names, its own and those of its bases outside fedlib, and of every module-level function, class
    and constant outside fedlib those functions reach (a helper the class calls, a constant it reads: editing one is
    editing the method), not file names or line numbers: a notebook cell run again, or moved, gives the same digest.
    A module a function reaches counts by its name, a fedlib function or class by its qualified name."""
    import hashlib
    import types

    own = [k for k in cls.__mro__ if not k.__module__.startswith("fedlib.") and k is not object]
    if not own:
        return None
    seen: dict[int, str] = {}  # what was reached already (a helper called twice, or recursively): once
    code, names = _code_of, _names_of

    def reached(f: types.FunctionType) -> tuple:
        """The module-level values `f`'s code names, each as `value` reads it (builtins and locals excluded)."""
        g = f.__globals__
        return tuple(sorted((n, repr(outside(g[n]))) for n in dict.fromkeys(names(f.__code__)) if n in g))

    def outside(v) -> object:
        if isinstance(v, types.ModuleType):
            return "module", v.__name__
        if isinstance(v, (types.FunctionType, type)) and str(getattr(v, "__module__", "")).startswith("fedlib"):
            return "fedlib", v.__module__, v.__qualname__
        if isinstance(v, (types.FunctionType, type)):
            if id(v) in seen:
                return "again", seen[id(v)]
            seen[id(v)] = v.__qualname__
            if isinstance(v, type):
                return "class", v.__qualname__, sorted((name, repr(value(item))) for name, item in vars(v).items()
                                                       if name not in SKIPPED)
            return value(v)
        return value(v)

    def value(v) -> object:
        v = getattr(v, "__func__", v)  # a staticmethod's or classmethod's function
        if isinstance(v, property):
            return tuple(value(f) for f in (v.fget, v.fset, v.fdel) if f is not None)
        if isinstance(v, types.FunctionType):
            return code(v.__code__), value(v.__defaults__), value(v.__kwdefaults__), reached(v)
        if isinstance(v, dict):
            return tuple(sorted((repr(key), repr(value(item))) for key, item in v.items()))
        if isinstance(v, (list, tuple)):
            return tuple(value(item) for item in v)
        if isinstance(v, type):
            return v.__module__, v.__qualname__
        text = repr(v)
        return type(v).__qualname__ if " at 0x" in text else text  # an address differs from process to process

    parts = [(k.__qualname__, sorted((name, repr(value(v))) for name, v in vars(k).items() if name not in SKIPPED))
             for k in own]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


SKIPPED = ("__module__", "__doc__", "__dict__", "__weakref__", "__qualname__", "__firstlineno__",
           "__static_attributes__")  # a class's entries that say where it is, not what it computes


def source_digest(cls: type) -> str | None:
    """The digest of the source file of a method fedlib defines (fedlib/algorithms/<its module>.py): a run records
    it, and a result in the local results cache whose file has changed since is computed again
    (`experiments.run`). tests/test_method_sources.py pins each file's digest beside its `version`. None for a method
    defined elsewhere (its key carries `code_digest`)."""
    import hashlib
    import inspect

    if not cls.__module__.startswith("fedlib."):
        return None
    try:
        text = Path(inspect.getsourcefile(cls)).read_text().replace("\r\n", "\n")
    except (OSError, TypeError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Algorithm:
    """A method. A subclass that sets its own `name` in a module of fedlib/algorithms/ registers itself when it is
    defined (a new method is one new file there); a class defined elsewhere is added with `REGISTRY[name] = cls`."""
    name = "base"
    defaults: dict = {}
    rules: dict = {}  # option -> (predicate, description), beyond the type its default gives
    version = 1  # bump when a change alters this method's numbers: its cached runs are then recomputed
    supports_partial = False  # whether it runs with participation < 1
    participation_decay = True  # whether its local training takes a rate per client (Config.lr_decay_unit)
    final_round = False  # True: the final fine-tune is one more protocol round (round `rounds`) through the ledger,
    # in which `configure` picks every client and `client_update` trains `final_epochs` epochs (Ditto)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and cls.__module__.startswith("fedlib.algorithms."):
            if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
                raise ValueError(f"two methods are named {cls.name!r}: {REGISTRY[cls.name].__module__} and "
                                 f"{cls.__module__}")
            REGISTRY[cls.name] = cls

    def __init__(self, **options):
        self.check_options(options)
        self.options = {**self.defaults, **options}

    @classmethod
    def check_options(cls, options: dict) -> None:
        """Refuse unknown option names and values of the wrong type or out of range, naming the option."""
        unknown = set(options) - set(cls.defaults)
        if unknown:
            import difflib

            near = {u: difflib.get_close_matches(u, list(cls.defaults), n=1) for u in sorted(unknown)}
            elsewhere = {u: sorted(n for n, c in REGISTRY.items() if u in c.defaults) for u in sorted(unknown)}
            hint = "; ".join([f"did you mean {m[0]!r} for {u!r}?" for u, m in near.items() if m]
                             + [f"{u!r} is an option of {', '.join(ms)}" for u, ms in elsewhere.items() if ms])
            raise ValueError(f"{cls.name}: unknown option(s) {sorted(unknown)}; valid: {sorted(cls.defaults)}"
                             + (f" ({hint})" if hint else ""))
        for key, value in options.items():
            problem = _type_error(value, cls.defaults[key])
            if problem is None and key in cls.rules and not _satisfies(cls.rules[key][0], value):
                problem = f"must be {cls.rules[key][1]}"
            cap = OPTION_CAPS["batch" if key.endswith("batch") else "int"]
            if problem is None and isinstance(value, int) and not isinstance(value, bool) and value > cap:
                problem = f"is beyond fedlib's cap of {cap:,} (a run beyond it would exhaust memory or not finish; " \
                          f"fedlib.algorithms.base.OPTION_CAPS)"
            if problem:
                raise ValueError(f"{cls.name}: option {key} {problem}, got {value!r}")

    @classmethod
    def check_config(cls, cfg) -> None:
        """Refuse a Config this method cannot run (a model it needs, a setting it contradicts), when it is built.
        By default: no stochastic model (FedCR's Gaussian layer; `models.check_deterministic`)."""
        from ..models import check_deterministic

        check_deterministic(cfg.model, cls.name)

    def init(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def population(self) -> Population:
        return self.ctx.population

    def configure(self, rnd: int) -> Message:
        raise NotImplementedError

    def client_update(self, rnd: int, down: Message) -> Reply:
        raise NotImplementedError

    def aggregate(self, rnd: int, up: Message) -> Message | None:
        raise NotImplementedError

    def personal_names(self, group: Group) -> list[str]:
        """The parameters a client keeps for itself; the final fine-tune trains only these."""
        return []

    def check_finetune(self) -> None:
        """Refuse Config.final_finetune_epochs before round 0 when this method has nothing to fine-tune."""
        if not self.personal_names(self.population.groups[0]):
            raise ValueError(f"Config.final_finetune_epochs: {self.name} names no personal parameters, so it has "
                             f"nothing to fine-tune; set it to 0")

    def finetune(self, epochs: int) -> torch.Tensor:
        """After the last round every client trains its personal parameters alone for `epochs` epochs, the
        shared ones frozen (cross-entropy; e.g. FedAvg + this = FedAvg-FT). Returns the clients' losses."""
        self.check_finetune()
        return self.ctx.train_clients(self.ctx.rounds, self.ctx.clients, self.personal_names, epochs=epochs).loss

    def summary(self) -> dict:
        """A method's own record of the run (JSON-serialisable), stored in the result as "extra"."""
        return {}
