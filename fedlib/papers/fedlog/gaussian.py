"""Notebook 04 (Gaussian representations: FedLog's Eq. 9 and Thm. 2, FedProf's Props. 1-2, FedLog's Fig. A.1/A.2):
the checks, figures and tables, and its claims as functions of their numbers (tested on made-up numbers in
tests/test_fedlog_claims.py)."""
from __future__ import annotations

import numpy as np
import torch

from ... import claims as rules, outputs
from .reported import QUOTES
from ... import data, expfam, plots
from .analysis import representations as R

NOTEBOOK = "04_gaussian_representations"


def eq9_table() -> float:
    """Eq. 9's closed-form log-partition against the trapezoid rule on [-12, 12]^m, for m = 1-3 and 2, 3, 5 classes;
    saved as eq9_log_partition; returns the largest relative error."""
    rows = []
    rng = np.random.default_rng(0)
    for m in (1, 2, 3):
        for classes in (2, 3, 5):
            eta = rng.normal(size=(classes, m)) * 1.5
            closed = float(expfam.log_partition(torch.tensor(eta)))
            numeric = expfam.log_partition_numeric(eta)
            rows.append({"m": m, "classes": classes, "closed_form": closed, "numerical": numeric,
                         "relative_error": abs(closed - numeric) / abs(numeric)})
    outputs.save_table(rows, "eq9_log_partition")
    return max(r["relative_error"] for r in rows)


def thm2_check() -> tuple[float, list[str]]:
    """Thm. 2: (a) two different representation sets with the same summed statistic give the same posterior and MAP
    head, (b) moving one point moves the head, (c) the summed client statistics are the pooled statistic. Returns
    the relative MAP difference of (a) and what to print."""
    g = torch.Generator().manual_seed(0)
    C, m, n = 4, 6, 200
    phi = torch.randn(n, m - 1, generator=g, dtype=torch.float64) + torch.arange(m - 1, dtype=torch.float64) / 3
    y = torch.randint(0, C, (n,), generator=g)
    twin = expfam.same_statistic_twin(phi, y, shift=2.0)
    T, T_twin = expfam.sufficient_statistics(phi, y, C), expfam.sufficient_statistics(twin, y, C)
    moved = phi.clone()
    moved[0] += 0.5
    T_moved = expfam.sufficient_statistics(moved, y, C)
    eta, eta_twin, eta_moved = (expfam.map_head(t, n) for t in (T, T_twin, T_moved))
    twin_gap = float((eta - eta_twin).abs().max() / eta.abs().max())  # relative
    probe = torch.randn(10, C, m, generator=g, dtype=torch.float64)
    post = lambda t: torch.stack([expfam.log_posterior(e, t, n) for e in probe])  # noqa: E731
    lines = [f"(a) max |phi - twin| = {float((phi - twin).abs().max()):.2f}; "
             f"max |T - T_twin| = {float((T - T_twin).abs().max()):.1e}; "
             f"max |MAP - MAP_twin| = {float((eta - eta_twin).abs().max()):.1e}; "
             f"max |log posterior difference| at 10 random heads = {float((post(T) - post(T_twin)).abs().max()):.1e}",
             f"(b) one point moved by 0.5: max |MAP - MAP_moved| = {float((eta - eta_moved).abs().max()):.3f}"]
    clients = torch.tensor_split(torch.randperm(n, generator=g), 5)
    summed = sum(expfam.sufficient_statistics(phi[c], y[c], C) for c in clients)
    lines.append(f"(c) 5 clients: max |sum of client statistics - pooled statistic| = "
                 f"{float((summed - T).abs().max()):.1e}; max |MAP(sum) - MAP(pooled)| = "
                 f"{float((expfam.map_head(summed, n) - eta).abs().max()):.1e}")
    return twin_gap, lines


def normality_study(settings: dict) -> tuple[list[dict], dict]:
    """FedProf Props. 1-2: the share of dimensions passing D'Agostino-Pearson's K^2 at 5% for fc1's pre-activations
    and conv2's channel-fused outputs, untrained and centrally trained, over all test images and within each class;
    saved as fedprof_normality. Returns the rows and each layer's outputs (for the QQ-plots)."""
    results, examples = [], {}
    for name in settings["datasets"]:
        ds = data.load_dataset(name)
        k = settings["train_samples"]
        trained = R.train_centralized("cnn_mnist", ds.train_x[:k], ds.train_y[:k], 10, settings["epochs"])
        x, yt = ds.test_x[: settings["test_samples"]], ds.test_y[: settings["test_samples"]]
        for state, model in (("untrained", R.untrained("cnn_mnist", (1, 28, 28), 10)), ("trained", trained)):
            layers = {"dense fc1 (pre-activation)": R.layer_output(model, x, 9),
                      "conv2 (channel-fused)": R.fused_channels(R.layer_output(model, x, 4))}
            for layer, z in layers.items():
                overall = R.normality(z)
                per_class = [R.normality(z[yt == c])["passing"] for c in range(10) if int((yt == c).sum()) >= 20]
                results.append({"dataset": name, "model": state, "layer": layer, "dims": z.shape[1],
                                "passing_all_samples": overall["passing"],
                                "passing_within_class": float(np.mean(per_class))})
                examples[(name, state, layer)] = z.numpy()
    outputs.save_table(results, "fedprof_normality")
    return results, examples


def qq_figure(examples: dict, settings: dict, profile: str):
    """QQ-plots of two dimensions of each layer against the normal, untrained and trained; saved as fedprof_qq."""
    import matplotlib.pyplot as plt
    from scipy import stats as sps

    name = settings["datasets"][0]
    fig, axes = plt.subplots(2, 4, figsize=(13, 6))
    for row, state in enumerate(("untrained", "trained")):
        for col, (layer, dim) in enumerate([("dense fc1 (pre-activation)", 0), ("dense fc1 (pre-activation)", 1),
                                            ("conv2 (channel-fused)", 0), ("conv2 (channel-fused)", 1)]):
            z = examples[(name, state, layer)][:, dim]
            sps.probplot((z - z.mean()) / (z.std() + 1e-12), dist="norm", plot=axes[row, col])
            axes[row, col].set_title(f"{state}: {layer.split(' ')[0]} dim {dim}", fontsize=9)
            axes[row, col].get_lines()[0].set_markersize(2)
    fig.suptitle(f"QQ-plots against the normal distribution ({name}, {settings['test_samples']} test images)")
    fig.tight_layout()
    plots.caption(fig, profile, 1, "centrally trained",
                  note=f"{settings['epochs']} epochs on {settings['train_samples']} images")
    outputs.save_figure(fig, "fedprof_qq")
    return fig


def figure_a1(abl: dict, alphas: list, rounds: int, profile: str):
    """Fig. A.1: each client's representations after FedLog-C at each alpha (seed 0); saved."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(alphas), figsize=(2.6 * len(alphas), 2.8))
    for ax, a in zip(axes, alphas):
        shot = abl["snapshots"][a]
        for c, marker in enumerate(["o", "^"]):
            f, yy = shot.features[c].numpy(), shot.labels[c].numpy()
            ax.scatter(f[:, 0], f[:, 1], c=np.array(["tab:blue", "tab:green"])[yy], marker=marker, s=10,
                       edgecolors="k", linewidths=0.2)
        ax.set(title=f"α = {a}", xlabel="φ₁", ylabel="φ₂")
    fig.suptitle("Fig. A.1: local representations after FedLog-C (seed 0; colour: class, o / ^: client 0 / 1)")
    fig.tight_layout()
    plots.caption(fig, profile, 1, rounds)
    outputs.save_figure(fig, "figA1_fedlogc_representations")
    return fig


def figure_a2(abl: dict, alphas: list, seeds: int, rounds: int, profile: str) -> tuple[list[dict], np.ndarray]:
    """Fig. A.2: the Henze-Zirkler p-values (pooled and per client, mean +- SE over seeds) against alpha, and its
    table (figA2_hz_pvalues, accuracy in %). Returns the rows and the per-client p-values [seeds, alphas]."""
    import matplotlib.pyplot as plt

    x_pos = np.arange(len(alphas))
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    pooled = abl["p"].mean(axis=2)  # [seeds, alphas]
    per_client = abl["p_client"].mean(axis=(2, 3))
    plots.mean_band(ax, x_pos, pooled, "classes, clients pooled", spread="se")
    plots.mean_band(ax, x_pos, per_client, "classes, per client", spread="se")
    ax.axhline(0.05, color="k", ls=":", lw=1, label="5%")
    ax.set_xticks(x_pos, [str(a) for a in alphas])
    ax.set_xlabel("auxiliary-loss weight α")
    ax.set_ylabel("HZ p-value")
    ax.legend(fontsize=8)
    ax.set_title("Fig. A.2: Henze-Zirkler p-values (mean ± SE)", fontsize=9)
    fig.tight_layout()
    plots.caption(fig, profile, seeds, rounds)
    outputs.save_figure(fig, "figA2_hz_pvalues")
    rows = [{"alpha": a, "p_pooled_mean": float(pooled[:, j].mean()), "p_per_client_mean": float(per_client[:, j].mean()),
             "test_accuracy_mean": 100 * float(abl["test_acc"][:, j].mean())} for j, a in enumerate(alphas)]  # in %
    outputs.save_table(rows, "figA2_hz_pvalues")
    return rows, per_client


def summary(rows: list[dict], normality: list[dict]) -> list[str]:
    """What the Fig. A.2 and Prop. 1 numbers say, in words."""
    base, best = rows[0], max(rows[1:], key=lambda r: r["p_per_client_mean"])
    rising = all(rows[j + 1]["p_per_client_mean"] >= rows[j]["p_per_client_mean"] for j in range(len(rows) - 1))
    lines = [f"Per client, the mean p-value goes from {base['p_per_client_mean']:.3f} without the auxiliary loss to "
             f"{best['p_per_client_mean']:.3f} at alpha = {best['alpha']}; it "
             f"{'passes' if best['p_per_client_mean'] > 0.05 else 'does not pass'} 5% there. With both clients pooled "
             f"the largest mean p-value is {max(r['p_pooled_mean'] for r in rows):.3f}.",
             "The per-client p-values rise monotonically with alpha." if rising else
             "The per-client p-values do not rise monotonically with alpha in our runs."]
    for r in normality:
        if r["model"] == "trained" and r["layer"].startswith("dense"):
            lines.append(f"FedProf Prop. 1, {r['dataset']}: {r['passing_within_class']:.0%} of trained fc1 dimensions "
                         f"pass within a class, {r['passing_all_samples']:.0%} over all samples.")
    return lines


def elongation(abl: dict, alphas: list) -> list[str]:
    """Per alpha, the ratio of the smaller to the larger eigenvalue of each class's covariance (seed 0)."""
    lines = []
    for a in alphas:
        shot = abl["snapshots"][a]
        f, yy = torch.cat(shot.features).numpy(), torch.cat(shot.labels).numpy()
        ratios = [np.linalg.eigvalsh(np.cov(f[yy == c].T))[[0, -1]] for c in range(2)]
        lines.append(f"alpha {a:<6}: eigenvalue ratio per class " + ", ".join(f"{lo / hi:.3f}" for lo, hi in ratios)
                     + "; spread (largest eigenvalue) " + ", ".join(f"{hi:.3f}" for lo, hi in ratios))
    return lines


# FedProf's Proposition 1, in its words (seeds/004)
PROP1 = ("The representations from linear operators (e.g., a pre-activation dense layer or a plain convolutional "
         "layer) in a neural network tend to follow the Gaussian distribution")


def eq9_exact(ledger, error: float) -> str:
    return ledger.record("FedLog", "Eq. 9", "the closed-form log-partition equals numerical integration (relative "
                         "error < 1e-6)", error, 1e-6, rules.comparison("<"), kind="claim", quote=QUOTES["eq9"])


def thm2_same_head(ledger, gap: float) -> str:
    return ledger.record("FedLog", "Thm. 2", "two different representation sets with the same summed statistic give "
                         "the same MAP head (relative difference < 1e-8)", gap, 1e-8, rules.comparison("<"),
                         kind="claim", quote=QUOTES["thm2"])


def prop1_gaussian(ledger, normality: list[dict]) -> str:
    """FedProf Prop. 1 ("tend to follow the Gaussian distribution": no number, so no verdict): the share of a trained
    fc1's dimensions that pass K^2 at 5% within a class, per dataset, reported."""
    fc = [r["passing_within_class"] for r in normality if r["model"] == "trained" and r["layer"].startswith("dense")]
    return ledger.record("FedProf", "Prop. 1", "pre-activations of a trained dense layer (fc1) tend to be Gaussian "
                         "within a class (ours: the share of dimensions passing K^2 at 5%, per dataset)", fc, None,
                         rules.statement(), kind="claim", quote=PROP1)


def more_gaussian(ledger, rows: list[dict], per_client: np.ndarray, rounds: int) -> list[str]:
    """Fig. A.2: at the best alpha the per-client HZ p-value exceeds alpha = 0's, and passes 5%, seed by seed."""
    best = max(rows[1:], key=lambda r: r["p_per_client_mean"])
    j = rows.index(best)
    at_best = [float(v) for v in per_client[:, j]]
    return [ledger.compare("FedLog", "Fig. A.2", "the auxiliary loss makes a client's class representations more "
                           f"Gaussian: the per-client HZ p-value at the best alpha ({best['alpha']}) exceeds that at "
                           "alpha = 0", at_best, [float(v) for v in per_client[:, 0]], ">", rounds=rounds,
                           kind="claim", quote=QUOTES["figA2"]),
            ledger.record("FedLog", "Fig. A.2", "with the auxiliary loss the per-client representations pass "
                          "Henze-Zirkler at 5%, seed by seed (ours: each seed's p-value at the best alpha)", at_best,
                          0.05, rules.comparison(">="), kind="claim", quote=QUOTES["figA2"], seeds=len(at_best),
                          rounds=rounds)]


def record(error: float, gap: float, normality: list[dict], rows: list[dict], per_client, rounds: int, profile: str):
    """Notebook 04's claims, saved; returns the ledger."""
    ledger = rules.ClaimsLedger(NOTEBOOK, profile)
    eq9_exact(ledger, error)
    thm2_same_head(ledger, gap)
    prop1_gaussian(ledger, normality)
    more_gaussian(ledger, rows, per_client, rounds)
    ledger.save()
    return ledger
