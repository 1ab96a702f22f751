"""Runs shipped from another device type: a GPU run read on a CPU (archive.find_run, cache.load), counted as
shipped (accounting.coverage), replayed only on its own device type (`fedlib check`), and a paired verdict over runs of
two device types says so (claims.devices_note). A GPU run is simulated by relabelling a CPU run."""
from dataclasses import replace

import pytest

from fedlib import archive, cache, data, freshness, papers, provenance
from fedlib import claims as rules
from fedlib import experiments as ex
from fedlib.__main__ import where_it_came_from
from fedlib.papers import accounting, fedcr, fedlog
from fedlib.papers.fedcr import claims as fedcr_claims
from fedlib.result import Result

import script_module

pytestmark = pytest.mark.usefixtures("cpu_keys")  # this machine is the CPU, on a GPU machine too


def _tiny(seed=0):
    return fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=2, local_epochs=1, seed=seed)


def _as_if_made_on_a_gpu(result: dict, cfg) -> dict:
    """The same result as a GPU machine of this processor kind would ship it (its key and device are CUDA's)."""
    return {**result, "key": cfg.key("cuda"), "device": "cuda",
            "code": {**result["code"], "machine": provenance.machine(), "gpu": "NVIDIA H200"}}


@pytest.fixture
def shipped_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    return tmp_path / "archive"


def test_a_run_shipped_from_a_gpu_is_read_on_a_cpu_without_computing_and_is_not_cached_as_a_cpu_run(shipped_dir,
                                                                                                     monkeypatch):
    cfg = _tiny()
    made = _as_if_made_on_a_gpu(ex.run(cfg, cache=False, progress=False), cfg)
    archive.write(shipped_dir / "runs.jsonl.gz", [made])
    assert cfg.key("cuda") != cfg.key() and archive.find(cfg.method, cfg.key()) is None
    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: (_ for _ in ()).throw(AssertionError("recomputed")))
    got = ex.run(cfg, progress=False)
    assert got["device"] == "cuda" and got["rounds"] == made["rounds"] and got.saved_to is None
    assert not cache.path(cfg).exists()  # not filed under the CPU's key
    assert where_it_came_from(cfg, got, cached=True).startswith("from archive/: the run shipped from a cuda machine")
    assert ex.is_cached(cfg)
    assert archive.find_run(replace(cfg, device="cpu")) is None  # a config that names its device: only runs made there
    assert archive.find_run(replace(cfg, seed=1)) is None


def test_a_run_made_on_this_device_type_comes_first(shipped_dir):
    cfg = _tiny()
    here = ex.run(cfg, cache=False, progress=False)
    gpu = _as_if_made_on_a_gpu(here, cfg)
    gpu["rounds"] = {**gpu["rounds"], "acc_mean": [0.5, 0.5]}
    archive.write(shipped_dir / "runs.jsonl.gz", [gpu, here])
    assert archive.find_run(cfg)["device"] == "cpu" and cache.load(cfg)["rounds"] == here["rounds"]
    assert cache.path(cfg).exists()  # a run made here is copied into the cache, as before


def test_coverage_counts_a_run_shipped_from_a_gpu(monkeypatch):
    n1 = papers.RUN_SETS["fedcr_table2_n1"]
    first = n1.runs()[0][1]
    monkeypatch.setattr(archive, "find", lambda method, key: {"key": key} if key == first.key("cuda") else None)
    line = next(line for line in accounting.coverage(costs={})[n1.notebook]["lines"] if line.startswith(n1.name))
    assert f"1 of {len(n1.runs())} runs shipped" in line


def test_the_check_replays_only_runs_made_on_this_device_type_and_names_the_others(shipped_dir):
    runs = [ex.run(_tiny(s), cache=False, progress=False) for s in range(2)]
    gpu = _as_if_made_on_a_gpu(runs[1], _tiny(1))
    gpu["rounds"] = {**gpu["rounds"], "acc_mean": [a + 0.02 for a in gpu["rounds"]["acc_mean"]]}  # a GPU's rounding
    archive.write(shipped_dir / "runs.jsonl.gz", [runs[0], gpu])
    notes = []
    assert freshness.check(rounds=2, per_file=2, notes=notes) == []
    assert notes == ["1 shipped run made on cuda not replayed here: a cuda machine replays it "
                     "(FEDLIB_DEVICE=cuda python -m fedlib check)"]
    archive.write(shipped_dir / "runs.jsonl.gz", [{**runs[0], "rounds": gpu["rounds"]}], replace=True)  # a CPU run that moved
    assert len(freshness.check(rounds=2, per_file=2)) == 1


def test_a_gpu_run_from_a_host_of_this_processor_kind_is_not_compared_bit_for_bit():
    cfg = _tiny()
    made = _as_if_made_on_a_gpu(ex.run(cfg, cache=False, progress=False), cfg)
    made["rounds"] = {**made["rounds"], "loss": [x * (1 + 1e-4) for x in made["rounds"]["loss"]]}
    assert made["code"]["machine"] == provenance.machine()
    assert freshness.differences(made) == []  # within the tolerance: another device type rounds differently
    here = {**made, "device": "cpu", "code": {k: v for k, v in made["code"].items() if k != "gpu"}}
    assert [line.split(":")[0] for line in freshness.differences(here)] == ["loss of round 0", "loss of round 1"]


def test_a_paired_verdict_over_runs_of_two_device_types_says_so():
    def runs(finals, device):
        return [Result({"config": {"method": "x", "n_clients": 2}, "final": {"acc_mean": f / 100}, "device": device,
                        "rounds": {"acc_mean": [f / 100]}}) for f in finals]

    assert rules.devices_note({"FedCR": runs([90], "cpu"), "FedRep": runs([80], "cpu")}) == ""
    by_label = {"FedCR": runs([90, 91, 92], "cpu"), "FedAvg": runs([80, 81, 79], "cpu"),
                "FedRep": runs([85, 84], "cuda") + runs([86], "cpu")}
    ledger = rules.ClaimsLedger("06_test", "quick")
    fedcr_claims.beats_the_strongest_baseline(ledger, by_label, "n1", ["FedAvg", "FedRep"],
                                              fedcr.TABLE2[("fashion_mnist", "n1")], 250)
    mixed = "runs on different devices: FedCR on cpu, FedRep on cpu and cuda"
    # FedRep is the strongest: FedAvg-FT's row follows, FedRep's own would repeat the first
    assert ledger.rows[0].note.startswith("the strongest baseline run: FedRep; not run: ")
    assert ledger.rows[0].note.endswith(f"; {mixed}") and ledger.rows[1].note == ""
    fedcr_claims.reproduces_table2(ledger, by_label, "n1", ["FedRep", "FedCR"], fedcr.TABLE2[("fashion_mnist", "n1")],
                                   fedcr.TABLE10_SPREAD[("fashion_mnist", "n1")], 250)
    notes = [r.note for r in ledger.rows[2:]]  # one equivalence row each: FedRep (its rate's note first), FedCR
    assert notes[0].endswith("; runs on different devices: FedRep on cpu and cuda") and notes[1] == ""


def test_an_archive_file_packed_on_a_gpu_is_merged_keeping_the_runs_shipped_here(tmp_path, monkeypatch, capsys):
    """scripts/gpu_check.sh's paper part packs on the GPU machine; `paper_runs.py SET --merge FILE` adds its runs
    of SET here, keeping the runs this archive file already holds (the CPU's slots ship into it meanwhile)."""
    import sys
    from dataclasses import asdict

    paper_runs = script_module.load("paper_runs")
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    n1 = papers.RUN_SETS["fedcr_table2_n1"]
    (_, cfg0), (_, cfg1) = n1.runs()[:2]
    stub = {"rounds": {"acc_mean": [0.5] * cfg1.rounds}, "client_acc": [], "device": "cuda", "code": {}}
    brought = tmp_path / "brought.jsonl.gz"
    archive.write(brought, [{**stub, "config": asdict(cfg1), "key": cfg1.key("cuda")},
                            {**stub, "config": {**asdict(cfg1), "seed": 7}, "key": "0123456789abcdef"}])
    target = tmp_path / "archive" / n1.archive_file
    archive.write(target, [{**stub, "device": "cpu", "config": asdict(cfg0), "key": cfg0.key()}])
    monkeypatch.setattr(sys, "argv", ["paper_runs.py", n1.name, "--merge", str(brought)])
    paper_runs.main()
    said = capsys.readouterr()
    assert "1 runs of" in said.err and "left out" in said.err
    assert f"1 of {len(n1.runs())} runs of {n1.name} in {brought}: 1 new, 0 replaced, 0 identical" in said.out
    assert sorted(r["key"] for r in archive.read(target)) == sorted([cfg0.key(), cfg1.key("cuda")])
    monkeypatch.setattr(sys, "argv", ["paper_runs.py", n1.name, "--merge", str(tmp_path / "none.gz")])
    with pytest.raises(SystemExit, match="is not a file"):
        paper_runs.main()
