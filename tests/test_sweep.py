import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from fedlib import experiments as ex
from fedlib import sweep


def _circle(seed, method="fedlog", rounds=4, epochs=5, **options):
    return ex.Config(method=method, dataset="circle", model="mlp_flexible", n_clients=2, rounds=rounds,
                     local_epochs=epochs, batch_size=40, lr=0.05, same_init=False, seed=seed, options=options)


def _numbers(result):
    return {k: v for k, v in result["rounds"].items() if k != "seconds"}  # wall time is the only thing that differs


@pytest.fixture(scope="module")
def ray_cluster():
    import ray
    if ray.is_initialized():  # a cluster another test's sweep kept for its next sweep (sweep._ray keeps it): ours
        ray.shutdown()        # has its own number of processors
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_local_pool_and_ray_give_identical_results_and_report_failures(ray_cluster, tmp_path, monkeypatch):
    # a run that fails only once it runs: LG-FedAvg shares a head layer the two body depths give different inputs
    grid = [_circle(s, m) for m in ("fedlog", "fedproto") for s in range(2)] + [_circle(0, "lg_fedavg", global_layers=2)]
    out = {}
    for backend in ("local", "pool", "ray"):
        monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / backend))
        report = sweep.run_sweep(grid, backend=backend, progress=False)
        assert report.computed == 4 and len(report.failures) == 1  # the failing run did not stop the others
        assert "same shape" in report.failures[0][1]
        assert sweep.error_path(grid[-1]).exists() and not ex.is_cached(grid[-1])
        out[backend] = [_numbers(r) for r in report.results[:4]]
        with pytest.raises(RuntimeError, match="1 run"):
            report.raise_if_failed()
    assert out["local"] == out["pool"] == out["ray"]


def test_rerunning_retries_only_failed_and_missing_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    grid = [_circle(0), _circle(1, "lg_fedavg", global_layers=2)]
    first = sweep.run_sweep(grid, backend="local", progress=False)
    assert (first.computed, len(first.failures)) == (1, 1)
    grid.append(_circle(2))
    again = sweep.run_sweep(grid, backend="local", progress=False)
    assert (again.cached, again.computed, len(again.failures)) == (1, 1, 1)


@pytest.mark.parametrize("backend", ["pool", "ray"])
def test_a_killed_sweep_resumes_without_recomputing(backend, tmp_path, request):
    if backend == "ray":
        request.getfixturevalue("ray_cluster")
    grid = [_circle(s, rounds=12, epochs=10) for s in range(6)]
    spec = tmp_path / "grid.json"
    spec.write_text(json.dumps([vars(c) for c in grid]))
    env = {**os.environ, "FEDLIB_RESULTS": str(tmp_path / "results")}
    proc = subprocess.Popen([sys.executable, "-m", "fedlib", "sweep", "--grid", str(spec), "--backend", backend],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    results = tmp_path / "results" / "fedlog"

    def finished_results():  # a write killed part-way leaves a .tmp-*.json temporary: not a result
        return {p: p.stat().st_mtime_ns for p in results.glob("[!.]*.json")}

    deadline = time.time() + 240
    while time.time() < deadline and len(finished_results()) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver, its local cluster or pool and every worker
    proc.wait()
    finished = finished_results()
    assert 2 <= len(finished) < len(grid), "the sweep must be stopped part-way"
    (results / ".tmp-killedwrite.json").write_text('{"config": {"meth')  # as a worker killed mid-write leaves it
    os.environ["FEDLIB_RESULTS"] = str(tmp_path / "results")
    try:
        report = sweep.run_sweep(grid, backend=backend, progress=False)
    finally:
        del os.environ["FEDLIB_RESULTS"]
    assert report.cached == len(finished) and report.computed == len(grid) - len(finished)
    assert all(p.stat().st_mtime_ns == t for p, t in finished.items())  # nothing finished was recomputed
    assert all(r is not None for r in report.results)


def test_ray_backend_without_ray_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(ImportError, match=r"\[cluster\]"):
        sweep.run_sweep([_circle(0)], backend="ray", progress=False)
    with pytest.raises(ValueError, match="unknown sweep backend"):
        sweep.run_sweep([_circle(0)], backend="slurm", progress=False)


def test_grid_spec_expands_to_the_cartesian_product():
    from fedlib.papers import fedlog

    cfgs = sweep.expand_grid({"base": {"paper": "mnist", "rounds": 3},
                              "grid": {"method": ["fedlog", "fedavg"], "seed": [0, 1, 2]}}, fedlog.paper_config)
    assert len(cfgs) == 6 and {c.method for c in cfgs} == {"fedlog", "fedavg"}
    assert all(c.rounds == 3 and c.n_clients == 50 for c in cfgs)
    assert sweep.expand_grid([{"method": "fedlog", "seed": 4}])[0].seed == 4


def test_auto_backend_uses_worker_processes_on_a_multicore_cpu_only(monkeypatch):
    cpu = [_circle(s) for s in range(3)]
    monkeypatch.delenv("FEDLIB_SWEEP_BACKEND", raising=False)
    monkeypatch.delenv("FEDLIB_WORKERS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert sweep.choose_backend(cpu, [0, 1, 2]) == "pool"
    assert sweep.choose_backend(cpu, [2]) == "local"  # one run: no workers to start
    assert sweep.choose_backend([ex.Config(**{**vars(cpu[0]), "device": "cuda"})] * 2, [0, 1]) == "local"
    monkeypatch.setenv("FEDLIB_WORKERS", "1")
    assert sweep.choose_backend(cpu, [0, 1, 2]) == "local"
    monkeypatch.setenv("FEDLIB_WORKERS", "3")
    assert sweep.pool_workers() == 3
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert sweep.choose_backend(cpu, [0, 1, 2]) == "local" and sweep.pool_workers() == 1
    monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "local")  # the switch that turns the workers off
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert sweep.choose_backend(cpu, [0, 1, 2]) == "local"
    monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "pool")
    assert sweep.choose_backend(cpu, [0]) == "pool"
    monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "threads")
    with pytest.raises(ValueError, match="auto, pool, local or ray"):
        sweep.choose_backend(cpu, [0, 1])
    monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "auto")
    monkeypatch.setenv("FEDLIB_WORKERS", "0")
    with pytest.raises(ValueError, match="FEDLIB_WORKERS must be an integer >= 1"):
        sweep.choose_backend(cpu, [0, 1])


def test_an_interrupt_reaches_the_driver_not_the_workers():
    """Ctrl-C or a kernel shutdown signals the process group: a worker used to die with a KeyboardInterrupt
    traceback of its own (one per worker in run_all's log); now it ignores SIGINT and the driver kills it."""
    try:
        pool = sweep._worker_pool(1)
        pid = pool.submit(os.getpid).result()
        os.kill(pid, signal.SIGINT)
        time.sleep(0.5)
        assert pool.submit(os.getpid).result(timeout=60) == pid  # alive, and still taking work
    finally:
        sweep.shutdown_pool(kill=True)
    assert sweep._POOL is None


def test_the_pool_keeps_its_workers_for_the_next_sweep(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_WORKERS", "2")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    try:
        for k in range(2):
            monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / str(k)))  # each sweep its own cache folder
            report = sweep.run_sweep([_circle(s, rounds=1) for s in range(2)], backend="pool", progress=False)
            assert report.computed == 2 and ex.is_cached(_circle(0, rounds=1))
            pids = {p.pid for p in sweep._POOL._processes.values()}
            if k == 0:
                first = pids
        assert pids == first and len(pids) == 2
    finally:
        sweep.shutdown_pool()
    assert sweep._POOL is None


def test_call_many_runs_in_the_workers_in_order_and_raises_a_calls_error(monkeypatch):
    monkeypatch.setenv("FEDLIB_WORKERS", "2")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.delenv("FEDLIB_SWEEP_BACKEND", raising=False)
    try:
        assert sweep.call_many(divmod, [(7, 2), (9, 4), (1, 1)]) == [(3, 1), (2, 1), (1, 0)]
        pids = sweep.call_many(os.getpid, [(), ()])
        assert os.getpid() not in pids  # computed in the workers, not here
        with pytest.raises(ZeroDivisionError):
            sweep.call_many(divmod, [(1, 1), (1, 0)])
        assert sweep.call_many(os.getpid, [(), ()], cpu_jobs=False) == [os.getpid()] * 2  # e.g. GPU work: here
        monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "local")  # the switch that turns the workers off
        assert sweep.call_many(os.getpid, [(), ()]) == [os.getpid()] * 2
    finally:
        sweep.shutdown_pool()


def test_grid_specs_say_what_they_mean():
    # before: a misspelt top-level key or {} ran Config's defaults (50 clients x 100 rounds), duplicates ran twice,
    # a misspelt field or a scalar where a list belongs gave a bare TypeError
    for bad, words in (({}, "names no run"), ({"base": {"rounds": 2}, "gird": {"seed": [0]}}, "unknown: ['gird']"),
                       ({"grid": {"seeds": [0, 1]}}, "unknown field(s) ['seeds']"), ([], "empty list"),
                       ([{"metod": "fedavg"}], "run 0: unknown field(s) ['metod']"), ("fedavg", "got str")):
        with pytest.raises(sweep.GridError, match=re.escape(words)):
            sweep.expand_grid(bad)
    from fedlib.papers import fedlog

    with pytest.raises(sweep.GridError, match="no paper's settings"):
        sweep.expand_grid({"base": {"paper": "mnist", "rounds": 3}, "grid": {"seed": [0]}})
    cfgs = sweep.expand_grid({"base": {"paper": "mnist", "rounds": 3}, "grid": {"seed": [0, 0, 1], "method": "fedavg"}},
                             fedlog.paper_config)
    assert [(c.method, c.seed) for c in cfgs] == [("fedavg", 0), ("fedavg", 1)]


def test_pool_workers_exit_when_their_driver_is_killed_outright():
    # before: after a kill -9 of a sweep's driver, its workers lived on (about 670 MB each) for minutes
    import time

    driver = textwrap.dedent("""
        import time
        from fedlib import sweep
        pool = sweep._worker_pool(2)
        pool.submit(time.sleep, 60)
        pool.submit(time.sleep, 60)
        time.sleep(3)
        print(" ".join(str(p) for p in pool._processes), flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", driver], stdout=subprocess.PIPE, text=True)
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 20
    alive = workers
    while alive and time.time() < deadline:
        time.sleep(0.5)
        alive = [p for p in workers if _alive(p)]
    assert not alive, f"workers {alive} outlived their driver"


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_paper_runs_takes_one_seed_or_a_range_and_refuses_the_rest():
    # before: --seeds 2 raised "ValueError: not enough values to unpack"
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "scripts" / "paper_runs.py"
    run = lambda *a: subprocess.run([sys.executable, str(script), "fedprof_alpha", "--list", *a],  # noqa: E731
                                    capture_output=True, text=True)
    one, some, bad = run("--seeds", "2"), run("--seeds", "1-2"), run("--seeds", "two")
    assert one.returncode == 0 and {line.split()[2] for line in one.stdout.splitlines()} == {"2"}
    assert some.returncode == 0 and {line.split()[2] for line in some.stdout.splitlines()} == {"1", "2"}
    assert bad.returncode == 2 and "--seeds takes N or A-B" in bad.stderr


def test_paper_runs_list_tells_done_started_and_todo_without_reading_a_checkpoint():
    """`paper_runs.py SET --list`: a cached run is done; one with a checkpoint beside its cache entry is started (the
    file is only looked at, so a running job's checkpoint is never touched); the others are todo."""
    from pathlib import Path

    from fedlib import cache, checkpoint

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import paper_runs

    done, started, todo = _circle(0, rounds=2), _circle(1, rounds=2), _circle(2, rounds=2)
    ex.run(done, progress=False)
    ckpt = checkpoint.path_for(cache.path(started))
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    ckpt.write_bytes(b"not a checkpoint at all")
    os.utime(ckpt, (1_700_000_000, 1_700_000_000))
    assert paper_runs.status(done) == "done" and paper_runs.status(todo) == "todo"
    assert paper_runs.status(started) == "started (checkpoint of 2023-11-14 22:13 UTC)"
    checkpoint.progress_path(ckpt).write_text('{"next_round": 1, "rounds": 2, "elapsed_s": 5400}')
    assert paper_runs.status(started) == "started (checkpoint of 2023-11-14 22:13 UTC, 1 of 2 rounds, about 1.5 h " \
                                         "left at its pace)"
    checkpoint.progress_path(ckpt).write_text("import os")  # not JSON: said as before, nothing run
    assert paper_runs.status(started) == "started (checkpoint of 2023-11-14 22:13 UTC)"
    assert ckpt.read_bytes() == b"not a checkpoint at all"  # left as it was


