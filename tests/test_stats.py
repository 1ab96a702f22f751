import math

import numpy as np
import pytest

from scipy import stats as sps

from fedlib import outputs, stats


def test_mean_se():
    m, se = stats.mean_se([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)


def test_one_value_has_no_standard_error_never_a_nil_one():
    # before: mean_se([x]) gave (x, 0.0), so 15 committed tables read "0.00" beside a one-seed number, a spread that
    # reads as measured to be nil; two callers wrapped it to NaN and the rest did not
    m, se = stats.mean_se([87.3])
    assert m == 87.3 and math.isnan(se)
    assert stats.format_mean_se(87.3, se) == "87.30" and stats.format_mean_se(87.3, 0.25) == "87.30±0.25"
    assert stats.format_mean_se(87.3, 0.0) == "87.30"  # equal seeds: nothing to show either
    assert outputs._cell(se) == "-"  # a table shows it as "-"
    assert not stats.has_spread(se) and not stats.has_spread(None) and stats.has_spread(0.25)


def test_wilcoxon_markers_follow_direction_and_strength():
    ref = np.linspace(0.9, 0.95, 10)
    assert stats.wilcoxon_marker(ref - 0.01, ref)[0] == "⇓"
    assert stats.wilcoxon_marker(ref + 0.01, ref)[0] == "⇑"
    mixed = ref + np.array([0.01, -0.01] * 5)
    assert stats.wilcoxon_marker(mixed, ref)[0] == ""
    weak = ref - np.array([0.01] * 7 + [-0.001, -0.002, -0.003])
    assert stats.wilcoxon_marker(weak, ref)[0] in ("↓", "⇓")


def test_bits_to_threshold():
    acc, up, down = [0.5, 0.96, 0.975, 0.98], [10] * 4, [5] * 4
    assert stats.bits_to_threshold(acc, up, down, 0.97) == (45.0, 2, True)
    assert stats.bits_to_threshold([0.5, 0.7, 0.6], [1] * 3, [1] * 3, 0.97) == (4.0, 1, False)
    assert stats.format_bits(3.18e6) == "3.18Mb" and stats.format_bits(3.45e9) == "3.45Gb"


def test_henze_zirkler_agrees_with_pingouin():
    import pingouin as pg
    rng = np.random.default_rng(0)
    samples = {
        "gaussian": rng.normal(size=(100, 3)),
        "correlated gaussian": rng.multivariate_normal([0, 1], [[2, 1], [1, 2]], size=60),
        "exponential": rng.exponential(size=(80, 2)),
        "bimodal": np.r_[rng.normal(size=(50, 2)), rng.normal(size=(50, 2)) + 4],
    }
    for name, x in samples.items():
        hz, p, normal = stats.henze_zirkler(x)
        ref = pg.multivariate_normality(x, alpha=0.05)
        assert hz == pytest.approx(float(ref.hz), rel=1e-9), name
        assert p == pytest.approx(float(ref.pval), rel=1e-6, abs=1e-12), name
        assert normal == bool(ref.normal), name
    assert stats.henze_zirkler(samples["gaussian"])[2] and not stats.henze_zirkler(samples["exponential"])[2]


def _fake_run(acc, bits_per_round):
    return {"rounds": {"acc_mean": acc, "up_bits": [bits_per_round] * len(acc), "down_bits": [0] * len(acc)}}


def test_table_rows_reads_final_accuracy_bits_and_markers():
    seeds = range(8)
    results = {
        "A": [_fake_run([0.5, 0.98, 0.99 + 0.001 * s], 10) for s in seeds],  # reaches 97% in round 2
        "B": [_fake_run([0.5, 0.6, 0.90 + 0.001 * s], 1) for s in seeds],  # never: counted to its best round
    }
    rows = {r.method: r for r in stats.table_rows(results, 0.97, reference="A")}
    assert rows["A"].accuracy_mean == pytest.approx(99.35) and rows["A"].bits_to_threshold == 20
    late_drop = stats.table_rows({"A": [_fake_run([0.5, 0.99, 0.95], 1)] * 2}, 0.97, reference="A")[0]
    assert late_drop.accuracy_mean == pytest.approx(99.0) and late_drop.final_accuracy_mean == pytest.approx(95.0)
    assert rows["B"].bits_to_threshold == 3 and rows["B"].reached == "0/8"
    assert rows["B"].accuracy_marker == "⇓" and rows["B"].bits_marker == "⇓"
    assert rows["A"].accuracy_marker == ""
    both_ways = {"rounds": {"acc_mean": [0.5, 0.98], "up_bits": [10, 10], "down_bits": [30, 30]}}
    row = stats.table_rows({"A": [both_ways]}, 0.97, reference="A")[0]
    assert (row.bits_to_threshold, row.uplink_bits_to_threshold) == (80, 20)


def test_table1_configs_follow_tables_a3_to_a5():
    from fedlib.papers import fedlog

    c = fedlog.table1_config("cifar10", "CS-FL", seed=3)
    assert (c.lr, c.batch_size, c.options["sparsity"], c.options["phase2_lr"]) == (0.001, 10, 0.0005, 0.01)
    assert fedlog.table1_config("cifar100", "FedRep 2").options == {"local_layers": 2, "head_epochs": 3}
    m = fedlog.table1_config("mnist", "LG-FedAvg 2", rounds=7)
    assert (m.method, m.options, m.rounds, m.n_clients, m.train_fraction) == ("lg_fedavg", {"global_layers": 2}, 7, 50, 0.05)
    assert set(fedlog.TABLE1["mnist"]) == set(fedlog.TABLE1_METHODS)


def test_a_table_made_for_some_datasets_keeps_the_rows_of_the_others():
    import csv

    from fedlib import paths

    outputs.save_table([{"dataset": "a", "bits": 1}, {"dataset": "b", "bits": 2}], "t", keep_other="dataset")
    outputs.save_table([{"dataset": "a", "bits": 3}], "t", keep_other="dataset")
    with open(paths.figures_dir() / "t.csv") as f:
        rows = {r["dataset"]: r["bits"] for r in csv.DictReader(f)}
    assert rows == {"a": "3", "b": "2"}
    outputs.save_table([{"dataset": "a", "method": "x", "bits": 1}, {"dataset": "a", "method": "y", "bits": 2}], "u")
    outputs.save_table([{"dataset": "a", "method": "y", "bits": 5}], "u", keep_other=("dataset", "method"))
    with open(paths.figures_dir() / "u.csv") as f:
        assert [(r["method"], r["bits"]) for r in csv.DictReader(f)] == [("x", "1"), ("y", "5")]
    with open(paths.figures_dir() / "u.csv", "a") as f:  # a key repeated in the file: kept once
        f.write("a,y,6\na,y,7\n")
    outputs.save_table([{"dataset": "b", "method": "x", "bits": 8}], "u", keep_other=("dataset", "method"))
    with open(paths.figures_dir() / "u.csv") as f:
        assert [(r["method"], r["bits"]) for r in csv.DictReader(f)] == [("x", "1"), ("y", "5"), ("x", "8")]
    with pytest.raises(ValueError, match="tell the new rows"):  # the key must identify a row
        outputs.save_table([{"dataset": "a", "method": "x", "bits": 1}, {"dataset": "a", "method": "y", "bits": 2}],
                         "u", keep_other="dataset")
    outputs.save_table([{"dataset": "a", "method": "z", "bits": 9}], "u", keep_other=("dataset", "method"),
                       replace=("dataset",))  # dataset a's rows are these now; b's stay
    with open(paths.figures_dir() / "u.csv") as f:
        assert [(r["dataset"], r["method"], r["bits"]) for r in csv.DictReader(f)] == [("b", "x", "8"), ("a", "z", "9")]
    outputs.save_table([{"dataset": "a", "bits": 4}], "t")  # without keep_other the table is replaced
    with open(paths.figures_dir() / "t.csv") as f:
        assert [r["dataset"] for r in csv.DictReader(f)] == ["a"]


def test_first_round_reaching():
    from fedlib.stats import first_round_reaching

    assert first_round_reaching([0.1, 0.5, 0.9, 0.95], 0.9) == 3
    assert first_round_reaching([0.1, 0.5], 0.9) is None


def test_rank_agreement_separates_ties_of_the_reference_from_wrong_orders():
    reference = {"A": 98.5, "B": 98.4, "C": 97.0, "D": 90.0}
    se = {"A": 0.1, "B": 0.1, "C": 0.1, "D": 0.5}
    same = stats.rank_agreement({"A": 9, "B": 8, "C": 7, "D": 1}, reference, se)
    assert same.tau == pytest.approx(1.0) and same.discordant == [] and same.methods == 4
    tie_swapped = stats.rank_agreement({"A": 8, "B": 9, "C": 7, "D": 1}, reference, se)
    assert tie_swapped.discordant == [("A", "B")]  # 0.1 apart with an SE of 0.14: a tie
    assert tie_swapped.contradicted == []
    assert tie_swapped.tau == pytest.approx(4 / 6)
    wrong = stats.rank_agreement({"A": 9, "B": 8, "C": 1, "D": 7, "E": 100}, reference, se)
    assert wrong.contradicted == [("C", "D")] and wrong.methods == 4  # E is not in the reference
    assert stats.rank_agreement({"A": 8, "B": 9}, reference).contradicted == [("A", "B")]  # no SE: no ties


def test_recovery_needs_every_larger_epsilon_to_recover():
    from fedlib.stats import recovers_from

    eps = [0.5, 2.0, 5.0, 20.0, 50.0]
    # 0.5 recovers by chance, 2 and 5 do not: the old notebook said "from 0.5" (min of the recovering ones)
    assert recovers_from(eps, [0.97, 0.90, 0.93, 0.975, 0.98], reference=0.98) == 20.0
    assert recovers_from(eps, [0.975] * 5, reference=0.98) == 0.5
    assert recovers_from(eps, [0.99, 0.99, 0.99, 0.99, 0.90], reference=0.98) is None
    assert recovers_from(eps[::-1], [0.98, 0.975, 0.93, 0.90, 0.97], reference=0.98) == 20.0  # any order


def test_the_statistic_size_follows_the_datasets_model():
    from fedlib import config, models

    assert models.statistic_size("mnist", config.INPUT_SHAPES["mnist"], 10) == 51
    assert models.statistic_size("cifar10", config.INPUT_SHAPES["cifar10"], 10) == 101  # notebook 03 said 51


def test_the_common_threshold_is_the_largest_integer_every_method_reaches_in_every_seed():
    from fedlib.stats import common_threshold

    run = lambda *acc: {"rounds": {"acc_mean": list(acc)}}  # noqa: E731
    results = {"A": [run(0.90, 0.9621), run(0.955, 0.9601)], "B": [run(0.93, 0.9599), run(0.97, 0.971)]}
    assert common_threshold(results) == 0.95  # B's first seed tops out at 95.99%
    assert common_threshold({"A": [run(0.96)]}) == 0.96


def test_the_silhouette_matches_a_hand_computation_and_orders_separations():
    from fedlib.stats import silhouette
    x = np.array([[0.0], [1.0], [4.0], [6.0]])
    y = np.array([0, 0, 1, 1])
    # point 0: a = 1, b = mean(4, 6) = 5 -> 0.8; point 1: a = 1, b = 4 -> 0.75; point 2: a = 2, b = 3.5 -> 3/7;
    # point 3: a = 2, b = 5.5 -> 7/11
    assert silhouette(x, y) == pytest.approx((0.8 + 0.75 + 3 / 7 + 7 / 11) / 4)
    assert silhouette(np.array([[0.0], [5.0], [0.2]]), np.array([0, 1, 2])) == 0.0  # singletons score 0
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 20)
    near, far = (rng.normal(size=(60, 2)) + scale * labels[:, None] for scale in (0.5, 5.0))
    assert silhouette(far, labels) > silhouette(near, labels)
    with pytest.raises(ValueError, match="two classes"):
        silhouette(x, np.zeros(4))


def test_the_exact_signed_rank_test_agrees_with_scipys_exact_one_without_ties_or_zeros():
    rng = np.random.default_rng(0)
    for n in (5, 7, 10):
        for _ in range(20):
            x, y = rng.normal(0, 1, n), rng.normal(0.3, 1, n)
            for alt in ("greater", "less"):
                want = sps.wilcoxon(x, y, alternative=alt, method="exact").pvalue
                assert stats.wilcoxon_signed_rank(x, y, alt).p == pytest.approx(want, rel=1e-12)


def test_the_smallest_p_is_one_over_two_to_the_n_and_zero_differences_are_dropped_and_counted():
    ref = np.zeros(10)
    assert stats.wilcoxon_signed_rank(ref + np.arange(1, 11), ref).p == pytest.approx(1 / 1024)
    assert stats.wilcoxon_signed_rank(ref[:5] + np.arange(1, 6), ref[:5]).p == pytest.approx(1 / 32)  # never < 0.01
    bits = np.array([5.0, 5.0, 5.0, 7.0, 8.0, 9.0, 6.0])  # three seeds with equal bits
    r = stats.wilcoxon_signed_rank(bits, np.full(7, 5.0), "greater")
    assert (r.n, r.zeros) == (4, 3) and r.p == pytest.approx(1 / 16)


def test_ties_take_average_ranks_and_the_exact_count_covers_half_ranks():
    d = np.array([1.0, 1.0, 2.0, -3.0, 4.0])  # ranks 1.5, 1.5, 3, 4, 5; W+ = 11
    r = stats.wilcoxon_signed_rank(d, np.zeros(5), "greater")
    patterns = [sum(w for w, s in zip((1.5, 1.5, 3, 4, 5), signs) if s) for signs in
                __import__("itertools").product((0, 1), repeat=5)]
    assert r.w_plus == 11 and r.p == pytest.approx(sum(w >= 11 for w in patterns) / 32)
