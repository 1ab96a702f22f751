"""Experiments: a `Config` -> `run` -> per-round metrics, cached on disk by the config's hash (`fedlib.cache`).

Re-running a notebook or an interrupted sweep recomputes nothing that finished. Same config, same device ->
same numbers. Sweeps of many configs: `fedlib.sweep.run_many`.
"""
from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import sys
import time
import warnings
from dataclasses import asdict

import torch

from . import algorithms, archive, checkpoint, data, engine, knobs, leaf, models, provenance
from . import cache as store
from .config import PARTITIONED, Config, restore
from .messages import Ledger
from .paths import portable
from .progress import tqdm
from .result import Result
from .rounds import RoundResult, run_round

FEW_SAMPLES = 5  # fewer training samples than this on a client: setup warns


class DivergenceError(RuntimeError):
    """A run whose loss became NaN or infinite."""


def federation(cfg: Config) -> data.Federation:
    if cfg.dataset == "circle":
        return data.circle_federation(n_train=cfg.n_train or 80, seed=cfg.seed)
    if cfg.dataset in leaf.LEAF_DATASETS:  # natural partition: one client per user (n_clients: users sampled)
        return leaf.load_leaf(cfg.dataset, seed=cfg.seed, n_clients=cfg.n_clients)
    return data.make_federation(data.load_dataset(cfg.dataset), cfg.partition, cfg.n_clients, cfg.seed,
                                classes_per_client=cfg.classes_per_client, alpha=cfg.dirichlet_alpha,
                                train_fraction=cfg.train_fraction, pool_split=cfg.pool_split,
                                server_fraction=cfg.server_fraction, dominant_share=cfg.dominant_share,
                                corruption=cfg.corruption)


def _population(cfg: Config, fed: data.Federation, device: torch.device) -> engine.Population:
    model = models.default_model(cfg.dataset) if cfg.model == "auto" else cfg.model
    archs = models.client_architectures(model, fed.n_clients, torch.Generator().manual_seed(cfg.seed))
    torch.manual_seed(cfg.seed)
    built: dict[str, models.BodyHead] = {}
    client_models = []
    for arch in archs:  # same_init: one initialisation per architecture; otherwise one per client
        if not (cfg.same_init and arch in built):
            built[arch] = models.build(arch, fed.input_shape, fed.num_classes, vocab_size=fed.vocab_size)
        client_models.append(built[arch])
    return engine.Population.create(client_models, same_init=cfg.same_init, device=device,
                                    fast_engine=cfg.fast_engine)


def memory_bytes(device: torch.device) -> int:
    """The memory of `device`: the GPU's, or this machine's physical memory, or this process's address-space limit
    (`ulimit -v`, RLIMIT_AS) where that is lower."""
    return memory_limit(device)[0]


def memory_limit(device: torch.device) -> tuple[int, str]:
    """(bytes, what they are) for `memory_bytes`."""
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).total_memory, "this GPU's memory"
    import os
    import resource

    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft != resource.RLIM_INFINITY and soft < physical:
        return soft, "this process's limit (ulimit -v)"
    return physical, "this machine's memory"


def _check_memory(cfg: Config, fed: data.Federation, device: torch.device) -> None:
    """Refuse, before any client model is built, a config whose clients' models alone (every client keeps its own
    parameters, 4 bytes each) exceed the device's memory: it would fail deep in the allocator instead, naming no
    setting (`--n-clients 5000` with the full model)."""
    model = models.default_model(cfg.dataset) if cfg.model == "auto" else cfg.model
    arch = models.client_architectures(model, 1, torch.Generator().manual_seed(cfg.seed))[0]
    one = models.build(arch, fed.input_shape, fed.num_classes, vocab_size=fed.vocab_size)
    need = fed.n_clients * sum(p.numel() for p in one.parameters()) * 4
    have, what = memory_limit(device)
    if need > have:
        raise ValueError(f"{cfg.label()}: {fed.n_clients} clients of the model {arch} need at least {need / 2**30:.1f} "
                         f"GiB for their parameters alone, more than the {have / 2**30:.1f} GiB of {what}: lower "
                         f"Config.n_clients (--n-clients) or choose a smaller Config.model")


def setup(cfg: Config):
    """Data, population and algorithm of a config, ready for round 0. Seeds torch's global generator (dropout,
    augmentation) with the config's seed last, so every driver starts from the same state."""
    restore(asdict(cfg))  # checked again: a field changed after the Config was built (cfg.lr = -0.1) is refused
    alg = algorithms.make(cfg.method, **cfg.options)
    device = engine.resolve_device(cfg.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"Config.device={cfg.device!r}, but this machine has no CUDA device; use 'auto' or 'cpu'")
    engine.full_fp32(device)
    fed = federation(cfg)
    fewest = int(fed.train.counts.min())
    if fewest < FEW_SAMPLES and cfg.dataset in PARTITIONED:  # LEAF users hold what they hold
        warnings.warn(f"{cfg.label()}: a client holds only {fewest} training sample(s) (Config.train_fraction="
                      f"{cfg.train_fraction}, n_clients={cfg.n_clients}); its accuracy will say little. Raise "
                      f"train_fraction or lower n_clients.", stacklevel=2)
    fed.train, fed.test = fed.train.to(device), fed.test.to(device)
    if fed.server is not None:
        fed.server = fed.server.to(device)
    _check_memory(cfg, fed, device)
    pop = _population(cfg, fed, device)
    optimizer_kw = {k: v for k, v in (("momentum", cfg.momentum), ("weight_decay", cfg.weight_decay)) if v}
    ctx = algorithms.Context(fed, pop, cfg.optimizer, cfg.lr, cfg.local_epochs, cfg.batch_size, cfg.seed, cfg.rounds,
                             until_converged=cfg.local_optimum, augment=cfg.augment, participation=cfg.participation,
                             lr_decay=cfg.lr_decay, lr_decay_unit=cfg.lr_decay_unit, optimizer_kw=optimizer_kw,
                             clip_norm=cfg.clip_grad_norm, drop_last=cfg.drop_last,
                             skip_finished=cfg.skip_finished, capture_steps=cfg.capture_steps)
    alg.init(ctx)
    if cfg.final_finetune_epochs:
        alg.check_finetune()
    torch.manual_seed(cfg.seed)
    return ctx, alg


def _evaluate(pop: engine.Population, test: data.ClientData) -> dict:
    ev = engine.evaluate_population(pop, test)
    acc = engine.client_accuracy(ev).cpu()
    return {"acc_mean": float(acc.mean()), "acc_all": engine.pooled_accuracy(ev),
            "loss": float((ev["loss"].sum() / ev["count"].sum()).cpu()), "client_acc": acc.tolist()}


def _check_finite(cfg: Config, when: str, train_loss: float, test_loss: float) -> None:
    if math.isfinite(train_loss) and math.isfinite(test_loss):
        return
    where = f"{cfg.label()} diverged {when} (train loss {train_loss}, test loss {test_loss})"
    if not math.isfinite(train_loss):
        raise DivergenceError(f"{where}: the local training diverged; lower the learning rate (lr={cfg.lr}) or "
                              f"check the data")
    raise DivergenceError(f"{where}: local training stayed finite, so the models the server step left the clients "
                          f"with predict non-finite values; this is a fault of {cfg.method}'s server step, not of "
                          f"the learning rate")


def _record(rows: dict, res: RoundResult, ev: dict, ledger: Ledger, seconds: float, n_clients: int) -> None:
    for k in ("acc_mean", "acc_all", "loss"):
        rows[k].append(ev[k])
    rows["train_loss"].append(res.train_loss)
    rows["up_bits"].append(ledger.up[-1])
    rows["down_bits"].append(ledger.down[-1])
    rows["seconds"].append(seconds)
    if len(res.participants) < n_clients:
        rows.setdefault("participants", []).append(res.participants.tolist())
    if res.report:
        rows.setdefault("report", []).append(res.report)


def _rounds(cfg: Config, ctx, alg, rounds: int, progress: bool, ledger: Ledger | None = None,
            resume: dict | None = None, saves: checkpoint.Schedule | None = None) -> tuple[dict, dict | None]:
    """Rounds of a set-up run up to `rounds` (from a checkpoint's next round with `resume`): per-round metrics and
    the last evaluation; with `saves`, a checkpoint whenever one is due."""
    ledger = Ledger() if ledger is None else ledger
    rows = {k: [] for k in ("acc_mean", "acc_all", "loss", "train_loss", "up_bits", "down_bits", "seconds")}
    start, ev, elapsed, cpu = 0, None, 0.0, 0.0
    if resume is not None:
        rows, ev, start, elapsed = resume["rows"], resume["ev"], resume["next_round"], resume["elapsed"]
        cpu = resume.get("cpu", 0.0)
    bar = tqdm(range(start, rounds), desc=cfg.label(), leave=False, disable=not progress, initial=start, total=rounds)
    t_start, c_start = time.perf_counter() - elapsed, time.process_time() - cpu
    for rnd in bar:
        t0 = time.perf_counter()
        res = run_round(alg, rnd, ledger)
        ev = _evaluate(alg.population, ctx.fed.test)
        _check_finite(cfg, f"in round {rnd}", res.train_loss, ev["loss"])
        _record(rows, res, ev, ledger, time.perf_counter() - t0, ctx.population.n_clients)
        bar.set_postfix(acc=f"{rows['acc_mean'][-1]:.4f}")
        if saves is not None and rnd + 1 < rounds and saves.due():
            checkpoint.save(saves.target, alg, rows, ledger, ev, rnd + 1, time.perf_counter() - t_start,
                            saves.started_on, cpu=time.process_time() - c_start)
            saves.written()
    return rows, ev


def final_finetune(cfg: Config, ctx, alg, ledger: Ledger) -> dict:
    """After the last round: every client's fine-tune of its personal parameters (`Algorithm.finetune`, no
    messages), or, for a method with `final_round`, one more protocol round with every client, through the ledger.
    Returns the evaluation after it, its training loss and the bits it sent (0 for a local fine-tune)."""
    up = down = 0
    if alg.final_round:
        alg.final_epochs = cfg.final_finetune_epochs
        res = run_round(alg, cfg.rounds, ledger)
        loss, up, down = res.train_loss, ledger.up[-1], ledger.down[-1]
    else:
        loss = float(alg.finetune(cfg.final_finetune_epochs).mean())
    final = _evaluate(alg.population, ctx.fed.test)
    _check_finite(cfg, f"in the final fine-tune after round {cfg.rounds - 1}", loss, final["loss"])
    return {**final, "train_loss": loss, "up_bits": up, "down_bits": down}


def first_rounds(result: dict, rounds: int) -> dict:
    """The first `rounds` rounds of a longer run, as the run of that many rounds would record them: no method's
    rounds depend on how many follow, except a privacy budget split over the rounds (refused). Per-round metrics
    only: the final fine-tune and the last round's per-client accuracies belong to the longer run and are dropped."""
    cfg = result["config"]
    if cfg["options"].get("dp"):
        raise ValueError(f"{cfg['method']} with dp={cfg['options']['dp']!r} spends its budget over all "
                         f"{cfg['rounds']} rounds, so its first {rounds} are not a run of {rounds}")
    if rounds > cfg["rounds"]:
        raise ValueError(f"the run has {cfg['rounds']} rounds, fewer than the {rounds} asked for")
    cut = {k: v[:rounds] for k, v in result["rounds"].items()}
    return Result({**{k: v for k, v in result.items() if k not in ("final", "client_acc", "rounds")},
            "config": {**cfg, "rounds": rounds}, "rounds": cut})


def run_live(cfg: Config, progress: bool = False):
    """Run a config's rounds outside the cache and return (ctx, alg, per-round metrics): the trained models stay
    in hand, for views a result file does not hold (e.g. FedCR's Fig. 2)."""
    ctx, alg = setup(cfg)
    rows, _ = _rounds(cfg, ctx, alg, cfg.rounds, progress)
    return ctx, alg, rows


def cached_threads() -> int:
    """The torch threads a cached run computes with on a CPU: FEDLIB_THREADS, else one. Some CPU kernels (a
    convolution's backward) sum in an order that depends on the thread count (FedRD's smoke Table I run reached
    33.90% on one thread and 43.32% on two, docs/measurements.md), and a cache key names one set of numbers: every
    shipped run was made on one thread. A run outside the cache (`cache=False`, benchmarks) keeps the caller's."""
    raw = os.environ.get("FEDLIB_THREADS", "")
    if raw:
        knobs.check_one("FEDLIB_THREADS", raw)  # a value it does not take: refused by name, before any work
    return int(raw or 1)


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Compute with `n` torch threads (None: as they are), then give back the caller's count."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run(cfg: Config, cache: bool = True, progress: bool = True) -> Result:
    """Run (or load) one experiment. Returns a `Result`: {"config", "rounds": {metric: [per round]}, "client_acc",
    ...}; with `final_finetune_epochs`, also "final": the metrics after every client's fine-tune. A cached run on a
    CPU computes with `cached_threads()` torch threads; "threads" in the result says how many it had."""
    restore(asdict(cfg))  # a Config changed after it was built is checked again before anything is read or run
    if cache and (found := _current(cfg, store.load(cfg))) is not None:
        return _cached(cfg, found)
    if not cache:
        with torch_threads(None):
            return _compute(cfg, cache, progress)
    store.check_writable()
    with store.claim(cfg):  # another job on this results folder may be computing it: wait, then read its result
        if (found := _current(cfg, store.load(cfg))) is not None:
            out = _cached(cfg, found)
            out.waited = True  # computed by another job while this one waited (`fedlib run` says so)
            return out
        with torch_threads(cached_threads() if engine.resolve_device(cfg.device).type == "cpu" else None):
            return _compute(cfg, cache, progress)


def _current(cfg: Config, found: dict | None) -> dict | None:
    """`found`, unless it records the source of its method's file (`algorithms.source_digest`) and that file has
    changed since: then the run shipped in archive/ if there is one (the pinned digests and the freshness replay
    vouch for those), else None (computed again), said on stderr. Results recorded before 2026-12-06 carry no
    digest and are served as they are."""
    if found is None or not found.get("method_source"):
        return found
    cls = algorithms.REGISTRY.get(cfg.method)
    now = algorithms.source_digest(cls) if cls is not None else None
    if now is None or now == found["method_source"]:
        return found
    shipped = archive.find_run(cfg)
    if shipped is not None and shipped.get("key") == found.get("key"):
        return shipped
    print(f"fedlib: {cfg.label()}: its method's file ({cls.__module__}) has changed since this run was cached: "
          f"computed again", file=sys.stderr)
    return None


def _cached(cfg: Config, found: dict) -> Result:
    out = Result(provenance.note(found))
    out.saved_to = store.path(cfg) if found["key"] == cfg.key() else None  # None: read from archive/, made on
    return out  # another device type (`archive.find_run`)


def _compute(cfg: Config, cache: bool, progress: bool) -> Result:
    """`run`'s work once the cache has not got the run: set up (or resume from a checkpoint), train, save."""
    ctx, alg = setup(cfg)
    ckpt = checkpoint.path_for(store.path(cfg)) if cache else None
    state = checkpoint.load(ckpt, ctx) if cache else None
    ledger, elapsed, cpu = Ledger(), 0.0, 0.0
    if state is not None:
        alg, ledger, elapsed, cpu = state["alg"], state["ledger"], state["elapsed"], state.get("cpu", 0.0)
        ctx = alg.ctx
        # said with or without progress bars (scripts/paper_runs.py runs without them and printed nothing)
        print(f"{cfg.label()}: resuming from its checkpoint after round {state['next_round'] - 1}", flush=True)
    started_on = (state or {}).get("started_on") or provenance.machine()
    t_start, c_start = time.perf_counter() - elapsed, time.process_time() - cpu
    rows, ev = _rounds(cfg, ctx, alg, cfg.rounds, progress, ledger, resume=state,
                       saves=checkpoint.Schedule(ckpt, started_on) if cache else None)
    result = {"config": asdict(cfg), "key": cfg.key(), "rounds": rows, "client_acc": ev["client_acc"] if ev else [],
              "wall_s": time.perf_counter() - t_start, "cpu_s": time.process_time() - c_start, "device": engine.resolve_device(cfg.device).type,
              "torch": torch.__version__, "threads": torch.get_num_threads(),
              "code": provenance.record(engine.resolve_device(cfg.device))}
    cls = algorithms.REGISTRY.get(cfg.method)
    if cls is not None and (source := algorithms.source_digest(cls)) is not None:
        result["method_source"] = source  # a later edit of the method's file computes the run again (`_current`)
    if started_on != result["code"]["machine"]:  # resumed on another kind of processor: its first rounds were not
        result["code"]["first_rounds_on"] = started_on  # made here (what the freshness check replays)
    if cfg.final_finetune_epochs:
        result["final"] = final_finetune(cfg, ctx, alg, ledger)
    if ctx.fed.kinds:
        result["client_kind"] = ctx.fed.kinds
    if extra := alg.summary():
        result["extra"] = extra
    saved_to = None
    if cache:
        saved_to = store.save(cfg, result)  # the cache, or the rescue folder when the cache cannot be written
        checkpoint.remove(ckpt)
    out = Result(provenance.note(result))
    out.saved_to = saved_to
    return out


def replay(cfg: Config, rounds: int) -> dict:
    """The first `rounds` rounds of `cfg`, computed now and not cached: what the freshness check compares with a
    finished run (the same config, so nothing that depends on the total number of rounds changes)."""
    ctx, alg = setup(cfg)
    return _rounds(cfg, ctx, alg, min(rounds, cfg.rounds), progress=False)[0]


def dataset_available(name: str) -> bool:
    """Whether a dataset's files are here (LEAF: its json folders); if not, print why, so a notebook can report the
    dataset as missing instead of failing."""
    try:
        leaf.find_leaf_root(name) if name in leaf.LEAF_DATASETS else data.load_dataset(name)
        return True
    except data.DatasetNotFound as err:
        print(portable(f"{name}: files missing, not run. {err}"))  # no absolute path in a committed output
        return False


def data_here(name: str) -> bool:
    """`dataset_available`, asked once a process for each data folder and quietly: where the papers' parts are read
    (`papers.part.read`), and where a notebook says which datasets it draws. The answer is kept for the data folder it
    was asked about: before, one found under another FEDLIB_DATA (a test's empty folder) was served under every folder
    after it, and a read then left out runs whose data were there."""
    from .paths import data_dir

    return _data_here(name, str(data_dir()))


@functools.cache
def _data_here(name: str, folder: str) -> bool:
    with contextlib.redirect_stdout(io.StringIO()):
        return dataset_available(name)


data_here.cache_clear = _data_here.cache_clear  # what a test that changes the files' answer calls


is_cached = store.is_cached

__all__ = ["Config", "Result", "run", "replay", "setup", "is_cached", "dataset_available", "data_here", "DivergenceError"]
