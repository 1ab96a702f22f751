import os

import pytest
import torch

from fedlib import archive, claims, engine, freshness, provenance
from fedlib import experiments as ex
from fedlib.papers import fedlog


def _tiny(seed):
    return fedlog.paper_config("mnist", "fedlog", n_clients=4, train_fraction=0.01, rounds=3, local_epochs=1, seed=seed)


def test_the_check_passes_on_fresh_runs_and_names_the_stale_ones_after_a_numeric_change(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    archive.write(tmp_path / "archive" / "runs.jsonl.gz", [ex.run(_tiny(s), cache=False, progress=False)
                                                          for s in range(2)])
    assert freshness.check(rounds=2) == []
    original = engine.masked_cross_entropy
    monkeypatch.setattr(engine, "masked_cross_entropy", lambda *a: original(*a) * (1 + 1e-6))  # a tiny change
    stale = freshness.check(rounds=2, every=True)  # `check --all`: every shipped run
    assert len(stale) == 2 and all("fedlog mnist" in line and "is stale" in line for line in stale)
    assert len(freshness.check(rounds=2)) == 1  # the default sample: this file's and this method's cheapest run


def test_a_replay_is_the_first_rounds_of_the_run():
    full = ex.run(_tiny(0), cache=False, progress=False)
    again = ex.replay(_tiny(0), 2)
    assert again["acc_mean"] == full["rounds"]["acc_mean"][:2] and again["up_bits"] == full["rounds"]["up_bits"][:2]
    assert torch.isfinite(torch.tensor(again["loss"])).all()


def test_the_shipped_runs_match_what_the_code_computes():
    """The default part of `python -m fedlib check`: the first two rounds of its stratified sample of shipped runs
    (every run set and every method at least once; `check --all` replays them all). It guarantees that no shipped
    number is stale for any set's setting or any method's code, as far as two rounds of one run each can show."""
    assert freshness.check(rounds=2) == []


def _shipped(key, method, seconds):
    return {"key": key, "config": {"method": method}, "rounds": {"seconds": seconds, "acc_mean": [0.1] * len(seconds)}}


def test_the_default_sample_holds_every_set_and_every_method_cheapest_first():
    files = {"a.jsonl.gz": [_shipped("k1", "fedavg", [9, 9, 9]), _shipped("k2", "fedlog", [1, 1, 50])],
             "b.jsonl.gz": [_shipped("k3", "fedavg", [2, 2]), _shipped("k4", "fedcr", [5, 5]),
                            _shipped("k5", "fedcr", [3, 3])],
             "c.jsonl.gz": []}
    picked = [(f, r["key"]) for f, r in freshness.sample(files, rounds=2)]
    # a's cheapest two rounds are fedlog's (2 s, though its third round is long), b's fedavg's; then fedcr's cheaper
    assert picked == [("a.jsonl.gz", "k2"), ("b.jsonl.gz", "k3"), ("b.jsonl.gz", "k5")]
    assert freshness.replay_cost({"rounds": {"acc_mean": [0.0] * 4}, "wall_s": 40.0}, 2) == 20.0  # pro rata


def test_the_cheap_notebooks_regenerate_their_committed_tables():
    assert freshness.regenerate() == []


def test_a_table_that_differs_is_named(tmp_path):
    new, old = tmp_path / "new", tmp_path / "old"
    for d, value in ((new, "0.9158"), (old, "0.9092")):
        (d / "claims").mkdir(parents=True)
        (d / "t.csv").write_text(f"method,acc\nFedLog,{value}\n")
        (d / "claims" / "c.csv").write_text("a,b\n1,2\n")
    assert freshness.compare_tables(new, old) == [f"{old / 't.csv'} differs from what the code computes now"]
    (new / "t.csv").write_text("method,acc\nFedLog,0.9092\n")
    assert freshness.compare_tables(new, old) == []


def test_made_on_another_processor_the_verdicts_are_compared(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path / "old"))
    ledger = claims.ClaimsLedger("04_x", "quick")
    ledger.record("FedLog", "Fig. A.2", "more Gaussian", 0.0153, 0.05, claims.comparison("<"), kind="claim", quote="q")
    assert claims.made_on(ledger.save()) == provenance.machine()  # the ledger says where its numbers were made
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path / "new"))
    again = claims.ClaimsLedger("04_x", "quick")
    again.record("FedLog", "Fig. A.2", "more Gaussian", 0.0109, 0.05, claims.comparison("<"), kind="claim",
                 quote="q")  # rounding moved it
    again.save()
    assert freshness.compare_verdicts(tmp_path / "new", tmp_path / "old") == []
    again.rows.clear()
    again.record("FedLog", "Fig. A.2", "more Gaussian", 0.06, 0.05, claims.comparison("<"), kind="claim",
                 quote="q")
    again.save()
    assert freshness.compare_verdicts(tmp_path / "new", tmp_path / "old") == [
        f"{tmp_path / 'old' / 'claims' / '04_x_quick.csv'}: \"more Gaussian\" (Fig. A.2) does not hold now, holds committed"]


def test_a_shipped_run_from_another_processor_is_compared_within_the_tolerance(monkeypatch):
    shipped = ex.run(_tiny(0), cache=False, progress=False)
    shipped["code"]["machine"] = "x86_64-AVX512"  # recorded before the vendor was: another kind
    assert freshness.differences(shipped) == []
    acc, loss = shipped["rounds"]["acc_mean"][1], shipped["rounds"]["loss"][0]
    shipped["rounds"]["acc_mean"][1] = acc + 0.002  # a prediction or two that another processor's rounding flips
    shipped["rounds"]["loss"][0] = loss * (1 + 1e-3)
    assert freshness.differences(shipped) == []
    shipped["code"]["machine"] = provenance.machine()  # made here: compared exactly
    assert [line.split(":")[0] for line in freshness.differences(shipped)] == ["acc_mean of round 1", "loss of round 0"]
    shipped["code"]["machine"] = "x86_64-AVX512"
    shipped["rounds"]["acc_mean"][1] = acc + 0.01  # more than rounding
    assert [line.split(":")[0] for line in freshness.differences(shipped)] == ["acc_mean of round 1"]


def test_the_provenance_columns_are_not_compared_but_the_numbers_are(tmp_path):
    new, old = tmp_path / "new", tmp_path / "old"
    for d, device in ((new, "cpu:x86_64-AVX2"), (old, "cpu:x86_64-AVX512")):
        d.mkdir()
        (d / "t.csv").write_text(f"method,acc,code,device\nFedLog,0.9,abc,{device}\n")
    assert freshness.compare_tables(new, old) == []
    (new / "t.csv").write_text("method,acc,code,device\nFedLog,0.8,xyz,cpu:x86_64-AVX512\n")
    assert freshness.compare_tables(new, old) == [f"{old / 't.csv'} differs from what the code computes now"]


def test_a_shipped_run_is_replayed_on_one_thread_as_paper_runs_are_made(monkeypatch):
    """FedRD's ladder runs, made single-threaded by the background slots, replayed with this machine's two threads
    differed by 0.4 points at round 0 (convolutions' backward sums in a thread-dependent order): stale, wrongly."""
    seen = []
    monkeypatch.setattr(freshness, "replay", lambda cfg, rounds: (seen.append(torch.get_num_threads()),
                                                                   ex.replay(cfg, rounds))[1])
    shipped = ex.run(_tiny(0), cache=False, progress=False)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert freshness.differences(shipped) == [] and seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def _tiny_fedrd():
    from fedlib.config import Config
    return Config(method="fedrd", model="fedrd_proj2_convnet8", dataset="fashion_mnist", partition="dirichlet",
                  dirichlet_alpha=0.1, n_clients=3, train_fraction=0.01, pool_split=0.8, rounds=2, optimizer="adam",
                  lr=0.01, batch_size=16, local_epochs=1,
                  options=dict(dpc=2, iterations=2, real_batch=8, server_epochs=1, server_batch=16))


def test_a_method_that_amplifies_rounding_is_compared_by_its_bits_on_another_processor(tmp_path, monkeypatch):
    """FedRD's ladder runs, made on an Intel AVX512 machine, replayed on an AMD AVX2 one with their own commit:
    1.8 points of round-0 accuracy apart, so CI on that machine read them as stale (the code had not changed)."""
    shipped = ex.run(_tiny_fedrd(), cache=False, progress=False)
    # another processor than this one: on the Intel machine itself the run counts as made here (CI on it failed)
    shipped["code"]["machine"] = next(m for m in ("x86_64-AVX512-GenuineIntel-6-207", "x86_64-AVX2-AuthenticAMD-25-1")
                                      if m != provenance.machine())
    shipped["rounds"]["acc_mean"][0] += 0.018  # what the other processor's rounding gave, the code unchanged
    shipped["rounds"]["loss"][0] *= 1.09
    assert freshness.differences(shipped) == []
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    archive.write(tmp_path / "archive" / "runs.jsonl.gz", [shipped])
    notes, tally = [], {}
    assert freshness.check(rounds=2, notes=notes, tally=tally) == []
    assert tally == {"runs.jsonl.gz": {"runs": 1, "replayed": 1, "bits_only": 1, "stale": 0}}  # checks.csv says so
    assert notes == [f"1 shipped fedrd run made on another kind of processor compared by the bits sent only: "
                     f"{freshness.AMPLIFIES_ROUNDING['fedrd']}; a machine of the kind that made it compares every number"]
    shipped["rounds"]["up_bits"][1] += 32  # a message that grew is a code change on any processor
    assert [line.split(":")[0] for line in freshness.differences(shipped)] == ["up_bits of round 1"]
    shipped["code"]["machine"] = provenance.machine()  # made here: every number, exactly
    assert {line.split(":")[0] for line in freshness.differences(shipped)} >= {"acc_mean of round 0", "loss of round 0"}


@pytest.mark.parametrize("method, acc, loss", [("fedpac", 0.033, 1.03), ("ditto", 0.008, 1.11)])
def test_fedpac_and_ditto_amplify_rounding_and_are_compared_by_their_bits_on_another_processor(method, acc, loss):
    """FedCR's Table 2 n1 runs of FedPAC and Ditto, made on AMD AVX-512 machines, replayed on an Intel AVX-512 one
    with the code unchanged: FedPAC 3.3 points of round-1 accuracy apart (the server's quadratic program and its 1e-3
    cut), Ditto 0.8 points and 11% of round 1's training loss (near chance), so the test command failed there
    (2026-12-07); on their own kind of processor every number is still compared exactly. Slow (about 5 s each: a run
    and its replay), so out of the fast lane."""
    shipped = ex.run(fedlog.paper_config("mnist", method, n_clients=4, train_fraction=0.01, rounds=2,
                                         local_epochs=1), cache=False, progress=False)
    shipped["code"]["machine"] = next(m for m in ("x86_64-AVX512-AuthenticAMD-25-17", "x86_64-AVX512-GenuineIntel-6-167")
                                      if m != provenance.machine())
    shipped["rounds"]["acc_mean"][1] += acc  # what the other processor's rounding gave
    shipped["rounds"]["acc_all"][1] += acc
    shipped["rounds"]["train_loss"][1] *= loss
    assert freshness.differences(shipped) == []
    shipped["rounds"]["down_bits"][1] += 32  # a message that grew is a code change on any processor
    assert [line.split(":")[0] for line in freshness.differences(shipped)] == ["down_bits of round 1"]
    shipped["code"]["machine"] = provenance.machine()
    assert {line.split(":")[0] for line in freshness.differences(shipped)} >= {"acc_mean of round 1"}


def test_replays_in_processes_find_what_one_process_finds_in_the_same_order():
    """`python -m fedlib check` replays its sample in one process per core (each on one thread, as the runs were
    made), beside the notebooks it regenerates: 8 min 42 s in one process before. The processes must find the
    same differences, in the order of the runs."""
    runs = [ex.run(_tiny(s), cache=False, progress=False) for s in range(3)]
    runs[1]["rounds"]["acc_mean"][1] += 0.01  # one run made stale, at its second round
    alone = freshness.replayed(runs, 2, workers=1)
    assert [bool(found) for found in alone] == [False, True, False] and "acc_mean of round 1" in alone[1][0]
    assert freshness.replayed(runs, 2, workers=2) == alone


def test_the_check_preloads_tcmalloc_into_its_processes_unless_ld_preload_is_set(monkeypatch, capsys):
    """`python -m fedlib check` ran its replays and notebooks on glibc's malloc: 5 min 19 s with 93 s of system time
    on an Intel 6-167 machine, 4 min 49 s and 20 s with tcmalloc preloaded (the same bits, as the paper runs'
    slots). Its processes inherit LD_PRELOAD where tcmalloc is installed; a set LD_PRELOAD (even empty) is kept."""
    from fedlib.__main__ import main

    seen = []
    monkeypatch.setattr(provenance, "tcmalloc_library", lambda: "/lib/libtcmalloc_minimal.so.4")
    monkeypatch.setattr(freshness, "regenerate", lambda names: seen.append(("notebooks", os.environ.get("LD_PRELOAD")))
                        or [])
    monkeypatch.setattr(freshness, "check", lambda *a, **k: seen.append(("replays", os.environ.get("LD_PRELOAD")))
                        or [])
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    assert main(["check"]) == 0
    assert sorted(seen) == [("notebooks", "/lib/libtcmalloc_minimal.so.4"), ("replays", "/lib/libtcmalloc_minimal.so.4")]
    assert "preload tcmalloc (/lib/libtcmalloc_minimal.so.4" in capsys.readouterr().out

    seen.clear()
    monkeypatch.setenv("LD_PRELOAD", "")  # glibc's, asked for
    assert main(["check"]) == 0
    assert sorted(seen) == [("notebooks", ""), ("replays", "")]
    monkeypatch.setattr(provenance, "tcmalloc_library", lambda: "")
    monkeypatch.delenv("LD_PRELOAD")
    assert freshness.preload_tcmalloc(os.environ) == "" and "LD_PRELOAD" not in os.environ  # not installed


def test_a_set_is_replayed_whole_alone_and_its_result_recorded(tmp_path, monkeypatch, capsys):
    """`fedlib check --all --set SET --record` (issue 93: replay a set whole before it is shipped, and record it):
    only SET's runs are replayed, and archive/checks.csv gets a row saying how many it holds, replayed and stale,
    under which code and processor; an unknown set is refused before any replay, naming the sets shipped. Slow
    (about 5 s): it computes three small runs and replays them, as the check does."""
    from fedlib.__main__ import main

    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    runs = [ex.run(_tiny(s), cache=False, progress=False) for s in range(3)]
    archive.write(tmp_path / "archive" / "one_paper.jsonl.gz", runs[:2])
    archive.write(tmp_path / "archive" / "two_paper.jsonl.gz", runs[2:])
    replayed_keys = []
    original = freshness.replayed
    monkeypatch.setattr(freshness, "replayed", lambda picked, *a: replayed_keys.extend(r["key"] for r in picked)
                        or original(picked, *a))
    tally = {}
    assert freshness.check(rounds=1, every=True, sets=["one"], tally=tally) == []
    assert sorted(replayed_keys) == sorted(r["key"] for r in runs[:2])
    assert tally == {"one_paper.jsonl.gz": {"runs": 2, "replayed": 2, "bits_only": 0, "stale": 0}}

    replayed_keys.clear()
    assert main(["check", "--all", "--set", "two_paper", "--record", "--rounds", "1", "--notebooks", "",
                 "--workers", "1"]) == 0
    assert replayed_keys == [runs[2]["key"]]
    rows = (tmp_path / "archive" / freshness.CHECKS_FILE).read_text().splitlines()
    assert rows[0].split(",") == list(freshness.CHECK_COLUMNS)
    row = dict(zip(freshness.CHECK_COLUMNS, rows[1].split(",")))
    assert (row["set"], row["which"], row["rounds"], row["runs"], row["replayed"], row["bits_only"], row["stale"]) \
        == ("two", "every", "1", "1", "1", "0", "0")
    assert row["code"] == provenance.fingerprint() and row["machine"] == provenance.machine()
    assert row["commit"].startswith(provenance.commit().get("commit", "")) and row["started"].startswith("20")

    outside = tmp_path / "outside.csv"  # a link planted where the record goes: refused, nothing written through it
    outside.write_text("theirs\n")
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / freshness.CHECKS_FILE).symlink_to(outside)
    with pytest.raises(Exception, match="symbolic link"):
        freshness.record({"x": {"runs": 1, "replayed": 1, "bits_only": 0, "stale": 0}}, "every", 1,
                         freshness.started(), path=planted / freshness.CHECKS_FILE)
    assert outside.read_text() == "theirs\n"

    replayed_keys.clear()
    assert main(["check", "--all", "--set", "one,three", "--notebooks", ""]) == 2
    err = capsys.readouterr().err
    assert "--set three: no such shipped run set" in err and "one, two" in err and replayed_keys == []
    assert len((tmp_path / "archive" / freshness.CHECKS_FILE).read_text().splitlines()) == 2  # nothing recorded
