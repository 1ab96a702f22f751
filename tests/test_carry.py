"""scripts/carry.py: a run killed mid-way on one machine resumes on a fresh one from the checkpoint carried through the
repository (issue 89: a session's machine is not kept, and the n2 runs are longer than a session)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from fedlib import checkpoint, paths
from fedlib import experiments as ex
from fedlib.papers import fedlog

import script_module

ROOT = paths.project_root()


def _script():
    return script_module.load("carry")


def _config():
    return fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=6, local_epochs=1)


CHILD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from test_carry import _config
    from fedlib import experiments as ex
    real = ex.run_round
    def run_round(alg, rnd, ledger, *a):
        if rnd == 4:  # mid-run, after round 3's checkpoint: the machine goes away
            os.kill(os.getpid(), signal.SIGKILL)
        return real(alg, rnd, ledger, *a)
    ex.run_round = run_round
    ex.run(_config(), progress=False)
""")


def _comparable(result):
    rounds = {k: v for k, v in result["rounds"].items() if k != "seconds"}
    return {**{k: v for k, v in result.items() if k not in ("wall_s", "cpu_s", "code", "rounds")}, "rounds": rounds}


def _here(monkeypatch, tmp_path):
    """The worktree argument: this checkout, whose fingerprint the child's checkpoint has (asked once, not in a child)."""
    from fedlib import provenance

    carry = _script()
    monkeypatch.setattr(carry, "fingerprint_of", lambda wt: (provenance.fingerprint(), "c0ffee" * 6 + "c0ff"))
    return carry


def test_a_run_killed_on_one_machine_resumes_on_the_next_from_the_carried_checkpoint(tmp_path, monkeypatch):
    """Slow (13 s: a whole run, a killed one in a child process, and its resume), so out of the fast lane; the only
    test that a checkpoint carried through the repository resumes to the uninterrupted run's numbers."""
    cfg = _config()
    monkeypatch.setenv("FEDLIB_CHECKPOINT_SECONDS", "0")
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "whole"))
    whole = ex.run(cfg, progress=False)

    first = tmp_path / "first_machine"
    monkeypatch.setenv("FEDLIB_RESULTS", str(first))
    env = {**os.environ, "OMP_NUM_THREADS": str(torch.get_num_threads())}
    child = subprocess.run([sys.executable, "-c", CHILD.format(tests=os.path.dirname(__file__))], env=env,
                           capture_output=True, text=True)
    assert child.returncode == -9, child.stderr[-2000:]
    carry = _here(monkeypatch, tmp_path)
    repo = tmp_path / "repo_in_progress"
    manifest = carry.carry_out(first, [ROOT], folder=repo)
    (name, entry), = manifest["runs"].items()
    assert entry["progress"]["next_round"] == 4 and entry["commit"].startswith("c0ffee")
    assert (repo / f"{name}.gz").exists() and json.loads((repo / "manifest.json").read_text()) == manifest

    second = tmp_path / "second_machine"  # nothing of the first machine but the repository's folder
    second.mkdir()
    assert carry.carry_in(second, folder=repo) == [name]
    assert carry.carry_in(second, folder=repo) == []  # already there, as far on: not written again
    monkeypatch.setenv("FEDLIB_RESULTS", str(second))
    computed = []
    real = ex.run_round
    monkeypatch.setattr(ex, "run_round", lambda alg, rnd, ledger, *a: (computed.append(rnd), real(alg, rnd, ledger, *a))[1])
    resumed = ex.run(cfg, progress=False)
    assert computed == [4, 5]  # rounds 0-3 came from the carried checkpoint
    a, b = _comparable(resumed), _comparable(whole)
    assert {k: (a[k], b[k]) for k in a if a[k] != b[k]} == {}

    assert carry.carry_in(second, folder=repo) == []  # the run is finished there: its checkpoint is not put back
    assert carry.carry_out(second, [ROOT], folder=repo)["runs"] == {}  # nothing in progress: nothing carried
    assert not repo.exists()


def _fake_checkpoint(results, key, written_by, next_round):
    target = results / "fedavg" / f"{key}.ckpt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(checkpoint.FORMAT + written_by.encode() + b"\n" + key.encode() + b"\npayload")
    checkpoint.progress_path(target).write_text(json.dumps({"next_round": next_round, "rounds": 9, "elapsed_s": 1}))
    return target


def test_carry_refuses_a_checkpoint_of_code_no_named_worktree_has_and_writes_nothing(tmp_path, monkeypatch):
    carry = _here(monkeypatch, tmp_path)
    _fake_checkpoint(tmp_path / "res", "a" * 16, "000000000000", 3)
    with pytest.raises(SystemExit, match="written by code 000000000000"):
        carry.carry_out(tmp_path / "res", [ROOT], folder=tmp_path / "repo")
    assert not (tmp_path / "repo").exists()


def test_carry_in_checks_every_digest_first_and_never_goes_back(tmp_path, monkeypatch):
    from fedlib import provenance

    carry = _here(monkeypatch, tmp_path)
    res, repo = tmp_path / "res", tmp_path / "repo"
    _fake_checkpoint(res, "a" * 16, provenance.fingerprint(), 3)
    _fake_checkpoint(res, "b" * 16, provenance.fingerprint(), 5)
    carry.carry_out(res, [ROOT], folder=repo)
    fresh = tmp_path / "fresh"
    further = _fake_checkpoint(fresh, "b" * 16, provenance.fingerprint(), 7)  # this machine got further: kept
    assert carry.carry_in(fresh, folder=repo) == [f"fedavg/{'a' * 16}.ckpt"]
    assert further.read_bytes().endswith(b"payload") and checkpoint.progress(further)["next_round"] == 7

    import gzip
    with gzip.open(repo / "fedavg" / f"{'b' * 16}.ckpt.gz", "wb") as f:  # a damaged carried file
        f.write(b"not it")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SystemExit, match="does not match its digest"):
        carry.carry_in(empty, folder=repo)
    assert not any(empty.rglob("*"))  # nothing restored, not even the good one


def test_the_command_needs_the_worktree_and_a_results_folder(tmp_path, capsys):
    carry = _script()
    with pytest.raises(SystemExit):
        carry.main(["out", str(tmp_path)])
    assert "out needs --worktree" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        carry.main(["in", str(tmp_path / "nowhere")])
    assert "is not a folder" in capsys.readouterr().err


def test_carry_in_refuses_a_manifest_name_outside_the_results_folder(tmp_path):
    """A crafted manifest could name ../../somewhere: only METHOD/KEY.ckpt is restored, and nothing at all otherwise."""
    carry = _script()
    repo, res = tmp_path / "repo", tmp_path / "res"
    (repo / "fedavg").mkdir(parents=True)
    res.mkdir()
    name = "../../escaped.ckpt"
    (repo / "manifest.json").write_text(json.dumps({"runs": {name: {"sha256": "0", "progress": None}}}))
    with pytest.raises(SystemExit, match="not METHOD/KEY.ckpt"):
        carry.carry_in(res, folder=repo)
    assert not (tmp_path / "escaped.ckpt").exists() and not any(res.rglob("*"))


def test_a_checkpoint_too_large_for_a_commit_is_left_out_and_named(tmp_path, monkeypatch, capsys):
    """Ditto's n2 checkpoints (a personal model for each of 100 clients) were 353 and 519 MB: `out` gzipped them into
    archive/in_progress/ for a commit. One over --max-mb is left out, named with the rounds a fresh machine loses,
    in the manifest too, so that `in` says it starts over; the others are carried."""
    from fedlib import provenance

    carry = _here(monkeypatch, tmp_path)
    res, repo = tmp_path / "res", tmp_path / "repo"
    _fake_checkpoint(res, "a" * 16, provenance.fingerprint(), 3)
    big = _fake_checkpoint(res, "b" * 16, provenance.fingerprint(), 87)
    big.write_bytes(big.read_bytes() + b"\0" * 2_000_000)
    made = carry.carry_out(res, [ROOT], folder=repo, max_mb=1)
    assert list(made["runs"]) == [f"fedavg/{'a' * 16}.ckpt"] and not (repo / "fedavg" / f"{'b' * 16}.ckpt.gz").exists()
    assert made["too_large"] == {f"fedavg/{'b' * 16}.ckpt": {"mb": 2.0, "progress": {"next_round": 87, "rounds": 9,
                                                                                      "elapsed_s": 1}}}
    monkeypatch.setattr(carry, "FOLDER", repo)
    assert carry.main(["out", str(res), "--worktree", str(ROOT), "--max-mb", "1"]) == 0
    out = capsys.readouterr().out
    assert f"not carried fedavg/{'b' * 16}.ckpt: 2 MB, over --max-mb 1" in out and "next round 87 of 9 lost" in out
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert carry.main(["in", str(fresh)]) == 0
    out = capsys.readouterr().out
    assert "restored 1 checkpoint(s)" in out and f"not carried (too large): fedavg/{'b' * 16}.ckpt" in out
    assert carry.carry_out(res, [ROOT], folder=repo)["too_large"] == {}  # under the default 80 MB: both carried
    assert not (carry.paths.project_root() / "archive" / "in_progress" / "fedavg" / f"{'a' * 16}.ckpt.gz").exists()
