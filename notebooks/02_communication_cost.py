# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Table 1 and Table A.1: accuracy and communication cost
#
# FedLog paper, Section 4.2. Every client's personalized model is evaluated on its own test set after each
# round; the accuracy is the mean over clients in the best round (mean $\pm$ SE over seeds). The
# communication cost is the total of all uplink and downlink messages, counted by the ledger, until the mean
# client accuracy first reaches the threshold (97% MNIST, 83% CIFAR-10, 53% CIFAR-100), or until the round
# with the highest accuracy if it never does. Markers: one-tailed Wilcoxon signed-rank tests against
# FedLog-C, paired by seed ($\Uparrow$/$\Downarrow$ p < 0.01, $\uparrow$/$\downarrow$ p < 0.05). Accuracy is that of the
# best round (how we read the paper: its FedLog-C 98.41 on MNIST matches our best round, not our round 100,
# after which the bodies overfit); the final round's accuracy stands in the CSV beside it. Beside every
# number of ours stands the paper's. FashionMNIST in the CIFAR-10 client setting (100 clients, 2 classes
# each) is the stand-in that runs without the CIFAR files; CIFAR-10/100 run when their files are present.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "quick")
datasets = os.environ.get("FEDLIB_DATASETS", "")  # e.g. "mnist": only these datasets (default: every one present)
seeds = int(os.environ.get("FEDLIB_SEEDS", "0"))  # > 0: this many seeds instead of the profile's
parts = os.environ.get("FEDLIB_PARTS", "table1,tableA1")  # which tables to (re)make; the others keep their files
methods = os.environ.get("FEDLIB_METHODS", "")  # e.g. "FedLog,FedLog-C": only these Table 1 rows are remade

# %%
import matplotlib.pyplot as plt
import numpy as np

from fedlib import claims, experiments as ex, paper, paths, plots, stats, sweep

paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

ALL = list(paper.TABLE1_METHODS)
COMPETITIVE = ["FedAvg", "LG-FedAvg 1", "FedProto", "FedLog", "FedLog-C"]
SMALL = dict(n_clients=10, train_fraction=0.02, local_epochs=1)
PROFILES = {
    "smoke": dict(table1={"mnist": dict(methods=ALL, seeds=[0, 1], rounds=2, over=SMALL)},
                  tableA1={("mnist", 3): dict(seeds=[0, 1], rounds=2, over=SMALL)}),
    # quick: 40 rounds, because the slow starters (FedDBE, LG-FedAvg 2, FedRep 1) rank low after 10 or 20; on the
    # paper-setting runs the ranking after 40 rounds differs from the one after 100 only by statistical ties
    "quick": dict(table1={"mnist": dict(methods=ALL, seeds=[0, 1], rounds=40, over={}),
                          "fashion_mnist": dict(methods=COMPETITIVE, seeds=[0, 1], rounds=5, over={})},
                  tableA1={("mnist", 3): dict(seeds=[0, 1], rounds=10, over={}),
                           ("mnist", 5): dict(seeds=[0, 1], rounds=10, over={})}),
    "paper": dict(table1={"mnist": dict(methods=ALL, seeds=list(range(10)), rounds=100, over={}),
                          "fashion_mnist": dict(methods=ALL, seeds=list(range(5)), rounds=100, over={}),
                          "cifar10": dict(methods=ALL, seeds=list(range(10)), rounds=100, over={}),
                          "cifar100": dict(methods=ALL, seeds=list(range(10)), rounds=150, over={})},
                  tableA1={(d, k): dict(seeds=list(range(10)), rounds=100 if d != "cifar100" else 150, over={})
                           for d, k in [("mnist", 3), ("mnist", 5), ("cifar10", 3), ("cifar10", 5), ("cifar100", 5)]}),
}
SETTINGS = PROFILES[profile]
if seeds == 0 and profile == "paper":  # 10 seeds as the paper; 5 (the fewest that can give a marker) on a CPU
    import torch

    seeds = 10 if torch.cuda.is_available() else 5
if seeds:
    for part in SETTINGS.values():
        for s in part.values():
            s["seeds"] = list(range(seeds))
only = [d for d in datasets.split(",") if d]
for part in SETTINGS.values():
    for key in [k for k in part if only and (k[0] if isinstance(k, tuple) else k) not in only]:
        del part[key]
if methods:
    chosen = [m.strip() for m in methods.split(",")]
    unknown = set(chosen) - set(ALL)
    if unknown:
        raise ValueError(f"FEDLIB_METHODS: unknown {sorted(unknown)}; choose from {ALL}")
    for s in SETTINGS["table1"].values():
        s["methods"] = [m for m in s["methods"] if m in chosen]
if "table1" not in parts:
    SETTINGS["table1"] = {}
if "tableA1" not in parts:
    SETTINGS["tableA1"] = {}
plots.style()


table1 = {d: s for d, s in SETTINGS["table1"].items() if ex.dataset_available(d)}
print(profile, {d: (len(s["methods"]), s["seeds"], s["rounds"]) for d, s in table1.items()})

# %% [markdown]
# ## Runs (cached: re-running this notebook recomputes nothing that finished)

# %%
runs = {}
for d, s in table1.items():
    labels = s["methods"]
    cfgs = [paper.table1_config(d, lab, seed=sd, rounds=s["rounds"], **s["over"]) for lab in labels for sd in s["seeds"]]
    res = sweep.run_many(cfgs)
    runs[d] = {lab: res[i * len(s["seeds"]):(i + 1) * len(s["seeds"])] for i, lab in enumerate(labels)}

# %% [markdown]
# ## Table 1
# With n seeds the smallest one-tailed Wilcoxon p-value is $2^{-n}$: markers need at least 5 seeds (p < 0.05)
# or 7 (p < 0.01), so the quick profile shows none; the paper profile runs 10.

# %%
def fmt_acc(m, se, marker=""):
    return f"{m:.2f}±{se:.2f}{marker}"


def fmt_bits(b, se=None, marker=""):
    return stats.format_bits(b) + (f"±{stats.format_bits(se)}" if se is not None else "") + marker


summary = {}
for d, by_label in runs.items():
    rows = stats.table_rows(by_label, paper.THRESHOLD[d], reference="FedLog-C")
    summary[d] = {r["method"]: r for r in rows}  # read again by the last two cells
    reported = paper.TABLE1.get(d, {})
    csv_rows, pretty = [], []
    for r in rows:
        p_acc, p_bits = reported.get(r["method"], (float("nan"), float("nan")))
        csv_rows.append({"method": r["method"], "accuracy_mean": r["accuracy_mean"], "accuracy_se": r["accuracy_se"],
                         "bits_to_threshold": r["bits_to_threshold"], "paper_accuracy": p_acc, "paper_bits": p_bits,
                         "final_accuracy_mean": r["final_accuracy_mean"], "final_accuracy_se": r["final_accuracy_se"],
                         "seeds": len(table1[d]["seeds"]), "rounds": table1[d]["rounds"], "profile": profile})
        pretty.append({"method": r["method"],
                       "accuracy (ours)": fmt_acc(r["accuracy_mean"], r["accuracy_se"], r["accuracy_marker"]),
                       "accuracy (paper)": "-" if np.isnan(p_acc) else f"{p_acc:.2f}",
                       "comm cost (ours)": fmt_bits(r["bits_to_threshold"], r["bits_se"], r["bits_marker"]),
                       "comm cost (paper)": "-" if np.isnan(p_bits) else stats.format_bits(p_bits),
                       "reached threshold": r["reached"],
                       "seeds x rounds": f"{len(table1[d]['seeds'])} x {table1[d]['rounds']} ({profile})"})
    keep = "method" if methods else None  # a run for some methods keeps the other methods' rows
    plots.save_table(csv_rows, f"table1_{d}", keep_other=keep)
    plots.save_table(pretty, f"table1_{d}_pretty", keep_other=keep)
    s = table1[d]
    print(f"\n{d}: {len(s['seeds'])} seeds, {s['rounds']} rounds, threshold {paper.THRESHOLD[d]:.0%}")
    for p in pretty:
        print(f"  {p['method']:12s} {p['accuracy (ours)']:>16s} (paper {p['accuracy (paper)']:>6s})   "
              f"{p['comm cost (ours)']:>24s} (paper {p['comm cost (paper)']:>8s})  reached {p['reached threshold']}")

# %% [markdown]
# ## Bits of one round, from the ledger (the last round: every method's steady state)

# %%
rows = []
for d, by_label in runs.items():
    for lab, rs in by_label.items():
        rows.append({"dataset": d, "method": lab, "uplink_bits": rs[0]["rounds"]["up_bits"][-1],
                     "downlink_bits": rs[0]["rounds"]["down_bits"][-1]})
if rows:
    plots.save_table(rows, "comm_bits_per_round", keep_other=("dataset", "method"))
for r in rows:
    print(f"{r['dataset']:13s} {r['method']:12s} up {r['uplink_bits']:>12,d} bits  down {r['downlink_bits']:>12,d} bits")

# %% [markdown]
# ## Accuracy vs communicated bits and vs rounds

# %%
for d, by_label in runs.items():
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    others = [c for j, c in enumerate(plt.get_cmap("tab20").colors) if j not in (6, 7)]  # red is FedLog's
    for i, (lab, rs) in enumerate(by_label.items()):
        acc = np.array([r["rounds"]["acc_mean"] for r in rs]) * 100
        bits = np.cumsum(np.array(rs[0]["rounds"]["up_bits"]) + np.array(rs[0]["rounds"]["down_bits"]))
        method = paper.TABLE1_METHODS[lab][0]
        color = plots.PALETTE[method] if method.startswith("fedlog") else others[i % len(others)]
        lw = 2.2 if method.startswith("fedlog") else 1.2
        ax1.plot(bits, acc.mean(0), label=lab, color=color, lw=lw)
        plots.mean_band(ax2, np.arange(1, acc.shape[1] + 1), acc, lab, color=color, spread="se")
    ax1.set_xscale("log"); ax1.set_xlabel("communicated bits (up + down, all clients)"); ax1.set_ylabel("accuracy (%)")
    ax2.set_xlabel("round"); ax2.set_ylabel("accuracy (%)")
    for ax in (ax1, ax2):
        ax.axhline(100 * paper.THRESHOLD[d], color="k", ls=":", lw=0.8)
    ax1.legend(fontsize=7, ncol=2)
    fig.suptitle(f"{d}: mean client accuracy ({len(table1[d]['seeds'])} seeds, {table1[d]['rounds']} rounds, "
                 f"{profile} profile)")
    fig.tight_layout()
    plots.save_figure(fig, f"accuracy_vs_bits_{d}" + ("_paper" if profile == "paper" else ""))  # quick stays

# %% [markdown]
# ## Table A.1: more classes per client
# The paper gives no thresholds for Table A.1; its rule (Section 4.2) is "the largest integer of accuracy which all
# competitive algorithms have reached in all seeds", computed here from our runs (`stats.common_threshold`) and
# printed in the table. Table 1's 97% is reached by no method with 3 or 5 classes per client.

# %%
for (d, k), s in SETTINGS["tableA1"].items():
    if not ex.dataset_available(d):
        continue
    cfgs = {lab: [paper.table1_config(d, lab, seed=sd, rounds=s["rounds"], classes_per_client=k, **s["over"])
                  for sd in s["seeds"]] for lab in paper.TABLE_A1_METHODS}
    by_label = {lab: sweep.run_many(c) for lab, c in cfgs.items()}
    threshold = stats.common_threshold(by_label)  # the paper's rule; 97% is reached by no method here
    print(f"{d}, {k} classes per client: threshold {threshold:.0%}, the largest integer accuracy every method reaches "
          f"in every seed")
    rows = stats.table_rows(by_label, threshold, reference="FedLog-C")
    reported = paper.TABLE_A1.get((d, k), {})
    out = []
    for r in rows:
        p_acc, p_bits = reported.get(r["method"], (float("nan"), float("nan")))
        out.append({"method": r["method"], "accuracy_mean": r["accuracy_mean"], "accuracy_se": r["accuracy_se"],
                    "accuracy_marker": r["accuracy_marker"], "bits_to_threshold": r["bits_to_threshold"],
                    "bits_marker": r["bits_marker"], "threshold": threshold, "paper_accuracy": p_acc,
                    "paper_bits": p_bits, "seeds": len(s["seeds"]), "rounds": s["rounds"]})
        print(f"{d} {k} classes/client {r['method']:12s} {fmt_acc(r['accuracy_mean'], r['accuracy_se'], r['accuracy_marker']):>16s}"
              f" (paper {p_acc:.2f})  {fmt_bits(r['bits_to_threshold'], None, r['bits_marker']):>10s}"
              f" (paper {stats.format_bits(p_bits)})")
    plots.save_table(out, f"tableA1_{d}_{k}classes")

# %% [markdown]
# ## What the numbers say

# %%
ledger = claims.Ledger("02_communication_cost", profile)
for d, rows in summary.items():
    rank = sorted(rows, key=lambda m: -rows[m]["accuracy_mean"])
    print(f"{d}: ranking by best-round accuracy (Table 1's reading): " + " > ".join(rank))
    final_rank = sorted(rows, key=lambda m: -rows[m]["final_accuracy_mean"])
    print(f"{d}: ranking by final-round accuracy:                  " + " > ".join(final_rank))
    cheapest = min(rows, key=lambda m: rows[m]["bits_to_threshold"])
    print(f"{d}: least communication to the threshold (or best round): {cheapest}")
    runs_of = dict(seeds=len(table1[d]["seeds"]), rounds=table1[d]["rounds"])
    if "FedLog-C" in rows and len(rows) > 1:
        others = [m for m in rows if m != "FedLog-C"]
        ledger.record("FedLog", f"Table 1 ({d})", "FedLog-C reaches the best accuracy (best round)",
                      rows["FedLog-C"]["accuracy_mean"], max(rows[m]["accuracy_mean"] for m in others),
                      "ours >= reference", **runs_of)
        ledger.record("FedLog", f"Table 1 ({d})", "FedLog-C reaches the best accuracy (final round)",
                      rows["FedLog-C"]["final_accuracy_mean"], max(rows[m]["final_accuracy_mean"] for m in others),
                      "ours >= reference", **runs_of)
        ledger.record("FedLog", f"Table 1 ({d})", "FedLog-C needs the least communication (bits to the threshold, "
                      "or to the best round)", rows["FedLog-C"]["bits_to_threshold"],
                      min(rows[m]["bits_to_threshold"] for m in others), "ours <= reference", **runs_of)
    for m in ("FedAvg", "FedLog", "FedLog-C"):
        if m in rows and m in paper.TABLE1.get(d, {}):
            gap = rows[m]["accuracy_mean"] - paper.TABLE1[d][m][0]
            print(f"{d}: {m} {rows[m]['accuracy_mean']:.2f} vs paper {paper.TABLE1[d][m][0]:.2f} ({gap:+.2f} points, "
                  f"{table1[d]['rounds']} rounds here)")
            if m != "FedAvg":
                ledger.record("FedLog", f"Table 1 ({d})", f"{m}'s accuracy is reproduced within 1.5 points",
                              rows[m]["accuracy_mean"], paper.TABLE1[d][m][0], "abs(ours - reference) <= 1.5",
                              paper_value=paper.TABLE1[d][m][0], **runs_of)

# %% [markdown]
# ## Is the ranking the paper setting's?
# Kendall's tau between the ranking here and the paper's Table 1, and, in a shorter profile, the ranking of the
# paper setting's own runs when they are cached (run the paper profile once to have them). A discordant pair that
# the paper setting separates by less than 2 standard errors is one of its ties; `contradicted` lists the others.
# Written to figures/table1_<dataset>_ranking_<profile>.csv.

# %%
def ranks(scores):
    return {m: i + 1 for i, m in enumerate(sorted(scores, key=lambda m: -scores[m]))}


for d, rows in summary.items():
    if methods:  # a ranking of some methods only would mislead
        break
    here = {m: r["accuracy_mean"] for m, r in rows.items()}
    published = {m: acc for m, (acc, _) in paper.TABLE1.get(d, {}).items()}
    rank_here, rank_published = ranks(here), ranks(published)
    out = [{"method": m, "accuracy": here[m], "rank": rank_here[m], "paper_accuracy": published.get(m, np.nan),
            "paper_rank": rank_published.get(m, "")} for m in here]
    if published:
        ag = stats.rank_agreement(here, published)
        print(f"{d}: Kendall tau with the paper's Table 1: {ag['tau']:.2f} ({ag['methods']} methods, p = {ag['p']:.3g})")
        ledger.record("FedLog", f"Table 1 ({d})", "our ranking by accuracy agrees with the paper's (Kendall tau >= 0.5)",
                      ag["tau"], 0.5, "ours >= reference", seeds=len(table1[d]["seeds"]), rounds=table1[d]["rounds"])
    full = PROFILES["paper"]["table1"].get(d)
    if profile != "paper" and full:
        cfg = lambda lab, sd: paper.table1_config(d, lab, seed=sd, rounds=full["rounds"])  # noqa: E731
        cached = [sd for sd in range(10) if all(ex.is_cached(cfg(lab, sd)) for lab in here)]
        if len(cached) < 2:
            print(f"{d}: the paper setting's runs are not cached (seeds {cached}); run the paper profile to compare")
        else:
            ref = {r["method"]: r for r in stats.table_rows({lab: [ex.run(cfg(lab, sd)) for sd in cached] for lab in here},
                                                            paper.THRESHOLD[d], reference="FedLog-C")}
            ref_acc = {m: r["accuracy_mean"] for m, r in ref.items()}
            ag = stats.rank_agreement(here, ref_acc, {m: r["accuracy_se"] for m, r in ref.items()})
            print(f"{d}: Kendall tau with the paper setting ({len(cached)} seeds x {full['rounds']} rounds): "
                  f"{ag['tau']:.2f}; discordant pairs {ag['discordant']}; of them not ties there: {ag['contradicted']}")
            rank_ref = ranks(ref_acc)
            for row in out:
                row.update(paper_setting_accuracy=ref_acc[row["method"]], paper_setting_rank=rank_ref[row["method"]])
    plots.save_table(sorted(out, key=lambda r: r["rank"]), f"table1_{d}_ranking_{profile}")
if not methods and "table1" in parts:  # a run of some methods or parts only would leave the claims half made
    ledger.save()
