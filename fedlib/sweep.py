"""Sweeps: run a list of experiment configs with a backend, into the one on-disk cache.

* `auto` (default): `pool` when the machine has several cores, at least two runs are to compute and all of them
  run on the CPU; `local` otherwise (a GPU serves one process best).
* `pool`: one single-threaded worker process per core (`FEDLIB_WORKERS` caps them), started once per Python
  process and kept for its next sweeps, so a notebook pays the workers' start (importing torch) once. The
  driver only waits: it never competes with the workers for the cores.
* `local`: in this process, one run after another, with a progress bar. `FEDLIB_SWEEP_BACKEND=local` turns the
  workers off.
* `ray`: every run is a Ray task (a GPU is requested when the config's device needs one) on an
  existing cluster (`address`, e.g. "auto" or "ray://host:10001") or on a local one started for the
  call. On a cluster, the results folder (`FEDLIB_RESULTS`) and the data folder must be shared by all nodes.

Every backend writes into the same cache, atomically, so they are interchangeable and a sweep stopped on one
resumes on another where it stopped. A worker runs with one torch thread, as `run_all.sh` runs the notebooks, so
every backend gives the same numbers bit for bit (tested).

`run_many(..., shipped_prefixes=True)` reads a run that is the first rounds of a longer shipped run from the
archive instead of computing it (`from_shipped_run`). `call_many` runs other functions (views of a trained model,
which no result file holds) in the same workers.

A run that raises is recorded (`<key>.error.json` beside where its result would be) and the rest of
the sweep goes on; running the sweep again retries only the failed and missing runs.
`FEDLIB_SWEEP_BACKEND` (auto, pool, local or ray; and `FEDLIB_RAY_ADDRESS`) sets the backend of every
`run_many`, and so of every notebook.
"""
from __future__ import annotations

import concurrent.futures as futures
import contextlib
import math
import multiprocessing
import os
import signal
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from . import archive, engine, provenance
from . import cache as store
from . import experiments as ex
from .config import Config, restore
from .paths import data_dir, results_dir
from .progress import tqdm
from .result import Result


@dataclass
class SweepReport:
    results: list[dict | None]  # one per config, None where the run failed
    failures: list[tuple[Config, str]] = field(default_factory=list)
    computed: int = 0
    cached: int = 0

    def rescued(self, configs: list[Config]) -> list[Path]:
        """Where the computed runs that the cache could not take were kept (`cache.save`'s rescue folder, as on a
        full disk): they are not cached, so the next sweep computes them again unless they are copied back."""
        return [store.rescue_dir() / c.method / store.path(c).name for c, r in zip(configs, self.results)
                if r is not None and not store.path(c).exists() and (store.rescue_dir() / c.method /
                                                                      store.path(c).name).exists()]

    def summary(self, configs: list[Config], against: str | None = None):
        """The sweep as a comparison (`fedlib.compare.summary`): one row per grid cell over its seeds, mean +- SE of
        final and best accuracy and the megabytes sent, and with `against` (a method of the grid) a paired test of
        each cell against that method's cell of the same settings; a pandas DataFrame (`.to_csv` writes it)."""
        import pandas as pd

        from .compare import summary

        return pd.DataFrame(summary(configs, self.results, against))

    def raise_if_failed(self) -> None:
        if self.failures:
            lines = "\n".join(f"  {cfg.label()}: {err.strip().splitlines()[-1]}" for cfg, err in self.failures)
            raise RuntimeError(f"{len(self.failures)} run(s) of the sweep failed (recorded in the results folder; "
                               f"run the sweep again to retry only those):\n{lines}")


def error_path(cfg: Config):
    return store.path(cfg).with_suffix(".error.json")


def _record_failure(cfg: Config, err: str) -> None:
    store.write_atomic(error_path(cfg), {"config": asdict(cfg), "key": cfg.key(), "error": err})


def _run_guarded(cfg: Config, progress: bool) -> tuple[dict | None, str | None]:
    try:
        res = ex.run(cfg, progress=progress)
        error_path(cfg).unlink(missing_ok=True)
        return res, None
    except Exception:  # Ctrl-C and kills are BaseExceptions: they stop the sweep, finished runs stay cached
        err = traceback.format_exc()
        _record_failure(cfg, err)
        return None, err


def _take(report: SweepReport, configs, i: int, outcome) -> None:
    """Record run i's outcome() = (result, error) in the report; an outcome that raises means the worker died (killed,
    out of memory), so nothing of the run was written: that is recorded as its failure."""
    try:
        res, err = outcome()
    except Exception:
        res, err = None, traceback.format_exc()
        _record_failure(configs[i], err)
    report.results[i] = res
    report.computed += res is not None
    if err:
        report.failures.append((configs[i], err))


def _local(configs, todo, report, progress):
    for i in tqdm(todo, desc="sweep (local)", disable=not progress or len(todo) < 2):
        _take(report, configs, i, lambda: _run_guarded(configs[i], progress=False))


def methods_by_value(configs: list[Config]) -> dict[str, bytes]:
    """The methods of `configs` that a worker process cannot import by name (defined in a notebook cell, a script
    or a module outside fedlib, `algorithms.code_digest`), each pickled by value with cloudpickle (as Ray and loky
    send functions), so that a worker registers the same class before it builds the Config."""
    import sys

    import cloudpickle

    from . import algorithms

    out = {}
    for name in dict.fromkeys(c.method for c in configs):
        cls = algorithms.REGISTRY.get(name)
        if cls is None or algorithms.code_digest(cls) is None:
            continue
        module = sys.modules.get(cls.__module__)
        where = str(getattr(module, "__file__", None) or "")
        by_value = bool(where) and cls.__module__ != "__main__" and "-packages" not in where
        if by_value:  # a module the workers may not find on their path: its code travels too
            cloudpickle.register_pickle_by_value(module)
        try:
            out[name] = cloudpickle.dumps(cls)
        finally:
            if by_value:
                cloudpickle.unregister_pickle_by_value(module)
    return out


def register_methods(methods: dict[str, bytes]) -> None:
    """In a worker: register the methods `methods_by_value` sent (a name fedlib has already is not replaced)."""
    if not methods:
        return
    import cloudpickle

    from . import algorithms

    for name, blob in methods.items():
        if name not in algorithms.REGISTRY or algorithms.code_digest(algorithms.REGISTRY[name]) is not None:
            algorithms.REGISTRY[name] = cloudpickle.loads(blob)


def _remote_run(cfg_dict: dict, env: dict, threads: int, methods: dict | None = None):
    os.environ.update({**env, "FEDLIB_THREADS": str(threads)})  # what a cached run computes with on a CPU
    torch.set_num_threads(threads)
    register_methods(methods or {})
    return _run_guarded(restore(cfg_dict), progress=False)


def _cap(variable: str) -> int:
    cores = os.cpu_count() or 1
    raw = os.environ.get(variable, str(cores))
    try:
        cap = int(raw)
    except ValueError:
        cap = 0
    if cap < 1:
        raise ValueError(f"{variable} must be an integer >= 1, got {raw!r}")
    return min(cap, cores)


def pool_workers() -> int:
    """Worker processes of the `pool` backend: one per core, at most FEDLIB_WORKERS."""
    return _cap("FEDLIB_WORKERS")


_POOL: futures.ProcessPoolExecutor | None = None
_POOL_SIZE = 0


def _worker_env() -> dict:
    """What a worker process needs of this one's environment: the results and data folders."""
    return {"FEDLIB_RESULTS": str(results_dir().resolve()), "FEDLIB_DATA": str(data_dir().resolve())}


def _pool_call(fn, args: tuple, env: dict):
    """A pool worker's task: `fn(*args)` with one torch thread."""
    os.environ.update(env)
    torch.set_num_threads(1)
    return fn(*args)


def _run_config(cfg_dict: dict, methods: dict | None = None):
    register_methods(methods or {})
    return _run_guarded(restore(cfg_dict), progress=False)


class MainGuardMissing(RuntimeError):
    """A script starts a pooled sweep outside `if __name__ == "__main__":`."""


def check_main_guard() -> None:
    """The pool's workers are spawned: each imports the script that started the sweep, and a script that starts it
    at its top level, unguarded, would start it again in every worker (they died: BrokenProcessPool). Said before
    any worker starts, naming the line."""
    import ast
    import sys

    import __main__

    path = getattr(__main__, "__file__", None)
    if not path or not str(path).endswith(".py") or hasattr(sys, "ps1"):
        return  # a notebook, an interactive session, python -c
    frame = sys._getframe()
    while frame is not None and not (frame.f_globals.get("__name__") == "__main__" and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return
    try:
        tree = ast.parse(Path(path).read_text())
    except (OSError, SyntaxError, ValueError):
        return
    line = frame.f_lineno
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test) \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            return
    raise MainGuardMissing(f"{path}, line {line}: a script that starts a sweep on the worker pool needs the usual "
                           f"guard, as with any spawned worker pool: put the sweep under `if __name__ == \"__main__\":` "
                           f"(each worker imports the script, and would start the sweep again)")


def _ignore_interrupts(parent: int | None = None) -> None:
    """A worker's start: Ctrl-C (or a notebook kernel being shut down) signals the whole process group; the driver
    alone handles it and kills the workers (`shutdown_pool(kill=True)`), so they do not each print a traceback.
    A driver killed outright (kill -9) cannot: then the worker notices that its parent is gone and exits, within
    `ORPHAN_POLL_SECONDS`, instead of living on with its memory."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid() if parent is None else parent

    def watch():
        while True:
            time.sleep(ORPHAN_POLL_SECONDS)
            if os.getppid() != parent:  # re-parented: the driver is gone
                os._exit(3)

    threading.Thread(target=watch, daemon=True, name="fedlib-orphan-watch").start()


ORPHAN_POLL_SECONDS = 2.0


def _worker_pool(workers: int) -> futures.ProcessPoolExecutor:
    """The process's pool, (re)started with `workers` processes. Spawned, not forked: a fork of a process whose
    OpenMP threads have run can hang."""
    global _POOL, _POOL_SIZE
    if _POOL is None or _POOL_SIZE != workers:
        shutdown_pool()
        ctx = multiprocessing.get_context("spawn")
        _POOL = futures.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_ignore_interrupts,
                                            initargs=(os.getpid(),))  # a worker still starting when the driver dies
        _POOL_SIZE = workers
    return _POOL


def shutdown_pool(kill: bool = False) -> None:
    """Stop the worker processes (`kill`: now, dropping the runs they hold; their finished runs are cached)."""
    global _POOL
    pool, _POOL = _POOL, None
    if pool is None:
        return
    if kill:
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.kill()
    pool.shutdown(wait=not kill, cancel_futures=True)


def expected_work(cfg: Config) -> float:
    """A rough relative cost of a run (rounds x local epochs x the data it trains on), only to order a pool's queue;
    the order changes no number."""
    return cfg.rounds * cfg.local_epochs * cfg.train_fraction * cfg.participation * (1.3 if cfg.augment else 1.0)


def _pool(configs, todo, report, progress, workers):
    env = _worker_env()
    check_main_guard()
    methods = methods_by_value([configs[i] for i in todo])
    try:
        with _terminate_cleanly():
            pool = _worker_pool(workers)
            order = sorted(todo, key=lambda i: -expected_work(configs[i]))  # longest first: no straggler at the end
            pending = {pool.submit(_pool_call, _run_config, (asdict(configs[i]), methods), env): i for i in order}
            bar = tqdm(total=len(pending), desc=f"sweep ({workers} workers)", disable=not progress or len(pending) < 2)
            for fut in futures.as_completed(pending):
                _take(report, configs, pending[fut], fut.result)
                bar.update()
            bar.close()
    except BaseException:  # interrupted: the workers go now, the runs they finished stay cached
        shutdown_pool(kill=True)
        raise
    if any("BrokenProcessPool" in err for _, err in report.failures):
        shutdown_pool(kill=True)  # a broken pool takes no more work: the next sweep starts a fresh one


def choose_backend(configs: list[Config], todo: list[int], backend: str | None = None) -> str:
    """`auto` resolved: the worker pool when it can help (several cores, two or more CPU runs to compute)."""
    on_cpu = all(engine.resolve_device(configs[i].device).type == "cpu" for i in todo)
    return _resolve_backend(len(todo), on_cpu, backend)


def _resolve_backend(jobs: int, on_cpu: bool, backend: str | None = None) -> str:
    backend = backend or os.environ.get("FEDLIB_SWEEP_BACKEND") or "auto"
    if backend not in ("auto", "pool", "local", "ray"):
        raise ValueError(f"unknown sweep backend {backend!r}; choose auto, pool, local or ray")
    if backend != "auto":
        return backend
    return "pool" if on_cpu and jobs >= 2 and pool_workers() >= 2 else "local"


def local_cluster_cpus() -> int:
    """CPUs a local Ray cluster starts with: every core (FEDLIB_RAY_CPUS caps it), one single-threaded task each,
    so tasks never oversubscribe the machine."""
    return _cap("FEDLIB_RAY_CPUS")


@contextlib.contextmanager
def _terminate_cleanly():
    """SIGTERM ends the driver like Ctrl-C (Ray's own handler would abort with a C++ stack dump): the finally
    clauses run, so a local cluster is shut down and its processes go with it."""
    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop) if threading.current_thread() is threading.main_thread() else None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _ray(configs, todo, report, progress, address, threads):
    try:
        import ray
    except ImportError as err:
        raise ImportError("the ray backend needs Ray: pip install -e '.[cluster]' (or pip install 'ray>=2.9')") from err
    started = not ray.is_initialized()
    try:
        with _terminate_cleanly():
            if started and address:
                ray.init(address=address, log_to_driver=False)
            elif started:
                ray.init(num_cpus=local_cluster_cpus(), include_dashboard=False, log_to_driver=False)
            with _terminate_cleanly():  # again: ray.init installs a handler of its own
                _ray_tasks(ray, configs, todo, report, progress, threads or 1)
    except BaseException:  # interrupted: the local cluster goes now (otherwise it serves the next sweep, then exits
        if started:        # with this process)
            ray.shutdown()
        raise


def _ray_tasks(ray, configs, todo, report, progress, threads):
    env = _worker_env()
    task = ray.remote(_remote_run)
    methods = methods_by_value([configs[i] for i in todo])
    pending = {}
    for i in todo:
        cfg = configs[i]
        gpu = 1 if cfg.device.startswith("cuda") else 0  # what the config asks for, not what the driver has
        pending[task.options(num_cpus=1, num_gpus=gpu, max_retries=0).remote(asdict(cfg), env, threads, methods)] = i
    bar = tqdm(total=len(pending), desc="sweep (ray)", disable=not progress or len(pending) < 2)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        _take(report, configs, pending.pop(done[0]), lambda: ray.get(done[0]))
        bar.update()
    bar.close()


def from_shipped_run(cfg: Config) -> dict | None:
    """`cfg`'s run as the first rounds of a longer shipped run (`archive.longer`), or None: when there is none,
    or when `cfg` has a final fine-tune or a privacy budget, which the first rounds of a longer run do not give
    (`experiments.first_rounds`). Per-round metrics only; "first_rounds_of" names the shipped run."""
    if cfg.final_finetune_epochs or cfg.options.get("dp"):
        return None
    longer = archive.longer(cfg)
    if longer is None:
        return None
    return {**ex.first_rounds(longer, cfg.rounds), "key": cfg.key(),
            "first_rounds_of": {"key": longer["key"], "rounds": longer["config"]["rounds"]}}


def shipped_prefixes_allowed() -> bool:
    """`FEDLIB_SHIPPED_PREFIXES=0` computes such runs instead of reading them from the shipped runs."""
    raw = os.environ.get("FEDLIB_SHIPPED_PREFIXES", "1")
    if raw not in ("0", "1"):
        raise ValueError(f"FEDLIB_SHIPPED_PREFIXES must be 0 or 1, got {raw!r}")
    return raw == "1"


def run_sweep(configs: list[Config], backend: str | None = None, address: str | None = None,
              progress: bool = True, threads: int | None = None, shipped_prefixes: bool = False,
              loaded: list | None = None) -> SweepReport:
    """Run every config not cached yet. `backend`: auto (default, or $FEDLIB_SWEEP_BACKEND), pool, local or ray.
    `threads`: torch threads per Ray task (default 1, as every cached run on a CPU computes: `ex.cached_threads`).
    Pool workers run one thread each. `shipped_prefixes`: a run that is
    not cached but is the first rounds of a longer shipped run is read from there (`from_shipped_run`; exact, as
    a run's first rounds do not depend on how many follow), not computed, and not written to the cache, since it
    lacks the last round's per-client accuracies. `loaded`: what `cache.load` gave for each config, where the
    caller has read it already (a notebook's read, `papers.part.Runs`), so that no config is loaded twice."""
    address = address or os.environ.get("FEDLIB_RAY_ADDRESS") or None
    store.check_writable()
    report = SweepReport(results=list(loaded) if loaded is not None else [store.load(c) for c in configs])
    if shipped_prefixes and shipped_prefixes_allowed():
        report.results = [r if r is not None else from_shipped_run(c) for r, c in zip(report.results, configs)]
    report.cached = sum(r is not None for r in report.results)
    todo = [i for i, r in enumerate(report.results) if r is None]
    backend = choose_backend(configs, todo, backend)
    if not todo:
        return report
    if backend == "local":
        _local(configs, todo, report, progress)
    elif backend == "pool":
        _pool(configs, todo, report, progress, pool_workers())
    else:
        _ray(configs, todo, report, progress, address, threads)
    return report


def call_many(fn, calls: list[tuple], cpu_jobs: bool = True) -> list:
    """`[fn(*args) for args in calls]`, in the worker pool when `run_many` would use it for as many CPU runs
    (`cpu_jobs`), else here. For what a cached result does not hold, such as views of a trained model (FedCR's
    Fig. 2): `fn` is a module-level function (workers import it by name) and returns something picklable. Nothing
    is cached; an exception in a call is raised here after the others have finished."""
    if _resolve_backend(len(calls), cpu_jobs) != "pool":  # local, or ray: here
        return [fn(*args) for args in calls]
    env = _worker_env()
    try:
        with _terminate_cleanly():
            pool = _worker_pool(pool_workers())
            pending = [pool.submit(_pool_call, fn, args, env) for args in calls]
            futures.wait(pending)
    except BaseException:  # interrupted: the workers go now
        shutdown_pool(kill=True)
        raise
    if any(isinstance(fut.exception(), futures.process.BrokenProcessPool) for fut in pending):
        shutdown_pool(kill=True)  # a broken pool takes no more work: the next call starts a fresh one
    return [fut.result() for fut in pending]


class GridError(ValueError):
    """A sweep spec that does not say what to run."""


def _fields_of(d, where: str) -> dict:
    from dataclasses import fields as dataclass_fields

    if not isinstance(d, dict):
        raise GridError(f"{where} must be a JSON object of Config fields, got {type(d).__name__}")
    valid = {f.name for f in dataclass_fields(Config)} | {"paper"}
    unknown = sorted(set(d) - valid)
    if unknown:
        raise GridError(f"{where}: unknown field(s) {unknown}; valid: {sorted(valid)}")
    return dict(d)


MAX_GRID = 100_000  # combinations in one grid: a paper's full table is about 200


def expand_grid(spec, paper_config=None) -> list[Config]:
    """A JSON sweep spec: a list of config dicts, or {"base": {...}, "grid": {field: [values], ...}} for the
    cartesian product (a field "paper": dataset starts from that dataset's paper setting, `paper_config(dataset,
    **fields)`, which `python -m fedlib sweep` gives: FedLog's). A grid value that is not a list is one value;
    unknown keys and fields are refused (GridError, naming them), an empty spec too, and runs that come out the same
    (by cache key) are run once."""
    import itertools

    if isinstance(spec, list):
        if not spec:
            raise GridError("the sweep spec is an empty list: nothing to run")
        if len(spec) > MAX_GRID:
            raise GridError(f"the sweep spec lists {len(spec):,} runs, more than {MAX_GRID:,}: split it")
        configs = [Config(**_fields_of(d, f"run {i}")) for i, d in enumerate(spec)]
    else:
        if not isinstance(spec, dict):
            raise GridError(f"a sweep spec is a list of configs or {{'base': ..., 'grid': ...}}, got {type(spec).__name__}")
        unknown = sorted(set(spec) - {"base", "grid"})
        if unknown or not spec.get("grid") and not spec.get("base"):
            raise GridError("a sweep spec has the keys 'base' and 'grid'" + (f"; unknown: {unknown}" if unknown else
                            "; this one names no run (it would run Config's defaults)"))
        base = _fields_of(spec.get("base", {}), "base")
        grid = _fields_of(spec.get("grid", {}), "grid")
        grid = {k: v if isinstance(v, list) else [v] for k, v in grid.items()}
        empty = [k for k, v in grid.items() if not v]
        if empty:
            raise GridError(f"grid: {empty} list no values")
        size = math.prod(len(v) for v in grid.values())
        if size > MAX_GRID:  # counted before a single Config is built
            raise GridError(f"the grid has {size:,} combinations ({' x '.join(str(len(v)) for v in grid.values())}), "
                            f"more than {MAX_GRID:,}: split it into several sweeps")
        configs = []
        for values in itertools.product(*grid.values()):
            fields = {**base, **dict(zip(grid, values))}
            dataset = fields.pop("paper", None)
            if dataset and paper_config is None:
                raise GridError("'paper' names a paper's setting, but no paper's settings were given to expand_grid")
            configs.append(paper_config(dataset, **fields) if dataset else Config(**fields))
    return list({c.key(): c for c in configs}.values())


def run_many(configs: list[Config], cache: bool = True, progress: bool = True,
             shipped_prefixes: bool = False, loaded: list | None = None) -> list[Result]:
    """Run a sweep (finished runs come from the cache) and return every result. The backend is $FEDLIB_SWEEP_BACKEND
    (default auto: one worker process per core on a multi-core CPU machine); if a run fails, the others still finish
    and are cached, then this raises with the failures listed. `shipped_prefixes`: see `run_sweep`, for callers
    that read only per-round metrics; `loaded`: see `run_sweep`."""
    if not cache:
        return [ex.run(cfg, cache=False, progress=progress) for cfg in configs]
    report = run_sweep(configs, progress=progress, shipped_prefixes=shipped_prefixes, loaded=loaded)
    report.raise_if_failed()
    return [Result(provenance.note(r)) for r in report.results]
