"""fedlib.papers.part: a notebook part declared once gives its runs at every profile, its paper-profile run set, its
command and its reading."""
from dataclasses import dataclass

import pytest

from fedlib import experiments as ex
from fedlib.papers import part


@dataclass(frozen=True)
class _Profile:
    seeds: tuple
    rounds: int


PROFILES = {"quick": _Profile(seeds=(0,), rounds=2), "paper": _Profile(seeds=(0, 1), rounds=3)}


def _circle(method, seed, rounds):
    return ex.Config(method=method, dataset="circle", model="mlp_flexible", n_clients=2, rounds=rounds,
                     local_epochs=2, batch_size=40, lr=0.05, same_init=False, seed=seed)


def _plan(profile, seeds):
    return {m: [_circle(m, s, profile.rounds) for s in seeds] for m in ("fedlog", "fedproto")}


SMALL = part.Part("small_set", "99_made_up", PROFILES, _plan, label=lambda m: f"{m} run", where=("Table 9",))


def test_a_part_gives_its_runs_at_each_profile_and_its_paper_run_set_seed_by_seed():
    assert [c.rounds for c in SMALL.configs("quick")] == [2, 2] and SMALL.seeds == (0, 1)
    assert [(lab, c.seed) for lab, c in SMALL.runs()] == [("fedlog run", 0), ("fedproto run", 0), ("fedlog run", 1),
                                                         ("fedproto run", 1)]
    assert {c.key() for _, c in SMALL.runs()} == {c.key() for c in SMALL.configs("paper")}
    assert [c.method for _, c in SMALL.runs([3], only=["fedproto run"])] == ["fedproto"]
    assert SMALL.command() == "scripts/paper_runs.py small_set --seeds 0-1" and SMALL.archive_file == \
        "small_set_paper.jsonl.gz"
    with pytest.raises(ValueError, match="unknown label.*choose from fedlog run, fedproto run"):
        SMALL.runs(only=["fedprox run"])
    with pytest.raises(ValueError, match="unknown profile 'papr'; choose one of quick, paper"):
        SMALL.plan("papr")
    assert hash(SMALL) == hash(part.Part("small_set", "99_made_up", {}, _plan, where=("Table 9",)))  # a dict key


def test_a_read_gives_each_key_or_none_and_names_what_is_missing_without_computing_it(monkeypatch, capsys):
    monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
    here = SMALL.plan("paper")["fedlog"]
    for cfg in here:
        ex.run(cfg, progress=False)  # cached, as shipped runs would be
    other = part.Part("other_set", "99_made_up", PROFILES, lambda p, seeds: {"a": _plan(p, seeds)["fedlog"]})
    read, again = part.read("paper", SMALL, other)
    assert read.results is again.results  # one sweep for both parts
    assert [r.curve().tolist() for r in read["fedlog"]] == [ex.run(c, progress=False).curve().tolist() for c in here]
    assert read["fedproto"] is None and read.missing() == ["fedproto"] and not read.whole()
    assert again.whole() and again.all()["a"][1]["config"]["seed"] == 1
    assert not any(ex.is_cached(c) for c in SMALL.plan("paper")["fedproto"])  # listed, not computed
    capsys.readouterr()
    assert read.all() is None
    said = capsys.readouterr().out
    assert "Table 9: not drawn, 1 of 2" in said and "scripts/paper_runs.py small_set --seeds 0-1" in said
    unpacked = part.Part("unpacked", "99_made_up", PROFILES, lambda p, seeds: {"b": _plan(p, seeds)["fedproto"]},
                         packed=False)
    assert "FEDLIB_PROFILE=paper ./run_all.sh 99 (no run set declares them)" in unpacked.read("paper").note()
    alone = part.Part("alone", "99_made_up", PROFILES,
                      lambda p, seeds: {"c": [_circle("fedproto", s + 10, p.rounds) for s in seeds]}, packed=False)
    two = part.read("paper", alone, SMALL)  # one sweep: each part's note names the command of its own runs only
    assert "small_set" not in two[0].note() and "scripts/paper_runs.py small_set" in two[1].note()
    assert part.first_whole(read, again) is again and part.first_whole(read) is None
    assert read.settings is PROFILES["paper"]


def test_a_run_set_holds_the_keys_its_part_names_in_the_order_of_its_stages():
    """FedRD's Table I part plans every dataset of a profile, while its run set holds FashionMNIST's only (`in_set`);
    its ladder's set runs the cheap averaging baselines first, then rung by rung, each seed by seed (`stage`), the
    order its pinned digest was taken in."""
    def plan(profile, seeds):
        return {(m, r): [_circle(m, s, r or 2) for s in seeds] for r in (None, 3, 1) for m in ("fedlog", "fedproto")}

    staged = part.Part("staged", "99_made_up", PROFILES, plan, label=lambda k: f"{k[0]} {k[1]}",
                       in_set=lambda k: k[1] != 1, stage=lambda k: k[1] or 0)
    assert [lab for lab, _ in staged.runs()] == ["fedlog None", "fedproto None", "fedlog None", "fedproto None",
                                                 "fedlog 3", "fedproto 3", "fedlog 3", "fedproto 3"]
    assert [c.seed for _, c in staged.runs()] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert len(staged.plan("paper")) == 6  # the notebook still reads the keys no set holds


def test_a_note_names_the_keys_asked_about(monkeypatch):
    monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
    read = SMALL.read("paper")
    note = read.note(["fedproto"], "Table 9 (fedproto)")
    assert note.startswith("Table 9 (fedproto): not drawn, 1 of 1 of its settings")
    assert read.each().keys() == {"fedlog", "fedproto"} and read.each()["fedproto"] is None


def test_a_quick_read_computes_what_is_missing():
    read = SMALL.read("quick")
    assert read.whole() and all(ex.is_cached(c) for c in SMALL.configs("quick"))


# The workbook's policy on computing (sweep.py's before issue 70): in the paper profile nothing is computed
def test_the_paper_profile_lists_missing_runs_instead_of_computing_them(monkeypatch):
    from fedlib.papers import fedlog

    cfgs = [fedlog.paper_config("mnist", "fedavg", rounds=3, seed=s) for s in (0, 1)]
    monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
    with pytest.raises(part.NotShipped, match=r"(?s)2 of 2 paper-profile runs.*scripts/paper_runs.py X"):
        part.require_shipped(cfgs, "paper", "scripts/paper_runs.py X")
    part.require_shipped(cfgs, "quick", "-")  # other profiles compute
    monkeypatch.setenv("FEDLIB_COMPUTE", "1")
    part.require_shipped(cfgs, "paper", "-")
    monkeypatch.setenv("FEDLIB_COMPUTE", "yes")
    with pytest.raises(ValueError, match="FEDLIB_COMPUTE"):
        part.require_shipped(cfgs, "paper", "-")


def test_runs_draws_what_is_shipped_and_marks_the_rest_without_computing_it(monkeypatch, capsys):
    """The paper profile of notebooks 06-08: the runs that are there are read, the others are listed, never
    computed; a part asks `has` before it draws. Other profiles compute everything (duplicates once)."""
    monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
    here, absent = _circle("fedlog", 0, 2), _circle("fedlog", 1, 2)
    ex.run(here, progress=False)  # cached, as a shipped run would be
    runs = part.Runs([here, absent, here], "paper", "scripts/paper_runs.py X")
    assert runs.has([here]) and not runs.has([here, absent]) and [c.key() for c in runs.missing] == [absent.key()]
    assert runs([here])[0].curve().tolist() == ex.run(here, progress=False).curve().tolist()
    assert not ex.is_cached(absent)  # listed, not computed
    with pytest.raises(part.NotShipped, match="scripts/paper_runs.py X"):
        runs([absent])
    assert "1 of 2" in capsys.readouterr().out
    quick = part.Runs([absent, absent], "quick", "-")
    assert quick.has([absent]) and ex.is_cached(absent) and not quick.missing



def test_missing_paper_runs_are_listed_one_line_per_setting_with_their_seeds_not_one_per_key(tmp_path, monkeypatch):
    """Before: notebook 06 printed 20 lines of keys ("fedavg fashion_mnist seed=0 (250 rounds, key 1a11...)") and
    "... and 133 more"."""
    from fedlib.papers import fedlog

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path))
    monkeypatch.setenv("FEDLIB_COMPUTE", "0")
    cfgs = [fedlog.paper_config("mnist", m, rounds=7, seed=s) for m in ("fedavg", "fedlog") for s in range(5)]
    with pytest.raises(part.NotShipped) as err:
        part.require_shipped(cfgs, "paper", "scripts/paper_runs.py X")
    lines = str(err.value).splitlines()
    assert lines[1:3] == ["  fedavg mnist, pathological partition, 7 rounds: seeds 0-4",
                          "  fedlog mnist, pathological partition, 7 rounds: seeds 0-4"] and "key" not in str(err.value)


def test_a_paper_read_loads_each_run_once_and_keys_each_config_a_few_times_not_once_per_missing_run(monkeypatch):
    """Notebook 02's paper read loaded each of its 556 runs 3 times and computed 54,314 cache keys (for each run
    found, the key of every missing run again): 6.1-8.1 s beside the background slots. Now one load per run and a
    few keys per Config: 1.0-3.0 s. Half of 40 made-up runs missing here: 40 loads, at most 3 keys a Config."""
    from fedlib import cache, sweep

    configs = [_circle(m, s, 3) for s in range(20) for m in ("fedlog", "fedproto")]
    found = {c.key(): (None if c.method == "fedproto" else {"fake": c.seed}) for c in configs}
    loads, keys = [], []
    monkeypatch.setattr(cache, "load", lambda c: loads.append(c) or found[c.key()])
    original = ex.Config.key
    monkeypatch.setattr(ex.Config, "key", lambda self, *a: keys.append(self) or original(self, *a))
    monkeypatch.setattr(sweep, "run_many", lambda cfgs, shipped_prefixes=False, loaded=None: list(loaded))
    monkeypatch.setenv("FEDLIB_COMPUTE", "0")
    runs = part.Runs(configs, "paper", "the command")
    assert len(loads) == 40 and len(runs.missing) == 20 and len(keys) <= 3 * 40
    done = [c for c in configs if c.method == "fedlog"]
    assert runs.has(done) and runs(done) == [{"fake": c.seed} for c in done] and not runs.has(configs)


def test_a_notebook_reads_its_parts_in_one_sweep_and_a_part_read_elsewhere_in_its_own(monkeypatch):
    """`papers.read_notebook` is the one way a notebook reads (before: `papers.read` of its parts, and FedRD's ladder
    in a second call at the paper profile typed in the notebook). Every part its paper declares for the notebook is
    read in one sweep at the notebook's profile, a part with `read_at` (the ladder: its shipped runs in every profile)
    in a sweep of its own at that profile; `reads[part]` gives each, an unknown part or notebook is refused."""
    from fedlib import papers
    from fedlib.papers.fedrd import plans

    sweeps = []

    def read(profile, *parts, shipped_prefixes=False):
        sweeps.append((profile, [p.name for p in parts]))
        return tuple(part.Read(p, profile, {}, None) for p in parts)

    monkeypatch.setattr(papers, "read", read)
    reads = papers.read_notebook("quick", plans.NOTEBOOK)
    assert sweeps == [("quick", [p.name for p in plans.PARTS if p is not plans.LADDER_PART]),
                      ("paper", [plans.LADDER_PART.name])]
    assert list(reads.by_part) == [p.name for p in plans.PARTS]  # in the paper's order
    assert reads[plans.LADDER_PART].profile == "paper" and reads[plans.TABLE1].profile == "quick"
    assert reads.profile == "quick" and plans.DPC in reads and "fedprof_fig1" not in reads
    with pytest.raises(KeyError, match="read no part 'fedprof_fig1'"):
        reads["fedprof_fig1"]
    with pytest.raises(ValueError, match="no part is declared for notebook '99_nothing'"):
        papers.read_notebook("quick", "99_nothing")
    with pytest.raises(ValueError, match="no part is declared for notebook '99_nothing'"):
        papers.read_notebook("quick", "99_nothing", [])
    sweeps.clear()  # parts given: those alone (the datasets whose files are here); none given: nothing read
    assert list(papers.read_notebook("quick", plans.NOTEBOOK, [plans.DPC]).by_part) == [plans.DPC.name]
    assert papers.read_notebook("quick", plans.NOTEBOOK, []).by_part == {} and sweeps == [("quick", [plans.DPC.name])]


def test_a_derived_part_is_computed_once_cached_like_a_run_and_read_missing_where_nothing_may_compute(
        tmp_path, monkeypatch, capsys):
    """A part computed from a Config but not a run of the engine (FedLog's Thm. 4 traces, FedCR's Fig. 2 views) had a
    private cache in its analysis and a `compute=` flag in its notebook. Now it is a part with `derive=`: read with
    the runs (no run of the engine, and not counted in the sweep), computed where the profile may compute and
    cached in the results folder, read back from there (or archive/) without computing, and missing in the paper
    profile otherwise, through the same Read."""
    import json

    from fedlib import archive, sweep

    made = []

    def compute(cfg, settings):
        made.append((cfg.key(), settings.rounds))
        return {"method": cfg.method, "seed": cfg.seed}

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(archive, "folder", lambda: tmp_path / "archive")
    monkeypatch.setattr(sweep, "run_many", lambda cfgs, **kw: pytest.fail("a derived part ran") if cfgs else [])
    monkeypatch.delenv("FEDLIB_COMPUTE", raising=False)
    derived = part.Part("made_up_traces", "99_made_up", PROFILES, _plan, packed=False,
                        derive=part.Derived("made_up_trace_v1", compute, load=lambda v: (v["method"], v["seed"])))
    (read,) = part.read("paper", derived)  # nothing cached or shipped, and the paper profile computes nothing
    assert made == [] and read["fedlog"] is None and not read.whole() and read.missing() == ["fedlog", "fedproto"]
    (quick,) = part.read("quick", derived)  # the quick profile computes, caches, and reads the values
    assert quick["fedlog"] == [("fedlog", 0)] and quick.whole() and [r for _, r in made] == [2, 2]  # at its settings
    cfg = derived.plan("quick")["fedproto"][0]
    assert json.loads((tmp_path / "results" / "made_up_trace_v1" / f"{cfg.key()}.json").read_text()) == \
        {"method": "fedproto", "seed": 0}
    (again,) = part.read("quick", derived)  # cached: read, not computed again
    assert again.each() == quick.each() and len(made) == 2
    assert "runs" not in capsys.readouterr().out  # the sweep holds no run of a derived part: it counts none


def test_a_value_computed_in_every_profile_is_served_only_to_the_code_that_made_it(tmp_path, monkeypatch):
    """Notebook 01's and 04's derived values (seconds of work, `everywhere=True`) were cached by their key alone, so
    after an edit of the analysis that computes them the notebook, and `fedlib check`'s regeneration of it, read the
    old numbers back. Now such a value is kept with the code fingerprint and computed again when the code differs. A
    study no Config describes is a `part.Study`: its name and arguments name its file."""
    import json

    from fedlib import provenance, sweep

    made = []

    def compute(study, settings):
        made.append(study.args)
        return {"twice": 2 * study.args[0], "rounds": settings.rounds}

    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setattr(sweep, "run_many", lambda cfgs, **kw: pytest.fail("a derived part ran") if cfgs else [])
    studies = part.Part("made_up_studies", "99_made_up", PROFILES, lambda s, seeds: {
        "a": [part.Study("made_up", (1, sd)) for sd in seeds], "b": [part.Study("made_up", (2, sd)) for sd in seeds]},
        packed=False, derive=part.Derived("made_up_study_v1", compute, everywhere=True))
    (paper,) = part.read("paper", studies)  # computed in every profile, the paper's too
    assert paper["a"] == [{"twice": 2, "rounds": 3}] * 2 and sorted(made) == [(1, 0), (1, 1), (2, 0), (2, 1)]
    kept = tmp_path / "results" / "made_up_study_v1" / f"{part.Study('made_up', (2, 1)).key()}.json"
    assert json.loads(kept.read_text()) == {"fingerprint": provenance.fingerprint(), "value": {"twice": 4, "rounds": 3}}
    (again,) = part.read("paper", studies)
    assert again.each() == paper.each() and len(made) == 4  # the same code: read back, not computed
    monkeypatch.setattr(provenance, "fingerprint", lambda: "edited00code")  # the analysis changed since
    (edited,) = part.read("paper", studies)
    assert edited.whole() and len(made) == 8 and json.loads(kept.read_text())["fingerprint"] == "edited00code"
    assert part.Study("made_up", (1, 0)).key() != part.Study("made_up", (0, 1)).key()
    assert part.Study("made_up", (1, 0)).label() == "made_up(1, 0)"


def test_which_data_are_here_is_decided_where_a_part_is_read_not_in_its_plan(monkeypatch):
    """A build plans what its profile declares (before, FedCR's and FedRD's builds asked `experiments.data_here` and
    left out what was not here, so a plan depended on the machine). `part.read` leaves out the keys whose data are not
    here (`Read.absent`, read as None and computed nowhere), except, at the paper profile, the keys a run set
    declares: their shipped runs are read and the missing ones named with their command on any machine."""
    def plan(profile, seeds):
        return {d: [ex.Config(method="fedavg", dataset=d, seed=s, rounds=profile.rounds) for s in seeds]
                for d in ("mnist", "cifar10")}

    some = part.Part("some_set", "99_made_up", PROFILES, plan, in_set=lambda d: d == "cifar10")
    monkeypatch.setattr(ex, "data_here", lambda d: d == "mnist")
    monkeypatch.setenv("FEDLIB_COMPUTE", "0")
    assert list(some.plan("quick")) == ["mnist", "cifar10"]  # the plan: the profile's, whatever is here
    quick = part.read("paper", part.Part("unset", "99_made_up", PROFILES, plan, packed=False))[0]
    assert quick.keys() == ["mnist"] and quick.absent == ("cifar10",) and quick["cifar10"] is None
    assert quick.there("cifar10") == []
    paper = part.read("paper", some)[0]  # a run set's key is read, its data here or not
    assert paper.keys() == ["mnist", "cifar10"] and paper.absent == ()
    assert "scripts/paper_runs.py some_set" in paper.note(["cifar10"])


def test_a_paper_read_computes_each_configs_key_once(monkeypatch):
    """Issue 94, point 6: a Config's key (the hash of its fields, 190 us) is computed once per Config in a read,
    however often the read asks for it (`Config.key` remembers it beside the Config). Before, notebook 02's paper read
    computed 54,314 keys for 556 runs. Counted here at the hash: 40 made-up Configs, half of their runs missing, read,
    asked whether they are there and read again."""
    from fedlib import cache, sweep

    configs = [_circle(m, s, 4) for s in range(20) for m in ("fedlog", "fedproto")]
    computed = []
    original = ex.Config._compute_key
    monkeypatch.setattr(ex.Config, "_compute_key", lambda self, *a: computed.append(id(self)) or original(self, *a))
    found = {c.key(): (None if c.method == "fedproto" else {"fake": c.seed}) for c in configs}
    monkeypatch.setattr(cache, "load", lambda c: found[c.key()])
    monkeypatch.setattr(sweep, "run_many", lambda cfgs, shipped_prefixes=False, loaded=None: list(loaded))
    monkeypatch.setenv("FEDLIB_COMPUTE", "0")
    runs = part.Runs(configs, "paper", "the command")
    done = [c for c in configs if c.method == "fedlog"]
    assert runs.has(done) and runs(done) and not runs.has(configs) and len(runs.missing) == 20
    assert sorted(computed) == sorted(id(c) for c in configs)  # each once
