"""The paper-profile run sets, declared once in the papers' modules (fedlib.papers.RUN_SETS): every set's labels and
cache keys are pinned, so moving a declaration (as from scripts/paper_runs.py's if-chain into the papers) changes
no run; and scripts/paper_runs.py has no branch per set."""
import hashlib
import json
import warnings

import pytest

from fedlib.papers import RUN_SETS

pytestmark = pytest.mark.usefixtures("cpu_keys")  # the CPU's keys, on a GPU machine too

PINNED = {  # set -> (runs, digest of [(label, key)]) over seeds 0-4 (table1, augment) or 0-2, as on 2026-11-25
    "table1": (70, "2e004de885dd9476"),
    # 2026-11-27: the sets with no run shipped take the augmentation FedLog's appendix E states (re-pinned: before,
    # table1_fashion_mnist 42 runs 25a34efd22b666f2, dp_fashion_mnist f841897b8f0f2062, fig3_left_fashion_mnist
    # 5188c9b0c21b8c1f; none of their runs was shipped)
    "table1_fashion_mnist": (39, "07ad80fe03e77bbf"),  # FedLog's part e: Table 1's entries on FashionMNIST
    "table1_fashion_mnist_plain": (42, "b4d35e4541614275"),  # 2026-12-06: its ablation without augmentation
    "tableA1": (24, "5ced4aa748d7859b"),
    # 2026-11-27: Table 1 and A.1 at the protocol FedLog's appendix E states (crop and flip); the ablation's runs
    # (augment) and FedDBE's augmented row (table1) are theirs too, under the same keys
    "table1_augmented": (39, "3e31b741d60556d9"),
    "tableA1_augmented": (24, "e80b008bda084cc4"),
    "augment": (20, "051854081fa0da63"),
    "dp": (120, "e0587006d5b0228c"),
    "dp_fashion_mnist": (75, "2827f7ab4b6c5cdb"),
    "fig3_left": (12, "cd04a6d217cdd319"),  # 2026-11-26: split by dataset, MNIST here (both: 98076ec4afc5884f,
    "fig3_left_fashion_mnist": (12, "c30175d1ab24088b"),  # the one set before; pinned below)
    "fig2": (24, "9c952919dbe583c5"),
    "feddbe_kappa": (4, "ade0728df5ee9627"),
    "fedprof_table3": (30, "155a3ace5469d51b"),
    "fedprof_fig1": (12, "a7c1ac303ab56043"),
    "fedprof_alpha": (9, "34d070a82e17f6fe"),
    "fedcr_table2_n1": (24, "9a89d87c5791ae71"),  # 2026-12-06: + FedPAC, FedPer, LG-FedAvg, FedBABU after the 12
    # below (c3ace3608649fdcd), whose keys stay (test_fedcr_n1_keeps_its_twelve); 2026-11-26: FashionMNIST's Ditto, then FedRep and FedAvg, at
    "fedcr_table2_n2": (12, "9ae7d6c84fde82a0"),  # their screened lr 0.1 (first 5b0a890e6acd64ef, bd974d06be4149a9;
    # after Ditto's: eb95843a90a5cb25, 78e34eb08d79ff66); FedCR's runs kept theirs
    "fedcr_ditto_main_fed": (6, "9c498f7899778a65"),  # 2026-12-07: + n2's 3 runs, labels name the partition; n1's
    # 3 (2026-11-27, 6d42b2ddca55fe69, shipped) keep their keys: test_dittos_second_reading_keeps_n1s_three
    "fedcr_table9": (18, "10ae40322c2d0dd2"),
    "fedcr_table3": (54, "43b7636648e27ef7"),  # declared 2026-11-25 (notebook 06 part C), none shipped
    "fedcr_beta": (36, "5b0c6dff1196a70c"),  # part D, none shipped
    "fedcr_seed_systems": (6, "3bf15f3ea49a6f30"),  # part G, none shipped
    "fedrd_table1": (15, "2a110f76be071b83"),  # remade when FedRD's protocol took skip_finished (none shipped)
    "fedrd_table3": (6, "6eae710da441a0a6"),  # declared 2026-11-25: Table III's noise-initialised runs (none shipped)
    "fedrd_ladder": (57, "60735c7680f9a5b7"),
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_every_run_set_keeps_its_labels_and_keys(name):
    seeds = [0, 1, 2, 3, 4] if name in ("table1", "augment") else [0, 1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = RUN_SETS[name].runs(seeds)
    digest = hashlib.sha256(json.dumps([(lab, cfg.key()) for lab, cfg in runs]).encode()).hexdigest()[:16]
    assert (len(runs), digest) == PINNED[name]


def test_the_sets_are_the_pinned_ones_and_paper_runs_names_none_of_them():
    from pathlib import Path

    assert set(RUN_SETS) == set(PINNED)
    script = (Path(__file__).resolve().parent.parent / "scripts" / "paper_runs.py").read_text()
    code = script[script.index('"""', 3):]  # after its docstring
    assert not any(f'"{name}"' in code for name in RUN_SETS)


def test_fig3_left_split_by_dataset_keeps_every_run_of_the_one_set_before():
    """Fig. 3 left was one set of 80 runs (MNIST, then FashionMNIST); split on 2026-11-26 so that its MNIST half
    (part c of FedLog's paper runs) can be shipped and judged whole while FashionMNIST's (part e) waits. The halves,
    one after the other, are the former set's runs: the same labels and keys, in its order (its digest, pinned
    before the split), so runs computed from a worktree at an older commit pack into the new sets."""
    runs = RUN_SETS["fig3_left"].runs([0, 1, 2]) + RUN_SETS["fig3_left_fashion_mnist"].runs([0, 1, 2])
    digest = hashlib.sha256(json.dumps([(lab, cfg.key()) for lab, cfg in runs]).encode()).hexdigest()[:16]
    # 1cabded02b6f4b15 since FashionMNIST's half took augmentation (2026-11-27, none of it shipped); MNIST's half is
    # still the former set's first half, key for key (its pin above, cd04a6d217cdd319, is unchanged)
    assert (len(runs), digest) == (24, "1cabded02b6f4b15")
    assert {cfg.dataset for _, cfg in RUN_SETS["fig3_left"].runs([0])} == {"mnist"}


def test_an_unknown_label_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="choose from"):
        RUN_SETS["fedprof_alpha"].runs([0], only=["alpha 7"])


def test_fedlogs_run_sets_count_the_seeds_their_notebooks_paper_profile_reads():
    """Before, Table 1's set counted 5 seeds and the augmentation's 5 while notebook 02 reads 10 and 3, so claims.md
    said "12 of 20 runs shipped" of a part whose 12 runs were all there. Each set now takes its profile's seeds."""
    from fedlib.papers import fedlog

    T = fedlog.TABLE1_PROFILES["paper"]
    assert RUN_SETS["table1"].seeds == T.table1["mnist"].seeds == tuple(range(10))
    assert RUN_SETS["augment"].seeds == T.augment["mnist"].seeds == (0, 1, 2)
    assert RUN_SETS["dp"].seeds == fedlog.DP_PROFILES["paper"]["mnist"].seeds == tuple(range(5))
    assert RUN_SETS["fig2"].seeds == fedlog.CONVERGENCE_PROFILES["paper"].fig2.seeds == tuple(range(10))


def test_fedcrs_sweep_and_seed_system_sets_are_the_runs_notebook_06_reads():
    """Before, notebook 06's parts C, D and G named no run set ("no run set declares them yet"), so claims.md said
    "not run: missing data" of them with no command and no cost. Each set's keys are among the runs the notebook's
    paper profile plans."""
    from fedlib.papers.fedcr import plans

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planned = {c.key() for p in plans.UPFRONT for c in p.configs("paper")}
        for name in ("fedcr_table3", "fedcr_beta", "fedcr_seed_systems"):
            keys = [cfg.key() for _, cfg in RUN_SETS[name].runs()]
            assert keys and set(keys) <= planned, name


def test_fedrds_table3_set_is_the_noise_initialised_runs_notebook_07_reads(monkeypatch):
    """Before, Table III had no paper-size set: claims.md showed its quick rows with no command and no cost."""
    from fedlib import experiments as ex
    from fedlib.papers.fedrd import plans

    monkeypatch.setattr(ex, "dataset_available", lambda d: d == "fashion_mnist")  # the set is FashionMNIST's
    ex.data_here.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        planned = {c.key() for k, cs in plans.INIT.plan("paper").items() if plans.INIT.in_set(k) for c in cs}
        assert {cfg.key() for _, cfg in RUN_SETS["fedrd_table3"].runs()} == planned and len(planned) == 6
        read = {c.key() for cs in plans.INIT.read("paper").plan.values() for c in cs}  # MNIST's: not here
        assert read == planned
        assert {c.key() for cs in plans.TABLE1.read("paper").plan.values() for c in cs} == \
            {cfg.key() for _, cfg in RUN_SETS["fedrd_table1"].runs()}  # Fig. 2 reads their first rounds
    ex.data_here.cache_clear()


def test_the_dp_sets_name_how_many_records_their_stand_ins_hold():
    """The DP stand-ins' record counts, read from their federations: MNIST's Table 1 setting holds 3,000 (the noise
    of a release does not shrink with fewer records, so against CIFAR-10's 50,000 it weighs about 17 times more)."""
    from fedlib import experiments as ex
    from fedlib.papers import fedlog

    for d, text in (("mnist", "3,000 training records over 50 clients (56-65 each)"),
                    ("fashion_mnist", "60,000 training records over 100 clients (600 each)")):
        if not ex.dataset_available(d):
            pytest.skip(f"{d} is not here")
        counts = ex.federation(fedlog.paper_config(d, "fedlog")).train.counts
        said = f"{int(counts.sum()):,} training records over {len(counts)} clients (" + (
            f"{int(counts.min())}-{int(counts.max())} each)" if counts.min() != counts.max() else f"{int(counts.min())} each)")
        deviation = RUN_SETS["dp" if d == "mnist" else "dp_fashion_mnist"].deviations
        assert said == text and text in deviation
        if d == "mnist":  # CIFAR-10 in the paper's setting: 50,000 records, 500 a client
            ratio, per_client = 50_000 / float(counts.sum()), 500 / float(counts.float().mean())
            assert f"about {ratio:.0f} times larger against the summed statistic, {per_client:.0f} times" in deviation


def test_fashion_mnists_baselines_take_their_screened_rates_and_fedcr_keeps_its_keys():
    """FedCR's protocol gives Ditto, FedRep and FedAvg on FashionMNIST the rate their screen chose (0.1 each,
    `fedcr.TUNED_LR`; before: the README's 0.5, 0.01 and 0.01) and keeps the README's rates elsewhere; FedCR keeps its
    0.05 and its keys, so its shipped Table 2 runs stay in the set while the baselines' earlier runs leave it."""
    from fedlib import archive
    from fedlib.papers import fedcr

    for label in ("Ditto", "FedRep", "FedAvg"):
        for part in ("n1", "n2"):
            assert fedcr.run("paper", "fashion_mnist", label, part, 0).lr == 0.1, (label, part)
    assert fedcr.run("paper", "mnist", "Ditto", "n1", 0).lr == 0.5
    assert fedcr.run("paper", "mnist", "FedRep", "n1", 0).lr == fedcr.run("paper", "mnist", "FedAvg", "n1", 0).lr == 0.01
    assert fedcr.run("paper", "fashion_mnist", "FedCR", "n1", 0).lr == 0.05
    runs = RUN_SETS["fedcr_table2_n1"].runs([0, 1, 2])
    shipped = {(lab, cfg.seed) for lab, cfg in runs if archive.find(cfg.method, cfg.key()) is not None}
    assert {("FedCR", 0), ("FedCR", 1)} <= shipped
    keys = {cfg.key() for _, cfg in runs}
    for label, readme_lr in (("Ditto", 0.5), ("FedRep", 0.01), ("FedAvg", 0.01)):  # seed 0 shipped at these rates
        earlier = fedcr.run("paper", "fashion_mnist", label, "n1", 0, lr=readme_lr)
        assert earlier.key() not in keys, label  # no longer the set's
        assert archive.find(earlier.method, earlier.key()) is not None, label  # but kept in archive/, its own key


def test_fedcr_n1_keeps_its_twelve():
    """FedPAC and three more baselines joined FedCR's Table 2 n1 set after its first four methods, whose 12 runs are
    shipped: those keep their labels, keys and order (the digest pinned before the change); the new ones follow each
    seed's four."""
    runs = RUN_SETS["fedcr_table2_n1"].runs([0, 1, 2])
    first = [(lab, cfg.key()) for lab, cfg in runs if lab in ("FedCR", "FedAvg", "Ditto", "FedRep")]
    assert hashlib.sha256(json.dumps(first).encode()).hexdigest()[:16] == "c3ace3608649fdcd"
    assert [lab for lab, cfg in runs if cfg.seed == 0] == ["FedCR", "FedAvg", "Ditto", "FedRep", "FedPAC", "FedPer",
                                                          "LG-FedAvg", "FedBabu (frozen head)"]


def test_dittos_second_reading_keeps_n1s_three():
    """n2's runs joined Ditto's second reading after n1's 3, which are shipped: those keep their keys, in seed order
    (the keys pinned before the change), and each seed's n2 run follows its n1 run."""
    runs = RUN_SETS["fedcr_ditto_main_fed"].runs([0, 1, 2])
    assert [cfg.key() for lab, cfg in runs if lab.endswith(" n1")] == ["10db2b76acb3d2c0", "3a48a87f298bdddd",
                                                                       "3344c6c1b2a53626"]
    assert [(lab[-2:], cfg.seed) for lab, cfg in runs] == [(q, s) for s in range(3) for q in ("n1", "n2")]


def test_the_augmented_table_reuses_every_augmented_run_already_declared():
    """Table 1 at the stated protocol (table1_augmented) holds the augmentation ablation's runs and FedDBE's augmented
    row under their own keys, so nothing shipped is computed again; its verdicts' own rows come first in each seed."""
    from fedlib.papers import fedlog

    mine = {cfg.key() for _, cfg in RUN_SETS["table1_augmented"].runs(list(range(10)))}
    ablation = {cfg.key() for _, cfg in RUN_SETS["augment"].runs([0, 1, 2])}
    feddbe = {cfg.key() for lab, cfg in RUN_SETS["table1"].runs(list(range(10)))
              if lab == "FedDBE (FedLog's augmentation)"}
    assert ablation <= mine and feddbe <= mine and len(feddbe) == 10
    assert all(cfg.augment for _, cfg in RUN_SETS["table1_augmented"].runs([0]))
    assert all(cfg.augment for _, cfg in RUN_SETS["tableA1_augmented"].runs([0]))
    labels = [lab for lab, _ in RUN_SETS["table1_augmented"].runs([0])]
    assert labels[:6] == ["FedLog-C", "FedLog", "FedDBE", "FedProto", "LG-FedAvg 2", "FedRep 1"]
    assert set(labels) == set(fedlog.TABLE1_METHODS) | {"FedDBE (Adam, kappa 1)"}


def test_the_commands_for_missing_runs_name_the_fewest_sets_that_hold_them():
    """part.commands_for: the sets found by the runs' keys, a run that two sets share named once (DP's non-private
    runs are also Table 1's), and the fallback where no declared set holds them."""
    from fedlib.papers import RUN_SETS, commands_for

    dp = [cfg for _, cfg in RUN_SETS["dp"].runs()]
    assert commands_for(dp) == RUN_SETS["dp"].command()
    fig = [cfg for _, cfg in RUN_SETS["fig2"].runs([0])] + [cfg for _, cfg in RUN_SETS["fedprof_table3"].runs([1])]
    assert sorted(commands_for(fig).split("; ")) == sorted([RUN_SETS["fig2"].command(),
                                                            RUN_SETS["fedprof_table3"].command()])
    assert commands_for([], "none") == "none"
    odd = dp[0].__class__(**{**dp[0].__dict__, "rounds": 3})
    assert commands_for([odd], "no set declares it") == "no set declares it"
    # before, runs of a set and runs of none were named by the set's command alone (FedRD's part D: its dpc-10 points
    # are Table I's, its other dpcs no set's), so the reader was not told how to make the rest
    prof = RUN_SETS["fedprof_table3"]
    assert commands_for([prof.runs([0])[0][1], odd], "no set declares it") == f"{prof.command()}; no set declares it"


def test_a_table1_entry_left_out_of_the_computing_order_comes_last_not_an_error():
    """Before, an entry added to Table 1 but not to the hand-kept AUGMENTED_ORDER made table1_augmented.runs()
    raise "'FedNew' is not in list" (and with it paper_runs.py, `fedlib claims` and the missing-run notes)."""
    from fedlib.papers.fedlog import plans

    assert plans.augmented_order("FedNew") == len(plans.AUGMENTED_ORDER)
    assert plans.augmented_order("FedLog-C") == 0
