"""Summary statistics of the paper's tables: mean +- standard error, one-tailed Wilcoxon signed-rank
tests against a reference method with the paper's markers, and communication to reach a threshold."""
from __future__ import annotations

import numpy as np
from scipy import stats as sps


def mean_se(values) -> tuple[float, float]:
    v = np.asarray(values, dtype=float)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0


def wilcoxon_marker(values, reference) -> tuple[str, float, float]:
    """Paired one-tailed Wilcoxon signed-rank tests of `values` against `reference` (same seeds).
    Returns (marker, p_greater, p_less): "⇑"/"⇓" for p < 0.01, "↑"/"↓" for p < 0.05, "" otherwise."""
    a, b = np.asarray(values, float), np.asarray(reference, float)
    if len(a) != len(b):
        raise ValueError("paired test needs the same seeds for both methods")
    if len(a) < 2 or np.allclose(a, b):
        return "", 1.0, 1.0
    p_greater = float(sps.wilcoxon(a, b, alternative="greater").pvalue)
    p_less = float(sps.wilcoxon(a, b, alternative="less").pvalue)
    for p, strong, weak in ((p_greater, "⇑", "↑"), (p_less, "⇓", "↓")):
        if p < 0.01:
            return strong, p_greater, p_less
        if p < 0.05:
            return weak, p_greater, p_less
    return "", p_greater, p_less


def bits_to_threshold(acc, up_bits, down_bits, threshold: float) -> tuple[float, int, bool]:
    """Total bits (uplink + downlink, all clients) until the accuracy first reaches `threshold`; if it never
    does, until the round with the highest accuracy (Table 1). Returns (bits, round index, reached)."""
    acc = np.asarray(acc, float)
    per_round = np.asarray(up_bits, float) + np.asarray(down_bits, float)
    hit = np.nonzero(acc >= threshold)[0]
    reached = len(hit) > 0
    r = int(hit[0]) if reached else int(np.argmax(acc))
    return float(per_round[: r + 1].sum()), r, reached


def format_bits(bits: float) -> str:
    """The paper's units: Mb and Gb are megabits and gigabits."""
    return f"{bits / 1e9:.2f}Gb" if bits >= 1e9 else f"{bits / 1e6:.2f}Mb"
