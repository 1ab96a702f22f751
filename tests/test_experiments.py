import json

import pytest

from fedlib import cache, sweep
from fedlib import experiments as ex
from fedlib.papers import fedlog


def _cfg(seed=0, **kw):
    return ex.Config(**{**dict(method="fedlog", dataset="mnist", n_clients=6, train_fraction=0.005, rounds=2,
                               local_epochs=1, seed=seed), **kw})


def test_run_is_cached_atomically_and_reloaded(monkeypatch):
    cfg = _cfg()
    res = ex.run(cfg, progress=False)
    path = cache.path(cfg)
    assert json.loads(path.read_text())["rounds"] == res["rounds"]
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp")]
    monkeypatch.setattr(ex, "setup", lambda cfg: pytest.fail("a cached run must not be recomputed"))
    assert ex.run(cfg, progress=False)["rounds"] == res["rounds"]


def test_metrics_per_round():
    res = ex.run(_cfg(rounds=3), cache=False, progress=False)
    rows = res["rounds"]
    assert all(len(v) == 3 for v in rows.values())
    assert all(0 <= a <= 1 for a in rows["acc_mean"] + rows["acc_all"])
    assert len(res["client_acc"]) == 6


def test_same_seed_same_numbers_and_different_seed_different_numbers():
    a = ex.run(_cfg(), cache=False, progress=False)["rounds"]
    b = ex.run(_cfg(), cache=False, progress=False)["rounds"]
    c = ex.run(_cfg(seed=1), cache=False, progress=False)["rounds"]
    assert a["acc_mean"] == b["acc_mean"] and a["loss"] == b["loss"]
    assert a["loss"] != c["loss"]


class Interrupted(BaseException):
    """Stands for Ctrl-C or a killed job (pytest reserves KeyboardInterrupt for itself)."""


def test_interrupted_sweep_resumes_without_recomputing(monkeypatch):
    configs = [_cfg(seed=s) for s in range(3)]
    calls, interrupted = [], []
    real_setup = ex.setup

    def interrupt_on_second(cfg):
        calls.append(cfg.seed)
        if cfg.seed == 1 and not interrupted:
            interrupted.append(True)
            raise Interrupted  # the sweep is stopped during the second run
        return real_setup(cfg)

    monkeypatch.setattr(ex, "setup", interrupt_on_second)
    with pytest.raises(Interrupted):
        sweep.run_many(configs, progress=False)
    assert ex.is_cached(configs[0]) and not ex.is_cached(configs[1])
    calls.clear()
    results = sweep.run_many(configs, progress=False)
    assert calls == [1, 2]  # the finished run came from the cache
    assert all(ex.is_cached(c) for c in configs) and len(results) == 3


def test_diverging_run_raises_a_clear_error_and_writes_nothing():
    cfg = _cfg(method="fedavg", optimizer="sgd", lr=1e12)
    with pytest.raises(ex.DivergenceError, match="lower the learning rate"):
        ex.run(cfg, progress=False)
    assert not ex.is_cached(cfg)


def test_bad_names_give_clear_errors():
    with pytest.raises(ValueError, match="Config.dataset must be one of mnist"):  # when built, before any data
        _cfg(dataset="imagenet")
    with pytest.raises(ValueError, match="no paper setting"):
        fedlog.paper_config("svhn", "fedlog")


def test_the_command_line_uses_the_papers_method_settings():
    import argparse

    from fedlib.__main__ import run_config

    args = argparse.Namespace(dataset="cifar10", method="csfl", seed=0, option=[], rounds=None)
    cfg = run_config(args)
    assert cfg.options == {"sparsity": 0.0005, "reduction": 0.2, "phase2_lr": 0.01} and cfg.batch_size == 10
    args = argparse.Namespace(dataset="mnist", method="fedrep", seed=1, option=["head_epochs=3"], rounds=2)
    assert run_config(args) == fedlog.paper_config("mnist", "fedrep", seed=1, rounds=2, options={"head_epochs": 3})


def test_cifar100_cs_fl_follows_table_a5():
    cfg = fedlog.table1_config("cifar100", "CS-FL")
    assert cfg.options["reduction"] == 0.1 and cfg.local_epochs == 1 and cfg.options["sparsity"] == 0.0005
    assert fedlog.table1_config("cifar10", "CS-FL").options["reduction"] == 0.2  # Table A.4 stays


def test_the_first_rounds_of_a_run_are_the_shorter_run():
    small = dict(model="cnn_mnist_nodrop", n_clients=4, train_fraction=0.01, local_epochs=1)
    long = ex.run(fedlog.paper_config("mnist", "fedavg", rounds=3, final_finetune_epochs=1, **small), cache=False,
                  progress=False)
    short = ex.run(fedlog.paper_config("mnist", "fedavg", rounds=2, **small), cache=False, progress=False)
    cut = ex.first_rounds(long, 2)
    for k in ("acc_mean", "loss", "train_loss", "up_bits", "down_bits"):
        assert cut["rounds"][k] == short["rounds"][k], k
    assert cut["config"]["rounds"] == 2 and "final" not in cut and "client_acc" not in cut
    with pytest.raises(ValueError, match="fewer than"):
        ex.first_rounds(long, 4)
    dp = {**long, "config": {**long["config"], "options": {"dp": "local"}}}
    with pytest.raises(ValueError, match="budget"):
        ex.first_rounds(dp, 2)


def test_a_result_that_cannot_be_written_is_kept_elsewhere_and_said_so(tmp_path, monkeypatch, capsys):
    # before: a full disk gave Errno 28 with no path, and `fedlib run` lost the computed result
    import errno

    from fedlib import cache

    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1)
    real = cache.write_atomic
    primary = cache.path(cfg)

    def full_disk(target, obj):
        if target == primary:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, obj)

    monkeypatch.setattr(cache, "write_atomic", full_disk)
    monkeypatch.setenv("FEDLIB_RESCUE", str(tmp_path / "rescue"))
    res = ex.run(cfg, progress=False)
    kept = tmp_path / "rescue" / "fedlib-rescued" / "fedavg" / primary.name
    assert kept.exists() and json.loads(kept.read_text())["rounds"] == res["rounds"]
    err = capsys.readouterr().err
    assert str(primary) in err and "No space left" in err and str(kept) in err


def test_a_rescued_result_is_named_where_it_really_is(tmp_path, monkeypatch, capsys):
    import errno

    from fedlib.__main__ import main

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDLIB_RESCUE", str(tmp_path / "rescue"))
    real = cache.write_atomic

    def full_disk(target, obj):
        if not str(target).startswith(str(tmp_path / "rescue")):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, obj)

    monkeypatch.setattr(cache, "write_atomic", full_disk)
    assert main(["run", "--method", "fedavg", "--n-clients", "4", "--train-fraction", "0.01", "--rounds", "1",
                 "--local-epochs", "1"]) == 0
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "kept in" in last and str(tmp_path / "rescue") in last and "computed and cached" not in last


def test_a_full_disk_during_a_checkpoint_keeps_the_last_one_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    import errno
    import os

    from fedlib import checkpoint

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=4, local_epochs=1)
    whole = ex.run(cfg, cache=False, progress=False)
    writes = {"n": 0}
    real_fdopen = os.fdopen

    def fdopen(fd, mode="r", *a, **k):
        name = os.readlink(f"/proc/self/fd/{fd}")
        f = real_fdopen(fd, mode, *a, **k)
        if "w" in mode and name.endswith(".ckpt"):
            writes["n"] += 1
            if writes["n"] >= 2:  # the first checkpoint is written, the later ones meet a full disk
                f.close()
                raise OSError(errno.ENOSPC, "No space left on device")
        return f

    monkeypatch.setattr(checkpoint.os, "fdopen", fdopen)
    seen = []
    real_save = checkpoint.save
    monkeypatch.setattr(checkpoint, "save", lambda target, *a, **kw: seen.append(
        target.read_bytes() if target.exists() else None) or real_save(target, *a, **kw))
    res = ex.run(cfg, progress=False)
    assert res["rounds"]["acc_mean"] == whole["rounds"]["acc_mean"]
    assert "could not write the checkpoint" in capsys.readouterr().err
    assert seen[1] is not None and seen[-1] == seen[1]  # the first checkpoint stayed as it was written


def test_temporaries_a_killed_checkpoint_write_left_are_removed(tmp_path, monkeypatch):
    import os
    import time

    from fedlib import checkpoint

    folder = tmp_path / "fedavg"
    folder.mkdir()
    old = folder / ".tmp-abc.ckpt"
    old.write_bytes(b"x" * 10)
    os.utime(old, (time.time() - 2 * cache.STALE_SECONDS,) * 2)
    fresh = folder / ".tmp-def.ckpt"
    fresh.write_bytes(b"y")
    assert checkpoint.load(folder / "k.ckpt", None) is None
    assert not old.exists() and fresh.exists()


def test_a_federation_too_large_for_the_memory_is_refused_before_any_model_is_built(monkeypatch):
    """Before: `--n-clients 5000` with the full model failed deep in the allocator, naming no setting."""
    import pytest

    from fedlib import experiments

    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1)
    monkeypatch.setattr(experiments, "memory_limit", lambda device: (10_000, "a machine of 10 kB"))
    built = []
    monkeypatch.setattr(experiments, "_population", lambda *a: built.append(a))
    with pytest.raises(ValueError, match=r"4 clients of the model .* lower Config.n_clients"):
        experiments.setup(cfg)
    assert built == []


def test_the_memory_check_reads_the_processs_own_limit(monkeypatch):
    """Before, the check compared with the machine's memory only: under `ulimit -v` a run too large for the limit
    failed in the allocator. Now RLIMIT_AS counts where it is lower, and the message says which it was."""
    import resource

    import torch

    from fedlib import experiments

    monkeypatch.setattr(resource, "getrlimit", lambda what: (2 ** 20, resource.RLIM_INFINITY))
    assert experiments.memory_limit(torch.device("cpu")) == (2 ** 20, "this process's limit (ulimit -v)")
    monkeypatch.setattr(resource, "getrlimit", lambda what: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    assert experiments.memory_limit(torch.device("cpu"))[1] == "this machine's memory"


def test_a_cached_run_computes_on_one_thread_whatever_the_callers_count(monkeypatch):
    """Before, `fedlib run` and a sweep in the kernel computed with torch's default thread count while the slots, the
    pool and the check used one, and some CPU kernels sum in a thread-count dependent order (FedRD's smoke Table I:
    33.90% on one thread, 43.32% on two): the same key could hold either number. Now a cached run computes with
    `cached_threads()` (FEDLIB_THREADS, else 1), says so in its result, and gives the caller its count back; a run
    outside the cache keeps the caller's."""
    import torch

    seen = []
    real = ex._rounds
    monkeypatch.setattr(ex, "_rounds", lambda *a, **kw: (seen.append(torch.get_num_threads()), real(*a, **kw))[1])
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        res = ex.run(_cfg(seed=7), progress=False)
        assert seen == [1] and res["threads"] == 1 and torch.get_num_threads() == 2
        ex.run(_cfg(seed=7), cache=False, progress=False)
        assert seen == [1, 2]  # a run outside the cache (a benchmark): the caller's count
        monkeypatch.setenv("FEDLIB_THREADS", "2")
        assert ex.run(_cfg(seed=8), progress=False)["threads"] == 2 and seen[-1] == 2
        monkeypatch.setenv("FEDLIB_THREADS", "two")
        with pytest.raises(ValueError, match="FEDLIB_THREADS"):
            ex.run(_cfg(seed=9), progress=False)
    finally:
        torch.set_num_threads(before)


def test_whether_data_are_here_is_kept_per_data_folder(tmp_path, monkeypatch):
    """`experiments.data_here` kept its answer per dataset for the whole process: one found under another FEDLIB_DATA
    was served after the folder was set back. The answer is kept per data folder now. (The test command's failure
    that showed it: a test patched `dataset_available` and asked, and its "MNIST is not here" stayed for the tests
    after it in its worker; tests/conftest.py clears the answers after every test.)"""
    import os

    monkeypatch.setattr(ex, "dataset_available", lambda d: os.environ.get("FEDLIB_DATA") != str(tmp_path))
    ex.data_here.cache_clear()
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    assert ex.data_here("mnist") is False
    monkeypatch.delenv("FEDLIB_DATA")
    assert ex.data_here("mnist") is True
