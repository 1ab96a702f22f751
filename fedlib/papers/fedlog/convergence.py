"""Notebook 05 (FedLog's Fig. 2, Fig. 3 left and Thms. 3-5): its runs' curves and summaries, its figures and tables,
and its claims as functions of Results (one per seed) and of the step-size study's rows (tested on made-up numbers in
tests/test_fedlog_claims.py). Accuracies in percent."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import claims as rules, outputs
from .reported import QUOTES
from ... import plots, stats, sweep
from .analysis import convergence
from . import figures, plans

NOTEBOOK = "05_convergence"
PARTS = {"fig2": "Fig. 2", "fig3": "Fig. 3 left"}


def read(plan: dict, profile: str) -> tuple[dict, dict, dict]:
    """Fig. 2's and Fig. 3 left's Results (dataset -> label -> one per seed) for the datasets whose every run is
    there, and part ("fig2", "fig3") -> the datasets whose runs are not. `plan`: (part, dataset) -> label -> Configs.
    One sweep (`sweep.Runs`): in the paper profile nothing is computed, and what is missing is named with the
    command that computes it."""
    results = sweep.Runs([c for by_label in plan.values() for cs in by_label.values() for c in cs], profile,
                         plans.commands)
    got, missing = {part: {} for part in PARTS}, {part: [] for part in PARTS}
    for (part, d), by_label in plan.items():
        if results.get([c for cs in by_label.values() for c in cs], f"{PARTS[part]} ({d})") is None:
            missing[part].append(d)
        else:
            got[part][d] = {lab: results(cs) for lab, cs in by_label.items()}
    return got["fig2"], got["fig3"], missing


def curves(results) -> np.ndarray:
    """[seeds, rounds] accuracy in percent."""
    return np.array([r.curve() for r in results]) * 100


def faster(title: str, by_label: dict) -> tuple[float, float, list[str]]:
    """Convergence speed from the mean curves over seeds: accuracy after round 1, the mean over all rounds (higher:
    high accuracy in fewer rounds) and the first round within one point of the best final accuracy of any method.
    Returns the lower of FedLog's and FedLog-C's mean over rounds, the higher of the others', and what to print."""
    mean = {lab: curves(rs).mean(0) for lab, rs in by_label.items()}
    best = max(m[-1] for m in mean.values())
    lines = []
    for lab, m in mean.items():
        first = stats.first_round_reaching(m, best - 1)
        lines.append(f"  {title} {lab:12s} round 1: {m[0]:5.2f}%  mean over rounds: {m.mean():5.2f}%  first round "
                     f"within 1 point of {best:.2f}%: {'never' if first is None else first}")
    auc = {lab: m.mean() for lab, m in mean.items()}
    ours = [auc[k] for k in auc if k.startswith("FedLog")]
    theirs = [auc[k] for k in auc if not k.startswith("FedLog")]
    said = "yes" if min(ours) > max(theirs) else ("no" if max(ours) < min(theirs) else "partly")
    lines.append(f"  {title}: FedLog and FedLog-C both above LG-FedAvg 1 and FedProto in mean accuracy over rounds: "
                 f"{said}")
    return min(ours), max(theirs), lines


def draw(by_dataset: dict, methods: dict, name: str, title: str, spread: str, profile: str, verdict: str = "",
         paper_data: dict | None = None):
    """Accuracy against rounds and against bits, per dataset; saved as `name` (None, and nothing saved, without
    runs). `paper_data` (the paper's datasets, `PAPER_DATA`): the caption names those ours stand in for."""
    if not by_dataset:
        print(f"{title.split(':')[0]}: not drawn, no dataset's runs are all there")
        return None
    shown = {d: {lab: {"method": methods[lab][0], "acc": curves(rs), "bits": np.cumsum(rs[0].bits_up + rs[0].bits_down)}
                 for lab, rs in by_label.items()} for d, by_label in by_dataset.items()}
    fig = figures.rounds_and_bits(shown, title, spread, verdict)
    any_runs = next(iter(next(iter(by_dataset.values())).values()))
    plots.caption(fig, profile, len(any_runs), any_runs[0].n_rounds, note=figures.stand_in(by_dataset, paper_data or {}))
    outputs.save_figure(fig, name)
    return fig


def summary_rows(by_dataset: dict, experiment: str) -> list[dict]:
    rows = []
    for d, by_label in by_dataset.items():
        for lab, rs in by_label.items():
            best, final = [100 * r.best() for r in rs], [100 * r.last() for r in rs]
            rows.append({"experiment": experiment, "dataset": d, "method": lab, "seeds": len(rs),
                         "rounds": rs[0].n_rounds, "final_accuracy_mean": float(np.mean(final)),
                         "final_accuracy_std": float(np.std(final, ddof=1)) if len(rs) > 1 else 0.0,
                         "best_accuracy_mean": float(np.mean(best)), "total_bits": rs[0].total_bits()})
    return rows


def fig3_order(by_dataset: dict, paper: dict) -> list[str]:
    """Each dataset's best-round accuracies in order, beside the paper's order on CIFAR-100."""
    lines = []
    for d, by_label in by_dataset.items():
        best = {lab: stats.mean_se([100 * r.best() for r in rs]) for lab, rs in by_label.items()}
        order = sorted(best, key=lambda k: -best[k][0])
        holds = best["FedLog-C"][0] > best["FedProto"][0] > best["LG-FedAvg 1"][0]
        lines.append(f"  {d}: best-round accuracy " + ", ".join(f"{k} {best[k][0]:.2f}±{best[k][1]:.2f}" for k in order)
                     + f". The paper's order on CIFAR-100 ({' > '.join(f'{k} {v}' for k, v in paper.items())}) "
                     + ("holds in direction here" if holds else "does not hold here")
                     + "; the claims below decide it over seeds")
    return lines


def step_size_studies(base, s: dict, compute: bool) -> dict:
    """Thm. 4's step-size study for each seed of the settings `s` (seed -> step size -> trace; a seed with no trace
    cached or shipped is left out when nothing may be computed)."""
    studies = {sd: convergence.step_size_study(replace(base, seed=sd), s["steps"], compute=compute) for sd in s["seeds"]}
    return {sd: study for sd, study in studies.items() if study}


def step_size_rows(study: dict, seed: int = 0) -> list[dict]:
    """Thms. 3-5 measured, per step size: how often it was inside 2/L1, and how often the local loss decreased."""
    rows = []
    for zeta, tr in study.items():
        rows.append({"seed": seed, "step_size": zeta, "inside_bound": convergence.inside_bound(tr, zeta),
                     "loss_decreased": convergence.fraction_decreased(tr),
                     "local_training_decreased": convergence.fraction_decreased(tr, "loss_before", "loss_local"),
                     "head_step_decreased": convergence.fraction_decreased(tr, "loss_local", "loss_after"),
                     "rounds_run": len(tr["loss_after"]), "diverged_round": tr.get("diverged_round", "-"),
                     "final_accuracy": 100 * tr["acc_mean"][-1] if tr["acc_mean"] else float("nan")})
    return rows


def step_size_part(studies: dict, s: dict, profile: str) -> list[dict]:
    """Thms. 3-5: the step-size studies' rows (`step_size_studies`, one per seed), printed and saved
    (thm4_step_sizes), and the first seed's figure (thm3_5_convergence); the rows. Without traces (the paper profile
    computes none) it says how to make them."""
    if not studies:
        print(f"Thms. 3-5: not drawn, no trace of the {len(s['steps'])} step sizes is cached or shipped; compute "
              f"them with FEDLIB_COMPUTE=1 FEDLIB_PROFILE={profile} ./run_all.sh 05, then copy "
              f"results/{convergence.TRACES}/ into archive/{convergence.TRACES}/")
        return []
    rows = [row for sd, study in studies.items() for row in step_size_rows(study, sd)]
    first = next(iter(studies))
    print(f"seed {first}:\n" + "\n".join(step_size_lines([r for r in rows if r["seed"] == first])))
    outputs.save_table(rows, "thm4_step_sizes")
    fig = figures.step_sizes(studies[first], "Thms. 3-5 measured: FedLog on MNIST, plain SGD on the bodies at step "
                             "size ζ")
    plots.caption(fig, profile, 1, s["rounds"], note=f"{s['over'].get('n_clients', 50)} clients, seed {first} of "
                  f"{len(studies)} (the claim reads them all)")
    outputs.save_figure(fig, "thm3_5_convergence")
    return rows


def step_size_lines(rows: list[dict]) -> list[str]:
    lines = []
    for r in rows:
        lines.append(f"zeta {r['step_size']:<6g} inside 2/L1 in {r['inside_bound']:.0%} of client-rounds; "
                     + (f"diverged in round {r['diverged_round']}; " if r["diverged_round"] != "-" else "")
                     + (f"local loss decreased in {r['loss_decreased']:.0%} of {r['rounds_run']} x clients rounds "
                        f"(by local training in {r['local_training_decreased']:.0%}, by the new head in "
                        f"{r['head_step_decreased']:.0%}), accuracy {r['final_accuracy']:.1f}%" if r["rounds_run"]
                        else "before any round finished"))
    return lines


def _seedwise(results, f) -> list[float]:
    return [f(100 * r.curve()) for r in results]


def converges_faster(ledger, by_label: dict, dataset: str, rounds) -> str:
    """Fig. 2: FedLog and FedLog-C converge faster than LG-FedAvg 1 and FedProto: per seed, the lower of ours
    against the higher of theirs in mean accuracy over rounds."""
    area = {lab: _seedwise(rs, np.mean) for lab, rs in (by_label or {}).items()}  # None: the runs are missing
    return ledger.compare("FedLog", "Fig. 2", f"trained to the local optimum before each aggregation, FedLog and "
                          f"FedLog-C converge faster than LG-FedAvg 1 and FedProto ({dataset}; mean accuracy over "
                          f"rounds, the lower of ours against the higher of theirs)",
                          [min(a, b) for a, b in zip(area["FedLog"], area["FedLog-C"])] if area else None,
                          [max(a, b) for a, b in zip(area["LG-FedAvg 1"], area["FedProto"])] if area else None, ">",
                          rounds=rounds, kind="claim", quote=QUOTES["fig2_faster"], run_set="fig2", stand_in=True)


def flexible_order(ledger, by_label: dict, dataset: str, rounds) -> list[str]:
    """Fig. 3 left: with flexible architectures FedLog-C > FedProto > LG-FedAvg 1 in best-round accuracy, one row
    per step of the order, seed by seed."""
    best = {lab: _seedwise(rs, np.max) for lab, rs in (by_label or {}).items()}  # None: the runs are missing
    out = []
    for upper, lower in (("FedLog-C", "FedProto"), ("FedProto", "LG-FedAvg 1")):
        claim = (f"with flexible architectures {upper} is more accurate than {lower} ({dataset}, best round; the "
                 "paper's order FedLog-C > FedProto > LG-FedAvg 1)")
        common = dict(kind="claim" if upper == "FedLog-C" else "reproduction",
                      quote=QUOTES["fig3_left_accuracy" if upper == "FedLog-C" else "fig3_left_order"],
                      run_set="fig3_left" if dataset == "mnist" else "fig3_left_fashion_mnist", stand_in=True)
        if dataset in CEILING:
            out.append(ledger.cannot_judge("FedLog", "Fig. 3 left", claim, CEILING[dataset], **common))
        else:
            out.append(ledger.compare("FedLog", "Fig. 3 left", claim, best.get(upper), best.get(lower), ">",
                                      rounds=rounds, **common))
    return out


# Stand-ins that cannot test Fig. 3 left's ordering (a 1.1-point CIFAR-100 gap at 54-56%): every method at the ceiling
CEILING = {"mnist": "every method reaches 98.1-98.4% on MNIST, a ceiling at which the paper's 1.1-point CIFAR-100 "
                    "differences cannot show; FashionMNIST's rows test it"}


def loss_decreases_inside_the_bound(ledger, rows: list[dict], rounds) -> str:
    """Thm. 4: with the body step size inside 2/L1, every client's local loss decreases in every round (the lowest
    fraction of decreasing client-rounds over the step sizes inside the bound and over the seeds, against 1: one
    client-round whose loss rose refutes it). `rows`: `step_size_rows` of one or more seeds; the seeds counted are
    those with a step size inside the bound."""
    inside = [r for r in rows if r["inside_bound"] == 1.0]
    ledger.record("FedLog", "Thm. 4", "with the body step size inside 2/L1, a client's local loss decreases in a "
                  "round (ours: the fraction of client-rounds whose loss decreased, lowest over the step sizes inside "
                  "the bound and the seeds)", min((r["loss_decreased"] for r in inside), default=None), None,
                  rules.statement(), kind="claim", quote=QUOTES["thm4"], seeds=len({r.get("seed", 0) for r in inside}),
                  rounds=rounds,
                  note="reported, not judged: Thms. 3-4 bound the expected loss under Assumptions 1-4, a bound on the "
                       "head step (beta < 2KHF/L2) and a body step below a bound smaller than 2/L1; none of these "
                       "assumptions is verified here, and a realised client-round is not the expectation")
    return ledger.rows[-1].verdict


def record(fig2: dict, fig3: dict, speed: dict, rows: list[dict], settings: dict, profile: str,
           missing: dict | None = None):
    """Notebook 05's claims, saved; prints what it compares; returns the ledger. `missing` (`read`'s): the datasets
    whose runs are not there get their rows, "not run"."""
    ledger = rules.ClaimsLedger(NOTEBOOK, profile)
    fig2 = {**fig2, **{d: None for d in (missing or {}).get("fig2", [])}}
    fig3 = {**fig3, **{d: None for d in (missing or {}).get("fig3", [])}}
    for d, (ours, theirs) in speed.items():
        print(f"Fig. 2 ({d}): mean accuracy over rounds, the lower of FedLog and FedLog-C {ours:.2f}% against the "
              f"higher of LG-FedAvg 1 and FedProto {theirs:.2f}%")
    for d, by_label in fig2.items():
        converges_faster(ledger, by_label, d, settings["fig2"]["rounds"])
    for d, by_label in fig3.items():
        flexible_order(ledger, by_label, d, settings["fig3"]["rounds"])
    inside = [r for r in rows if r["inside_bound"] == 1.0]
    print("Thm. 4: with the step size inside 2/L1 for every client-round, the local loss decreased in "
          + (", ".join(f"{r['loss_decreased']:.0%} (ζ={r['step_size']:g}, seed {r.get('seed', 0)})" for r in inside)
             if inside else "no run")
          + " of client-rounds; far outside the bound: "
          + ", ".join(f"ζ={r['step_size']:g} diverged in round {r['diverged_round']} (seed {r.get('seed', 0)})"
                      for r in rows if r["diverged_round"] != "-"))
    loss_decreases_inside_the_bound(ledger, rows, settings["thm"]["rounds"])
    ledger.save()
    return ledger
