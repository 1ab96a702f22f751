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
# # Convergence: Fig. 2, Fig. 3 (left) and Thms. 3-5
#
# FedLog paper, Sections 3.5, 4.3 and 4.4.
# 1. **Fig. 2**: every method trains each client to its local optimum before each aggregation
#    (`Config.local_optimum`: a client stops after the first epoch whose loss is not 1% below its best,
#    `local_epochs` is the cap). CelebA and Sent140 (LEAF) run when their files are present; otherwise the
#    same experiment runs on MNIST and FashionMNIST with many small clients (100 clients, 2 classes, 30
#    training samples each).
# 2. **Fig. 3 (left)**: flexible architectures. A random half of the clients get the smaller body, every
#    client its own initialisation; the global head is shared. CIFAR-100 when present; MNIST and
#    FashionMNIST (50 clients, 2 classes, 5% of the data) in any case. On MNIST-sized inputs the smaller body
#    halves conv2 (`models.cnn_mnist`: there is no second-last fully connected layer to remove).
# 3. Accuracy vs communicated bits for the same runs.
# 4. **Thms. 3-5** measured: plain SGD on the bodies at several step sizes; every client's local loss before
#    and after each round, the body gradient norm of Thm. 5, and how often the step size was inside
#    Thm. 4's bound (estimated from the Hessian; `fedlib.convergence`).
#
# Methods: FedLog, FedLog-C, LG-FedAvg 1 (one global layer) and FedProto, as the paper compares them.

# %% tags=["parameters"]
import os

profile = os.environ.get("FEDLIB_PROFILE", "lab")  # by hand: quick's settings, figures under build/lab/

# %%
import numpy as np

from fedlib import claims, convergence, experiments as ex, papers, paths, plots, stats, sweep
from fedlib.papers import fedlog

profile = paths.use_profile(profile)  # checks the name; smoke output goes under build/smoke/, never figures/

METHODS = fedlog.CONVERGENCE_METHODS
SETTINGS = papers.settings(fedlog.CONVERGENCE_PROFILES, profile)
plots.style()
print(profile, SETTINGS)


def curves(results):
    return np.array([r.curve() for r in results]) * 100


def faster_statement(title, by_label):
    """Convergence speed from the mean curves over seeds: accuracy after round 1, the mean accuracy over all rounds
    (the area under the curve: higher = reached high accuracy in fewer rounds) and the first round within one
    point of the best final accuracy of any method."""
    mean = {lab: curves(rs).mean(0) for lab, rs in by_label.items()}
    best = max(m[-1] for m in mean.values())
    fmt = lambda r: "never" if r is None else str(r)
    for lab, m in mean.items():
        print(f"  {title} {lab:12s} round 1: {m[0]:5.2f}%  mean over rounds: {m.mean():5.2f}%  "
              f"first round within 1 point of {best:.2f}%: {fmt(stats.first_round_reaching(m, best - 1))}")
    auc = {lab: m.mean() for lab, m in mean.items()}
    ours = [auc[k] for k in auc if k.startswith("FedLog")]
    theirs = [auc[k] for k in auc if not k.startswith("FedLog")]
    verdict = "yes" if min(ours) > max(theirs) else ("no" if max(ours) < min(theirs) else "partly")
    print(f"  {title}: FedLog and FedLog-C both above LG-FedAvg 1 and FedProto in mean accuracy over rounds: {verdict}")
    return min(ours), max(theirs)


def draw(by_dataset, name, title, spread, verdict=""):
    shown = {d: {lab: {"method": METHODS[lab][0], "acc": curves(rs),
                       "bits": np.cumsum(rs[0].bits_up + rs[0].bits_down)}
                 for lab, rs in by_label.items()} for d, by_label in by_dataset.items()}
    fig = plots.rounds_and_bits(shown, title, spread, verdict)
    any_runs = next(iter(next(iter(by_dataset.values())).values()))
    plots.caption(fig, profile, len(any_runs), any_runs[0].n_rounds)
    plots.save_figure(fig, name)


def summary_rows(by_dataset, experiment):
    rows = []
    for d, by_label in by_dataset.items():
        for lab, rs in by_label.items():
            best = [100 * r.best() for r in rs]
            final = [100 * r.last() for r in rs]
            total_bits = rs[0].total_bits()
            rows.append({"experiment": experiment, "dataset": d, "method": lab, "seeds": len(rs),
                         "rounds": rs[0].n_rounds, "final_accuracy_mean": float(np.mean(final)),
                         "final_accuracy_std": float(np.std(final, ddof=1)) if len(rs) > 1 else 0.0,
                         "best_accuracy_mean": float(np.mean(best)), "total_bits": total_bits})
    return rows


# %% [markdown]
# ## Fig. 2: each client trained to its local optimum before every aggregation

# %%
leaf_sets = [d for d in ("celeba", "sent140") if ex.dataset_available(d)]
fig2_sets = leaf_sets or ["mnist", "fashion_mnist"]
fig3_sets = [d for d in ("cifar100", "mnist", "fashion_mnist") if d in ("mnist", "fashion_mnist") or ex.dataset_available(d)]
plan = {("fig2", d): fedlog.fig2_configs(d, SETTINGS["fig2"]) for d in fig2_sets}
plan.update({("fig3", d): fedlog.fig3_configs(d, SETTINGS["fig3"]) for d in fig3_sets})
# every run of both figures in one sweep, so that the worker processes (one per core) stay busy to the end
_ = sweep.run_many([c for by_label in plan.values() for cs in by_label.values() for c in cs])
fig2 = {d: {lab: sweep.run_many(cs) for lab, cs in plan["fig2", d].items()} for d in fig2_sets}
speed = {d: faster_statement(f"Fig. 2, {d}", by_label) for d, by_label in fig2.items()}
verdict = "FedLog and FedLog-C converge faster (mean accuracy over rounds above LG-FedAvg 1's and FedProto's): " + \
    ", ".join(f"{d} {'yes' if ours > theirs else 'no'} ({ours:.1f}% vs {theirs:.1f}%)" for d, (ours, theirs) in speed.items())
draw(fig2, "fig2_local_optimum", "Fig. 2: local optimum before each aggregation (mean ± std over seeds)", "std", verdict)

# %% [markdown]
# ## Fig. 3 (left): flexible architectures

# %%
fig3 = {d: {lab: sweep.run_many(cs) for lab, cs in plan["fig3", d].items()} for d in fig3_sets}
draw(fig3, "fig3_left_flexible", "Fig. 3 (left): half the clients with a smaller body (mean ± SE over seeds)", "se")
for d, by_label in fig3.items():
    faster_statement(f"Fig. 3 left, {d}", by_label)
    best = {lab: stats.mean_se([100 * r.best() for r in rs]) for lab, rs in by_label.items()}
    order = sorted(best, key=lambda k: -best[k][0])
    holds = best["FedLog-C"][0] > best["FedProto"][0] > best["LG-FedAvg 1"][0]
    print(f"  {d}: best-round accuracy " + ", ".join(f"{k} {best[k][0]:.2f}±{best[k][1]:.2f}" for k in order)
          + f". The paper's order on CIFAR-100 ({' > '.join(f'{k} {v}' for k, v in fedlog.FIG3_LEFT_CIFAR100.items())}) "
          + ("holds in direction here" if holds else "does not hold here") + "; the claims below decide it over seeds")
plots.save_table(summary_rows(fig2, "fig2_local_optimum") + summary_rows(fig3, "fig3_left_flexible"),
                 "convergence_summary")

# %% [markdown]
# ## Thms. 3-5: local losses and gradients under plain SGD
# FedLog on MNIST with SGD on the bodies at several step sizes $\zeta$. Per client and round: the local loss
# before and after the round, $\|\nabla_\theta \mathcal{L}_c\|$ at the start of the round (Thm. 5), and the
# smoothness $L_1$ estimated from the Hessian, so we can say how often $\zeta < 2/L_1$ (the noise-free form of
# Thm. 4's bound; the full bound is smaller) held.

# %%
s = SETTINGS["thm"]
base = fedlog.paper_config("mnist", "fedlog", rounds=s["rounds"], **s["over"])
study = convergence.step_size_study(base, s["steps"])
rows = []
for zeta, tr in study.items():
    rows.append({"step_size": zeta, "inside_bound": convergence.inside_bound(tr, zeta),
                 "loss_decreased": convergence.fraction_decreased(tr),
                 "local_training_decreased": convergence.fraction_decreased(tr, "loss_before", "loss_local"),
                 "head_step_decreased": convergence.fraction_decreased(tr, "loss_local", "loss_after"),
                 "rounds_run": len(tr["loss_after"]), "diverged_round": tr.get("diverged_round", "-"),
                 "final_accuracy": 100 * tr["acc_mean"][-1] if tr["acc_mean"] else float("nan")})
    r = rows[-1]
    print(f"zeta {zeta:<6g} inside 2/L1 in {r['inside_bound']:.0%} of client-rounds; "
          + (f"diverged in round {r['diverged_round']}; " if r["diverged_round"] != "-" else "")
          + (f"local loss decreased in {r['loss_decreased']:.0%} of {r['rounds_run']} x clients rounds "
             f"(by local training in {r['local_training_decreased']:.0%}, by the new head in "
             f"{r['head_step_decreased']:.0%}), accuracy {r['final_accuracy']:.1f}%" if r["rounds_run"]
             else "before any round finished"))
plots.save_table(rows, "thm4_step_sizes")

fig = plots.step_sizes(study, "Thms. 3-5 measured: FedLog on MNIST, plain SGD on the bodies at step size ζ")
plots.caption(fig, profile, 1, s["rounds"], note=f"{s['over'].get('n_clients', 50)} clients")
plots.save_figure(fig, "thm3_5_convergence")

# %% [markdown]
# ## What the numbers say

# %%
ledger = claims.ClaimsLedger("05_convergence", profile)
for d, (ours, theirs) in speed.items():
    print(f"Fig. 2 ({d}): mean accuracy over rounds, the lower of FedLog and FedLog-C {ours:.2f}% against the higher "
          f"of LG-FedAvg 1 and FedProto {theirs:.2f}%")
s2, s3 = SETTINGS["fig2"], SETTINGS["fig3"]
seedwise = lambda rs, f: [f(100 * r.curve()) for r in rs]  # noqa: E731  (one number per seed)
for d, by_label in fig2.items():  # per seed: the lower of ours against the higher of theirs
    area = {lab: seedwise(rs, np.mean) for lab, rs in by_label.items()}
    ledger.compare("FedLog", "Fig. 2", f"trained to the local optimum before each aggregation, FedLog and FedLog-C "
                   f"converge faster than LG-FedAvg 1 and FedProto ({d}; mean accuracy over rounds, the lower of ours "
                   f"against the higher of theirs)", [min(a, b) for a, b in zip(area["FedLog"], area["FedLog-C"])],
                   [max(a, b) for a, b in zip(area["LG-FedAvg 1"], area["FedProto"])], ">", rounds=s2["rounds"])
for d, by_label in fig3.items():
    best = {lab: seedwise(rs, np.max) for lab, rs in by_label.items()}
    for upper, lower in (("FedLog-C", "FedProto"), ("FedProto", "LG-FedAvg 1")):
        ledger.compare("FedLog", "Fig. 3 left", f"with flexible architectures {upper} is more accurate than {lower} "
                       f"({d}, best round; the paper's order FedLog-C > FedProto > LG-FedAvg 1)", best[upper],
                       best[lower], ">", rounds=s3["rounds"])
inside = [r for r in rows if r["inside_bound"] == 1.0]
print("Thm. 4: with the step size inside 2/L1 for every client-round, the local loss decreased in "
      + (", ".join(f"{r['loss_decreased']:.0%} (ζ={r['step_size']:g})" for r in inside) if inside else "no run")
      + " of client-rounds; far outside the bound: "
      + ", ".join(f"ζ={r['step_size']:g} diverged in round {r['diverged_round']}" for r in rows
                  if r["diverged_round"] != "-"))
ledger.record("FedLog", "Thm. 4", "with the body step size inside 2/L1, every client's local loss decreases in every "
              "round (the fraction of client-rounds whose loss decreased, lowest over the step sizes inside the bound)",
              min((r["loss_decreased"] for r in inside), default=None), 1.0, "ours >= reference",
              rounds=SETTINGS["thm"]["rounds"])
ledger.save()
