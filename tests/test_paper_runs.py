"""scripts/paper_runs.py: a set computed on Ray gives the runs the sequential path gives, resumes a stopped run from
its checkpoint, and packs as before (issue 71, section 3)."""
import types

import pytest

from fedlib import archive, cache, checkpoint, paths
from fedlib import experiments as ex
from fedlib.papers import fedlog

import script_module

ROOT = paths.project_root()


def _script():
    return script_module.load("paper_runs")


def _tiny_set():
    """A run set of two tiny MNIST runs (FedAvg and FedLog-C's method, 5 rounds, 4 clients)."""
    def runs(seeds, only):
        return [(lab, fedlog.paper_config("mnist", method, n_clients=4, train_fraction=0.01, rounds=5,
                                          local_epochs=1, seed=sd))
                for sd in seeds for lab, method in (("FedAvg", "fedavg"), ("FedLog-C", "fedlog_c"))]
    return types.SimpleNamespace(runs=runs, seeds=[0], archive_file="tiny_paper.jsonl.gz")


def _comparable(result):
    return {"rounds": {k: v for k, v in result["rounds"].items() if k != "seconds"},
            "clients": result.get("clients"), "final": result.get("final")}


def test_address_needs_the_ray_backend(monkeypatch, capsys):
    pr = _script()
    monkeypatch.setattr(pr, "RUN_SETS", {"tiny": _tiny_set()})
    monkeypatch.setattr(pr, "SETS", ["tiny"])
    with pytest.raises(SystemExit):
        pr.main(["tiny", "--address", "auto"])
    assert "--address goes with --backend ray" in capsys.readouterr().err


@pytest.fixture
def ray_cleanup():
    """The local cluster a Ray sweep starts stays for the next sweep of this process; a test's goes with the test
    (the next test module starts one of its own: CI failed on that, 'ray.init twice')."""
    ray = pytest.importorskip("ray")
    yield
    ray.shutdown()


@pytest.mark.slow
def test_a_set_on_local_ray_resumes_its_stopped_run_and_gives_the_sequential_runs(tmp_path, monkeypatch, ray_cleanup):
    pr = _script()
    monkeypatch.setattr(pr, "RUN_SETS", {"tiny": _tiny_set()})
    monkeypatch.setattr(pr, "SETS", ["tiny"])
    monkeypatch.setenv("FEDLIB_RAY_CPUS", "2")
    runs = _tiny_set().runs([0], [])

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "sequential"))
    pr.main(["tiny"])
    sequential = [cache.load(cfg) for _, cfg in runs]
    assert all(r is not None for r in sequential)

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "ray"))
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    real = ex.run_round

    def stopped(alg, rnd, ledger, *a):
        if rnd == 3:
            raise KeyboardInterrupt  # the set stopped after round 2's checkpoint of its first run
        return real(alg, rnd, ledger, *a)

    monkeypatch.setattr(ex, "run_round", stopped)
    with pytest.raises(SystemExit, match="tiny: stopped; finished runs stay cached"):  # one line, no traceback
        pr.main(["tiny"])
    monkeypatch.setattr(ex, "run_round", real)
    first = runs[0][1]
    assert checkpoint.path_for(cache.path(first)).exists() and not cache.path(first).exists()
    assert checkpoint.progress(checkpoint.path_for(cache.path(first)))["next_round"] == 3

    pr.main(["tiny", "--backend", "ray"])
    on_ray = [cache.load(cfg) for _, cfg in runs]
    assert not checkpoint.path_for(cache.path(first)).exists()  # the stopped run went on from it, then removed it
    assert [_comparable(r) for r in on_ray] == [_comparable(r) for r in sequential]

    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    (tmp_path / "archive").mkdir()
    pr.main(["tiny", "--pack"])
    packed = archive.read(tmp_path / "archive" / "tiny_paper.jsonl.gz")
    assert sorted(r["key"] for r in packed) == sorted(cfg.key() for _, cfg in runs)


def test_a_run_another_job_finished_meanwhile_is_not_computed_again(monkeypatch, capsys):
    """Two jobs on one set, one of them --reverse, meet in the middle: each asks the cache just before a run. (This
    session's first --backend change asked once, before the first run, and would have recomputed the other's.)"""
    pr = _script()
    runs = _tiny_set().runs([0], [])
    done, computed = set(), []
    monkeypatch.setattr(pr.ex, "is_cached", lambda cfg: cfg.key() in done)

    def run(cfg, progress):
        computed.append(cfg.key())
        done.update(c.key() for _, c in runs)  # meanwhile the other job finished the rest
        return {"rounds": {"acc_mean": [0.5]}, "wall_s": 1.0}

    monkeypatch.setattr(pr.ex, "run", run)
    assert pr.compute("tiny", runs) == 0
    assert computed == [runs[0][1].key()]



def _held_elsewhere(cfg, then=None):
    """Another job holding `cfg`'s lock: a thread of this process (a lock is a thread's own), which lets go after
    `then()` or at once when the test says so (the event it returns with the thread)."""
    import threading

    held, go = threading.Event(), threading.Event()

    def job():
        with cache.claim(cfg, wait=False) as got:
            assert got
            held.set()
            go.wait(30)
            if then:
                then()

    t = threading.Thread(target=job)
    t.start()
    assert held.wait(10)
    return t, go


def test_a_run_another_job_is_computing_is_left_to_it(capsys):
    """Two slots given overlapping lists (`SET --shard 1/2` beside `SET --only X --shard 0/2`) computed one run at
    the same time, each from its checkpoint, for 35 min of a core (2026-12-02). A run another job holds is skipped."""
    pr = _script()
    runs = _tiny_set().runs([0], [])[:1]
    t, go = _held_elsewhere(runs[0][1])
    assert pr.compute("tiny", runs) == 0
    go.set()
    t.join()
    assert not ex.is_cached(runs[0][1])
    assert "another job is computing it; left to that job" in capsys.readouterr().out
    assert pr.compute("tiny", runs) == 0  # the lock let go: computed now
    assert ex.is_cached(runs[0][1])


def test_a_run_waits_for_the_job_computing_it_and_returns_that_result(capsys, monkeypatch):
    """`experiments.run` of a run another job holds waits for it and reads its result, never computing it too. The
    other job finishes once this one waits on the lock (before: a second after it started, which on a loaded
    machine came before this one asked, so it found the result at once and never waited: the test failed)."""
    cfg = _tiny_set().runs([0], [])[0][1]
    made = {**ex.run(cfg, cache=False, progress=False), "wall_s": 12345.0}  # marks the other job's result
    t, go = _held_elsewhere(cfg, then=lambda: cache.save(cfg, made))
    flock = cache.fcntl.flock

    def waiting(fd, op):  # a blocking request (no LOCK_NB) is this job waiting: the other one finishes now
        if op == cache.fcntl.LOCK_EX:
            go.set()
        return flock(fd, op)

    monkeypatch.setattr(cache.fcntl, "flock", waiting)
    got = ex.run(cfg, progress=False)
    t.join()
    assert got["wall_s"] == 12345.0
    assert "is being computed by another job" in capsys.readouterr().err


def test_a_runs_lock_is_never_opened_through_a_link(tmp_path):
    """The lock is created beside the result; a link put there is refused, so nothing is created where it points."""
    cfg = _tiny_set().runs([0], [])[0][1]
    lock = cache.path(cfg).with_suffix(".lock")
    lock.parent.mkdir(parents=True)
    lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OSError, match="is a symbolic link .*remove the link"):  # before: "Too many levels of
        with cache.claim(cfg):                                                 # symbolic links"
            pass
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("shard", ["-1/2", "2/2", "0/0"])
def test_a_shard_out_of_range_is_told_what_i_n_needs(shard, capsys):
    """Before, `--shard -1/2` got argparse's "expected one argument" (a value that begins with '-')."""
    with pytest.raises(SystemExit):
        _script().main(["table1", "--shard", shard, "--list"])
    assert "i/n needs 0 <= i < n" in capsys.readouterr().err


@pytest.mark.parametrize("raised, said", [(KeyboardInterrupt, "stopped; finished runs stay cached"),
                                          (ConnectionError("could not reach ray://x:1"), "--backend ray failed")])
def test_a_ray_set_stopped_or_unreachable_says_one_line(raised, said, monkeypatch, capsys):
    """Before, `paper_runs.py --backend ray` printed a traceback on SIGTERM or SIGINT and on a bad --address."""
    script = _script()

    def compute(*a, **k):
        raise raised

    monkeypatch.setattr(script, "compute", compute)
    with pytest.raises(SystemExit) as stop:
        script.main(["table1", "--backend", "ray", "--address", "ray://x:1", "--seeds", "0"])
    assert said in str(stop.value) and "\n" not in str(stop.value)


def test_every_declared_set_is_listed_by_help_and_the_docstring_keeps_no_list_by_hand(capsys):
    """The docstring listed 22 of the 25 sets by hand (not table1_augmented, tableA1_augmented or
    fedcr_ditto_main_fed); the sets are listed by `--help`, derived from RUN_SETS, and the docstring names none."""
    from fedlib.papers import RUN_SETS

    script = _script()
    with pytest.raises(SystemExit):
        script.main(["--help"])
    listed = capsys.readouterr().out.split("run sets:")[1]
    assert [line.split()[0] for line in listed.strip().splitlines()] == list(RUN_SETS)
    assert not [name for name in RUN_SETS if f" {name} " in f" {script.__doc__} ".replace(",", " ")]
