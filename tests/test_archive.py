import pytest

from fedlib import archive, cache, data
from fedlib import experiments as ex
from fedlib.papers import fedlog


def _tiny(seed=0):
    return fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1, seed=seed)


def test_shipped_runs_fill_the_cache_and_nothing_is_recomputed(tmp_path, monkeypatch):
    results = [ex.run(_tiny(s), cache=False, progress=False) for s in range(2)]
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    target = tmp_path / "archive" / "runs.jsonl.gz"
    archive.write(target, results[:1])
    archive.write(target, results)  # merged, one line per run
    first = target.read_bytes()
    archive.write(target, results[::-1])
    assert target.read_bytes() == first and len(archive.read(target)) == 2  # same runs, same bytes
    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    got = ex.run(_tiny(1), progress=False)
    assert got["rounds"] == results[1]["rounds"] and cache.path(_tiny(1)).exists()


def test_a_shorter_run_is_read_as_the_first_rounds_of_a_shipped_longer_run(tmp_path, monkeypatch):
    from fedlib import algorithms, sweep

    def tiny(rounds, **kw):
        return fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, local_epochs=1, rounds=rounds,
                                  **kw)

    long = ex.run(tiny(3), cache=False, progress=False)
    short = ex.run(tiny(2), cache=False, progress=False)
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    archive.write(tmp_path / "archive" / "runs.jsonl.gz", [long])
    assert archive.longer(tiny(2))["key"] == long["key"]
    assert archive.longer(tiny(2, seed=1)) is None and archive.longer(tiny(3)) is None  # another seed; not longer
    assert archive.longer(tiny(2, lr=0.02)) is None  # another config

    report = sweep.run_sweep([tiny(2)], backend="local", progress=False, shipped_prefixes=True)
    got = report.results[0]
    assert report.computed == 0 and got["first_rounds_of"] == {"key": long["key"], "rounds": 3}
    assert {k: v for k, v in got["rounds"].items() if k != "seconds"} == \
        {k: v for k, v in short["rounds"].items() if k != "seconds"}  # exactly the shorter run's numbers
    assert got["key"] == tiny(2).key() and got["config"]["rounds"] == 2
    assert not cache.path(tiny(2)).exists()  # not cached: it lacks the last round's per-client accuracies

    for computed in (tiny(2, final_finetune_epochs=1),  # a fine-tune after round 2 is not in the longer run
                     tiny(2, seed=1)):                   # nothing longer shipped
        assert sweep.run_sweep([computed], backend="local", progress=False, shipped_prefixes=True).computed == 1
    assert sweep.run_sweep([tiny(2)], backend="local", progress=False).computed == 1  # only when asked for
    cache.path(tiny(2)).unlink()
    monkeypatch.setenv("FEDLIB_SHIPPED_PREFIXES", "0")  # the switch that computes them
    assert sweep.run_sweep([tiny(2)], backend="local", progress=False, shipped_prefixes=True).computed == 1
    monkeypatch.setenv("FEDLIB_SHIPPED_PREFIXES", "yes")
    with pytest.raises(ValueError, match="FEDLIB_SHIPPED_PREFIXES must be 0 or 1"):
        sweep.run_sweep([tiny(2)], backend="local", progress=False, shipped_prefixes=True)
    monkeypatch.delenv("FEDLIB_SHIPPED_PREFIXES")
    monkeypatch.setattr(algorithms.REGISTRY["fedavg"], "version", 99)  # a new version: the shipped run is stale
    assert archive.longer(tiny(2)) is None


def test_a_damaged_archive_file_is_named_and_blocks_nothing_else(tmp_path, monkeypatch, capsys):
    # before: a truncated archive/*.jsonl.gz or one bad line made every uncached run fail with a bare EOFError or
    # JSONDecodeError naming no file
    import gzip

    from fedlib import archive

    good = ex.run(_tiny(), cache=False, progress=False)
    archive.write(tmp_path / "good.jsonl.gz", [good])
    data = (tmp_path / "good.jsonl.gz").read_bytes()
    (tmp_path / "truncated.jsonl.gz").write_bytes(data[:len(data) // 2])
    with gzip.open(tmp_path / "badline.jsonl.gz", "wt") as f:
        f.write('{"config": {"method": "fedavg"}, "key": "k2", "rounds": {"acc_mean": [0.5]}}\n{"config": tru\n')
    monkeypatch.setattr(archive, "folder", lambda: tmp_path)
    archive._index.cache_clear()
    try:
        assert archive.find("fedavg", good["key"]) == good and archive.find("fedavg", "k2") is None
        err = capsys.readouterr().err
        assert "truncated.jsonl.gz is damaged" in err and "badline.jsonl.gz, line 2" in err
    finally:
        archive._index.cache_clear()


def _fake(method, key, rounds=1):
    return {"config": {"method": method}, "key": key, "rounds": {"acc_mean": [0.5] * rounds}}


def _pack_many(path, prefix, n):
    for i in range(n):
        archive.write(path, [_fake("fedavg", f"{prefix}{i:03d}")])


def test_two_packing_jobs_at_once_keep_each_others_runs(tmp_path):
    import multiprocessing

    path = tmp_path / "set_paper.jsonl.gz"
    ctx = multiprocessing.get_context("fork")
    jobs = [ctx.Process(target=_pack_many, args=(path, p, 25)) for p in ("a", "b")]
    for j in jobs:
        j.start()
    for j in jobs:
        j.join()
    keys = {r["key"] for r in archive.read(path)}
    assert keys == {f"{p}{i:03d}" for p in "ab" for i in range(25)}


def test_a_write_killed_midway_leaves_the_old_archive_whole_and_no_temporary(tmp_path, monkeypatch):
    import os

    path = tmp_path / "set_paper.jsonl.gz"
    archive.write(path, [_fake("fedavg", "k1")])
    before = path.read_bytes()

    def killed(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        archive.write(path, [_fake("fedavg", "k2")])
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


def test_packing_into_a_damaged_archive_says_how_to_restore_it_and_writes_nothing(tmp_path):
    path = tmp_path / "set_paper.jsonl.gz"
    path.write_bytes(b"\x1f\x8b not gzip")
    with pytest.raises(archive.ArchiveError, match="git checkout -- set_paper.jsonl.gz"):
        archive.write(path, [_fake("fedavg", "k1")])
    assert path.read_bytes() == b"\x1f\x8b not gzip"


@pytest.mark.parametrize("hollow", [{"config": {"method": "fedavg"}, "rounds": {}},
                                    {"config": {}, "rounds": {"acc_mean": [0.1]}},
                                    {"config": {"method": "fedavg"}, "rounds": {"acc_mean": [0.1], "loss": []}}])
def test_a_cache_entry_that_parses_but_holds_no_result_is_never_served(tmp_path, monkeypatch, hollow):
    import json

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    cfg = _tiny()
    p = cache.path(cfg)
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(hollow))
    assert cache.load(cfg) is None and (p.parent / (p.name + ".damaged")).exists()
    bad = tmp_path / "x_paper.jsonl.gz"
    archive.write(bad, [])
    import gzip

    with gzip.open(bad, "wt") as f:
        f.write(json.dumps({**hollow, "key": "k"}) + "\n")
    with pytest.raises(archive.ArchiveError, match="not a run"):
        archive.read(bad)


def test_an_archive_written_atomically_keeps_the_permissions_of_a_plain_write(tmp_path):
    import os

    path = tmp_path / "set_paper.jsonl.gz"
    archive.write(path, [_fake("fedavg", "k1")])
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600


def test_a_damaged_archive_is_named_on_the_terminal_before_any_notebook_runs(tmp_path):
    """run_all.sh runs `python -m fedlib.archive` before the notebooks; a damaged file was named only inside the
    executed notebook (its kernel's stderr), never where the command was typed."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    root = Path(archive.__file__).resolve().parent.parent
    shutil.copytree(root / "fedlib", tmp_path / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root / "pyproject.toml", tmp_path)
    (tmp_path / "archive").mkdir()
    archive.write(tmp_path / "archive" / "good_paper.jsonl.gz", [_fake("fedavg", "k1")])
    (tmp_path / "archive" / "bad_paper.jsonl.gz").write_bytes(b"\x1f\x8b not gzip")
    done = subprocess.run([sys.executable, "-m", "fedlib.archive"], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "bad_paper.jsonl.gz" in done.stderr and "git checkout -- bad_paper.jsonl.gz" in done.stderr
    assert "good_paper" not in done.stderr
    script = (root / "run_all.sh").read_text()
    assert -1 < script.index("-m fedlib.archive") < script.index("fedlib.notebook_run")


class _Payload:
    """Pickles to a call of os.system that only touches a marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        import os

        return os.system, (f"touch {self.marker}",)


def test_a_payload_planted_in_a_cache_entry_or_an_archive_runs_nothing(tmp_path, monkeypatch):
    """The two JSON file kinds, with a pickle inside where a result should be: read as JSON, refused, no marker.
    (Claims CSVs, checkpoints and data files have their own planted-payload tests.)"""
    import gzip
    import pickle

    marker = tmp_path / "ran"
    body = pickle.dumps({"result": _Payload(marker)})
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    cfg = _tiny()
    p = cache.path(cfg)
    p.parent.mkdir(parents=True)
    p.write_bytes(body)
    assert cache.load(cfg) is None
    shipped = tmp_path / "x_paper.jsonl.gz"
    with gzip.open(shipped, "wb") as f:
        f.write(body)
    with pytest.raises(archive.ArchiveError):
        archive.read(shipped)
    assert archive.damaged(tmp_path) and not marker.exists()


def test_a_line_too_long_to_read_is_a_damaged_file_named_and_left_out(tmp_path, monkeypatch, capsys):
    """Before: one archive line holding a 5000-digit integer stopped every `fedlib run` with a traceback that named no
    file (Python's limit on integer strings is a ValueError, not a JSON error)."""
    import gzip

    monkeypatch.setattr(archive, "folder", lambda: tmp_path)
    archive._index.cache_clear()
    bad = tmp_path / "bad_paper.jsonl.gz"
    with gzip.open(bad, "wt") as f:
        f.write('{"key": ' + "9" * 5000 + "}\n")
    with pytest.raises(archive.ArchiveError, match="bad_paper.jsonl.gz, line 1: not a run"):
        archive.read(bad)
    assert archive.find("fedavg", "x") is None and "bad_paper.jsonl.gz" in capsys.readouterr().err
    archive._index.cache_clear()


def test_a_shipped_config_with_a_field_today_has_not_is_not_a_longer_run(tmp_path, monkeypatch):
    """Before: `archive.longer` raised TypeError on an archive line whose config had an unknown field."""
    long = ex.run(_tiny(), cache=False, progress=False)
    long["config"] = {**long["config"], "rounds": 5, "a_field_from_elsewhere": 1}
    monkeypatch.setattr(archive, "folder", lambda: tmp_path)
    archive._index.cache_clear()
    archive.write(tmp_path / "runs.jsonl.gz", [long])
    assert archive.longer(_tiny()) is None
    archive._index.cache_clear()


def test_packing_never_truncates_or_follows_a_symlink_planted_as_the_lock_file(tmp_path):
    """Before: a symlink named archive/.<file>.lock made `paper_runs.py SET --pack` truncate its target to 0 bytes."""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    folder = tmp_path / "archive"
    folder.mkdir()
    (folder / ".runs.jsonl.gz.lock").symlink_to(outside)
    with pytest.raises(archive.ArchiveError, match="symlink"):
        archive.write(folder / "runs.jsonl.gz", [ex.run(_tiny(), cache=False, progress=False)])
    assert outside.read_text() == "keep me" and not (folder / "runs.jsonl.gz").exists()


def test_a_run_stored_under_another_runs_key_or_with_numbers_not_finite_is_never_served(tmp_path, monkeypatch,
                                                                                        capsys):
    """Before: a cache entry or archive line was served for any key it was stored under, whatever its config
    said, and with NaN accuracies (a diverged run raises and is never saved: a NaN is an altered file)."""
    import copy
    import json

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    run0, run1 = (ex.run(_tiny(s), cache=False, progress=False) for s in range(2))
    p = cache.path(_tiny(0))
    p.parent.mkdir(parents=True)
    p.write_text(json.dumps(run1))  # seed 1's run under seed 0's name
    assert cache.load(_tiny(0)) is None and (p.parent / (p.name + ".damaged")).exists()
    assert f"its config is that of run {run1['key']}, not of run {run0['key']}" in capsys.readouterr().err
    nan = copy.deepcopy(run0)
    nan["rounds"]["acc_mean"][0] = float("nan")
    p.write_text(json.dumps(nan))
    assert cache.load(_tiny(0)) is None and "its acc_mean is not finite" in capsys.readouterr().err
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    archive._index.cache_clear()
    try:
        archive.write(tmp_path / "archive" / "set_paper.jsonl.gz", [{**run1, "key": run0["key"]}, run1])
        assert archive.find("fedavg", run1["key"]) == run1 and archive.find("fedavg", run0["key"]) is None
        assert f"is left out: its config is that of run {run1['key']}" in capsys.readouterr().err
    finally:
        archive._index.cache_clear()


def test_a_merge_counts_new_replaced_and_identical_runs_and_refuses_damaged_or_silent_replacements(tmp_path):
    """Before, `paper_runs.py SET --merge FILE` replaced a shipped run with a copy whose acc_mean was all NaN, or all
    0.999, and said "1 of 9 runs added"; merging a file into itself said "9 of 9 added"."""
    import math

    import pytest

    from fedlib import experiments as ex

    cfg = ex.Config(method="fedavg", dataset="mnist", n_clients=4, train_fraction=0.005, rounds=2, local_epochs=1)
    run = dict(ex.run(cfg, cache=False, progress=False))
    target = tmp_path / "set_paper.jsonl.gz"
    assert archive.write(target, [run]).said() == "1 new, 0 replaced, 0 identical"
    assert archive.write(target, [run]).said() == "0 new, 0 replaced, 1 identical"  # a file merged into itself
    nan = {**run, "rounds": {**run["rounds"], "acc_mean": [math.nan] * 2}}
    with pytest.raises(archive.ArchiveError, match="not finite"):
        archive.refused([run, nan], target)  # what a pack or merge checks before it writes
    short = {**run, "rounds": {k: v[:1] for k, v in run["rounds"].items()}}
    with pytest.raises(archive.ArchiveError, match="one value per round"):
        archive.refused([short], target)
    other = {**run, "rounds": {**run["rounds"], "acc_mean": [0.999] * 2}}
    with pytest.raises(archive.ArchiveError, match="--replace"):
        archive.write(target, [other])
    assert archive.read(target)[0]["rounds"] == run["rounds"]  # nothing written
    said = archive.write(target, [other], replace=True)
    assert said.replaced == (f"fedavg seed 0 {run['key']}",) and archive.read(target)[0]["rounds"]["acc_mean"] == [0.999] * 2


def test_an_archive_that_inflates_beyond_its_cap_is_named_not_read_into_memory(tmp_path, monkeypatch):
    """Before, a 4.4 MB gzip inflating to 1 GB made every archive read use 2 GB (MemoryError under a limit)."""
    import gzip

    import pytest

    monkeypatch.setattr(archive, "MAX_LINE", 1000)
    bomb = tmp_path / "bomb_paper.jsonl.gz"
    with gzip.open(bomb, "wt") as f:
        f.write("x" * 10_000 + "\n")
    with pytest.raises(archive.ArchiveError, match="bomb_paper.jsonl.gz, line 1: longer than"):
        archive.read(bomb)
    monkeypatch.setattr(archive, "MAX_LINE", 10 ** 6)
    monkeypatch.setattr(archive, "MAX_FILE", 5000)
    with gzip.open(bomb, "wt") as f:
        f.write((" " * 900 + "\n") * 10)
    with pytest.raises(archive.ArchiveError, match="inflates to more than"):
        archive.read(bomb)
