import numpy as np
import pytest

from fedlib import stats


def test_mean_se():
    m, se = stats.mean_se([1.0, 2.0, 3.0, 4.0])
    assert m == 2.5 and se == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)


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
