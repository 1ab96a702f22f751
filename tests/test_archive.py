from fedlib import archive, cache, data, paper
from fedlib import experiments as ex


def _tiny(seed=0):
    return paper.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1, seed=seed)


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
