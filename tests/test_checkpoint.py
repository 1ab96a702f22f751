"""Runs that survive a kill: a run killed mid-way resumes from its checkpoint to a bit-identical result."""
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fedlib import algorithms, cache, checkpoint
from fedlib import experiments as ex
from fedlib.papers import fedcr, fedlog

TIMING = ("seconds",)


def _config(kind):
    if kind == "fedavg":  # dropout: torch's global generator must be restored
        return fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=6, local_epochs=1)
    if kind == "ditto":  # two populations, partial participation, a final round through the ledger
        return fedlog.paper_config("mnist", "ditto", model="cnn_mnist_nodrop", n_clients=6, train_fraction=0.01,
                                  rounds=6, local_epochs=1, participation=0.5, final_finetune_epochs=1,
                                  optimizer="sgd", lr=0.05)
    if kind.startswith("fedlog_"):  # a DP run: the mechanism's noise generator is part of the state
        dp = kind.removeprefix("fedlog_")
        opts = {"dp": dp, "epsilon": 5.0, "delta": 1e-5, "clip_b": 2.0}
        return fedlog.paper_config("mnist", "fedlog", n_clients=4, train_fraction=0.01, rounds=6, local_epochs=1,
                                   options=opts)
    return fedcr.config("mnist", "FedCR", "n1", seed=0, rounds=6, width=32, dim=8, n_clients=6,  # server state
                           train_fraction=0.01, local_epochs=1, participation=0.5)


CHILD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from test_checkpoint import _config
    from fedlib import experiments as ex
    real = ex.run_round
    def run_round(alg, rnd, ledger, *a):
        if rnd == 3:  # mid-run, after round 2's checkpoint: a kill no handler sees
            os.kill(os.getpid(), signal.SIGKILL)
        return real(alg, rnd, ledger, *a)
    ex.run_round = run_round
    ex.run(_config({kind!r}), progress=False)
""")


def _comparable(result):
    rounds = {k: v for k, v in result["rounds"].items() if k not in TIMING}
    return {**{k: v for k, v in result.items() if k not in ("wall_s", "cpu_s", "code", "rounds")}, "rounds": rounds}


@pytest.mark.parametrize("kind", ["fedavg", "ditto", "fedcr", "fedlog_local"])
def test_a_run_killed_mid_way_resumes_to_a_bit_identical_result(kind, tmp_path, monkeypatch):
    cfg = _config(kind)
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "whole"))
    whole = ex.run(cfg, progress=False)
    assert not checkpoint.path_for(cache.path(cfg)).exists()  # removed once the result is cached

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "killed"))
    env = {**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())}  # kernels round by thread count
    child = subprocess.run([sys.executable, "-c", CHILD.format(tests=os.path.dirname(__file__), kind=kind)], env=env,
                           capture_output=True, text=True)
    assert child.returncode == -9, child.stderr[-2000:]
    saved = checkpoint.path_for(cache.path(cfg))
    assert saved.exists() and not cache.path(cfg).exists()

    computed = []
    real = ex.run_round
    monkeypatch.setattr(ex, "run_round", lambda alg, rnd, ledger, *a: (computed.append(rnd), real(alg, rnd, ledger, *a))[1])
    beside = checkpoint.progress(saved)  # how far the killed run got, written beside its checkpoint
    assert (beside["next_round"], beside["rounds"]) == (3, 6) and beside["elapsed_s"] > 0
    resumed = ex.run(cfg, progress=False)
    assert computed[:3] == [3, 4, 5]  # rounds 0-2 came from the checkpoint
    assert not checkpoint.progress_path(saved).exists()  # removed with the checkpoint
    a, b = _comparable(resumed), _comparable(whole)
    assert {k: (a[k], b[k]) for k in a if a[k] != b[k]} == {}
    assert not saved.exists()


def _stopped_after_round_2(cfg, monkeypatch, before=lambda rnd: None) -> None:
    """Run `cfg` (FEDLIB_CHECKPOINT_SECONDS=0) and stop it as Ctrl-C does when round 3 begins, after round 2's
    checkpoint; `before(rnd)` runs ahead of each round. `ex.run_round` is the real one again after."""
    real = ex.run_round

    def stopped(alg, rnd, ledger, *a):
        before(rnd)
        if rnd == 3:
            raise KeyboardInterrupt
        return real(alg, rnd, ledger, *a)

    monkeypatch.setattr(ex, "run_round", stopped)
    with pytest.raises(KeyboardInterrupt):
        ex.run(cfg, progress=False)
    monkeypatch.setattr(ex, "run_round", real)
    assert checkpoint.path_for(cache.path(cfg)).exists()


def test_a_runs_processor_time_leaves_out_its_pauses_and_goes_on_over_a_resume(tmp_path, monkeypatch):
    """The cost of a run is its processor time (cpu_s), beside its wall time: a run paused (a slot stopped with SIGSTOP
    while the clean-clone suite ran) or slowed by other work read 3,264 s of wall time where its like took 808. The
    time a resumed run had taken before its checkpoint is counted, as the wall time's is."""
    import time

    cfg = _config("fedavg")
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))

    def work(rnd):  # before the checkpoint: half a second of the processor's time
        until = time.process_time() + 0.5 if rnd == 1 else 0
        while time.process_time() < until:
            pass

    _stopped_after_round_2(cfg, monkeypatch, work)
    real = ex.run_round

    def paused(alg, rnd, ledger, *a):
        if rnd == 4:
            time.sleep(0.5)  # wall time, no processor time
        return real(alg, rnd, ledger, *a)

    monkeypatch.setattr(ex, "run_round", paused)
    res = ex.run(cfg, progress=False)
    assert res["cpu_s"] >= 0.5  # the first part's work is counted
    assert res["wall_s"] - res["cpu_s"] >= 0.45  # the pause is not


def test_a_damaged_checkpoint_is_set_aside_and_the_run_starts_over(tmp_path, monkeypatch, capsys):
    cfg = _config("fedavg")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    saved = checkpoint.path_for(cache.path(cfg))
    saved.parent.mkdir(parents=True)
    saved.write_bytes(b"\x80\x05garbage")
    checkpoint.progress_path(saved).write_text('{"next_round": 4, "rounds": 6, "elapsed_s": 9.0}')
    assert checkpoint.progress(saved)["next_round"] == 4
    res = ex.run(cfg, progress=False)
    assert len(res["rounds"]["acc_mean"]) == cfg.rounds
    assert "not used" in capsys.readouterr().err and saved.with_name(saved.name + ".unused").exists()
    assert checkpoint.progress(saved) is None  # a progress that no checkpoint stands behind is gone with it


def test_the_checkpoint_interval_is_checked():
    os.environ["FEDLIB_CHECKPOINT_SECONDS"] = "soon"
    try:
        with pytest.raises(ValueError, match="FEDLIB_CHECKPOINT_SECONDS"):
            checkpoint.interval()
    finally:
        del os.environ["FEDLIB_CHECKPOINT_SECONDS"]


def test_a_checkpoint_writes_a_parameter_every_client_shares_once(tmp_path):
    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=20, train_fraction=0.02, rounds=1, local_epochs=1)
    ctx, alg = ex.setup(cfg)  # every client holds the same initial model
    from fedlib.messages import Ledger

    one = tmp_path / "one.ckpt"
    checkpoint.save(one, alg, {}, Ledger(), None, 1, 0.0)
    model_bytes = 4 * sum(v[0].numel() for v in ctx.population.groups[0].params.values())
    assert one.stat().st_size < 20 * model_bytes / 4  # far below 20 copies of the model


# ----------------------------------------------------------------------------------------------- no file runs code
class _Payload:
    """Pickles to a call of os.system that only touches a marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def _planted(cfg, tmp_path, monkeypatch, header: bytes):
    import pickle

    from fedlib import provenance

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    target = checkpoint.path_for(cache.path(cfg))
    target.parent.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "ran"
    body = pickle.dumps({"alg": _Payload(marker), "fingerprint": provenance.fingerprint()})
    target.write_bytes(header + body)
    return target, marker


@pytest.mark.parametrize("header", ["current", "old"])
def test_a_crafted_checkpoint_runs_no_code_and_its_run_starts_again(tmp_path, monkeypatch, capsys, header):
    """A checkpoint in a shared results folder is a file anyone can write. One of the current format whose pickle
    calls os.system is refused unread by name; one of the older format (a bare pickle) is never unpickled."""
    from fedlib import provenance

    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=2, local_epochs=1)
    first = checkpoint.FORMAT + provenance.fingerprint().encode() + b"\n" + cfg.key().encode() + b"\n" \
        if header == "current" else b""
    target, marker = _planted(cfg, tmp_path, monkeypatch, first)
    res = ex.run(cfg, progress=False)
    assert not marker.exists()
    assert len(res["rounds"]["acc_mean"]) == 2 and not target.exists()
    said = capsys.readouterr().err
    assert ("refused unread" in said and "posix.system" in said.replace("os.system", "posix.system")) \
        if header == "current" else "older or unknown format" in said


# ------------------------------------------------------------------------------------ every method's state is written
def _every_method():
    """One tiny Config per method (each as its tests build it), and FedLog under each kind of DP: a run of any of
    them must be able to resume. Before: a DP run's checkpoint was refused as crafted (its noise mechanism's class)."""
    from fedlib.config import Config

    small = dict(n_clients=4, train_fraction=0.01, rounds=2, local_epochs=1)
    special = {"fednova", "fedprof", "fedcr", "fedcr_na", "feddm", "fedrd"}  # built below, as their tests build them
    out = {m: fedlog.paper_config("mnist", m, **small) for m in algorithms.REGISTRY if m not in special}
    out["fednova"] = fedlog.paper_config("mnist", "fednova", optimizer="sgd", lr=0.05, **small)
    out["fedprof"] = fedlog.paper_config("mnist", "fedprof", server_fraction=0.143, partition="dominant",
                                         optimizer="sgd", lr=0.01, **{**small, "n_clients": 8, "train_fraction": 0.02})
    for m in ("FedCR", "FedCR-NA"):
        out[fedcr.METHODS[m][0]] = fedcr.config("mnist", m, "n1", seed=0, width=16, dim=4, rounds=2, n_clients=4,
                                                 train_fraction=0.01, local_epochs=1)
    distill = dict(dataset="fashion_mnist", partition="dirichlet", dirichlet_alpha=0.1, n_clients=3,
                   train_fraction=0.01, pool_split=0.8, rounds=2, optimizer="adam", lr=0.01, batch_size=16,
                   local_epochs=1, options=dict(dpc=2, iterations=2, real_batch=8, server_epochs=1, server_batch=16))
    out["feddm"] = Config(method="feddm", model="convnet8", **distill)
    out["fedrd"] = Config(method="fedrd", model="fedrd_proj2_convnet8", **distill)
    for dp in ("local", "central", "formal"):
        opts = dict(dp=dp, epsilon=50.0, delta=1e-5, clip_b=2.0, **(dict(sgd_noise=1.0, sgd_clip=1.0)
                                                                     if dp == "formal" else {}))
        out[f"fedlog dp={dp}"] = fedlog.paper_config("mnist", "fedlog", options=opts, **small)
    return out


EVERY = _every_method()


def test_every_method_is_in_the_resume_test():
    assert {c.method for c in EVERY.values()} == set(algorithms.REGISTRY)


@pytest.mark.parametrize("name", sorted(EVERY))
def test_every_methods_checkpoint_is_read_back_and_goes_on_as_the_run_would(name, tmp_path):
    import numpy as np
    import random

    from fedlib.messages import Ledger
    from fedlib.rounds import run_round

    cfg = EVERY[name]
    ctx, alg = ex.setup(cfg)
    ledger = Ledger()
    run_round(alg, 0, ledger)
    target = tmp_path / "run.ckpt"
    assert checkpoint.save(target, alg, {}, ledger, None, 1, 0.0)
    rng = (torch.get_rng_state(), np.random.get_state(), random.getstate(),
           torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)
    state = checkpoint.load(target, ex.setup(cfg)[0])  # a fresh process's data, as a resumed run builds them
    assert state is not None and type(state["alg"]) is type(alg) and state["next_round"] == 1
    resumed = run_round(state["alg"], 1, state["ledger"])
    torch.set_rng_state(rng[0]), np.random.set_state(rng[1]), random.setstate(rng[2])
    if rng[3] is not None:  # on a GPU the run draws from CUDA's generator too
        torch.cuda.set_rng_state_all(rng[3])
    kept = run_round(alg, 1, ledger)
    assert torch.equal(resumed.loss, kept.loss)
    assert state["ledger"].up == ledger.up and state["ledger"].down == ledger.down


def test_a_run_resumed_on_another_kind_of_processor_says_so_and_where_it_began(tmp_path, monkeypatch, capsys):
    """Before: a resume printed nothing without progress bars (scripts/paper_runs.py), and a run begun on one
    kind of processor and finished on another recorded only the second, so the freshness check replayed its first
    rounds as if made here and compared them exactly."""
    from fedlib import freshness, provenance

    cfg = _config("fedavg")
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    monkeypatch.setattr(provenance, "machine", lambda: "x86_64-AVX512-GenuineIntel-6-207")
    _stopped_after_round_2(cfg, monkeypatch)
    monkeypatch.setattr(provenance, "machine", lambda: "x86_64-AVX2-AuthenticAMD-25-1")
    resumed = ex.run(cfg, progress=False)
    assert "resuming from its checkpoint after round 2" in capsys.readouterr().out
    assert resumed["code"]["machine"] == "x86_64-AVX2-AuthenticAMD-25-1"
    assert resumed["code"]["first_rounds_on"] == "x86_64-AVX512-GenuineIntel-6-207"
    assert not freshness._made_here(resumed, cfg)  # compared within the tolerance, not exactly


def test_a_checkpoint_copied_from_another_runs_is_refused_and_its_run_starts_again(tmp_path, monkeypatch, capsys):
    """Before, a checkpoint copied from another seed's run under this run's name was resumed ("resuming from its
    checkpoint after round 1") and the mixed result cached. A checkpoint names the key of its run, and is refused
    under another name."""
    import shutil

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    cfgs = [fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=2, local_epochs=1,
                                seed=s) for s in (0, 1)]
    source = checkpoint.path_for(cache.path(cfgs[1]))
    real = checkpoint.remove
    monkeypatch.setattr(checkpoint, "remove", lambda p: None)  # keep seed 1's last checkpoint after its run
    ex.run(cfgs[1], progress=False)
    monkeypatch.setattr(checkpoint, "remove", real)
    assert source.exists()
    shutil.copy(source, checkpoint.path_for(cache.path(cfgs[0])))
    fresh = ex.run(cfgs[0], cache=False, progress=False)
    got = ex.run(cfgs[0], progress=False)
    said = capsys.readouterr()
    assert "not to run" in said.err and "resuming" not in said.out + said.err
    assert got["rounds"]["acc_mean"] == fresh["rounds"]["acc_mean"]
