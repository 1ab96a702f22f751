"""scripts/paper_runs.py: a set computed on Ray gives the runs the sequential path gives, resumes a stopped run from
its checkpoint, and packs as before (issue 71, section 3)."""
import importlib.util
import types

import pytest

from fedlib import archive, cache, checkpoint, paths
from fedlib import experiments as ex
from fedlib.papers import fedlog

ROOT = paths.project_root()


def _script():
    spec = importlib.util.spec_from_file_location("paper_runs", ROOT / "scripts" / "paper_runs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    with pytest.raises(KeyboardInterrupt):
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
