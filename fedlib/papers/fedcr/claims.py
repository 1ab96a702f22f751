"""FedCR's claims (notebook 06), as functions of Results and of the parts' numbers (tested on made-up numbers in
tests/test_fedcr_claims.py): Table 2's, Ditto's two readings, Table 3's, Fig. 3(d)'s, Fig. 2's, Table 9's, FedCR in
FedLog's Table 1 setting, and the cross-check with the authors' code (part H, its own ledger)."""
from __future__ import annotations

import numpy as np

from ... import claims as rules
from ...result import Result
from ..part import aligned
from . import plans, protocol
from . import analysis
from .analysis import final, tables
from .plans import DITTO_AS_MAIN_FED, NOTEBOOK
from .reported import QUOTES, TABLE2, TABLE3, TABLE9, TABLE10_SPREAD, table10_cell


_T2_SET = {"n1": plans.TABLE2_N1.name, "n2": plans.TABLE2_N2.name}
# What the paper's number for an entry rests on, where a choice the paper left open decides it (the row's note)
REPRODUCTION_NOTES = {
    "Ditto": "the paper's Ditto tracks its FedAvg-FT within a median 0.40 points over Table 2's 8 columns; by a review "
             "of the authors' code, main_fed.py --method ditto never computes the proximal term, so it trains FedAvg "
             "with weight decay mu and fine-tunes the head: the row 'FedAvg-FT (weight decay 0.001: main_fed.py's "
             "Ditto)' runs that reading; ours follows main_fed_ditto.py at the paper's lambda 0.001",
    "FedRep": "depends on a learning rate the paper tuned and did not publish: the README's 0.01 gives 87.79 (seed 0), "
              "our screened 0.1 this row's number; the paper's lies between",
}


def _paired(per_seed: dict, a: str, b: str | None) -> tuple[list | None, list | None]:
    """`a`'s and `b`'s final accuracies on the seeds both have (`part.aligned`; a method shipped in part is compared
    on its seeds there, and the row then reads "indicative (k seeds)"); a side with no run is None."""
    if a not in per_seed or b not in per_seed:
        return ([v for v in per_seed[a] if v is not None] if a in per_seed else None,
                [v for v in per_seed[b] if v is not None] if b in per_seed else None)
    return aligned(per_seed[a], per_seed[b])


def beats_the_strongest_baseline(ledger, by_label: dict, partition: str, baselines: list, reported: dict, rounds):
    """Table 2 (FashionMNIST): FedCR beats the strongest of `baselines` shipped (by mean final accuracy over the
    seeds there, named in the row's note with those shipped in part and the declared ones not run yet), on the seeds
    both have; on n1 also FedRep (and FedAvg-FT when it is not the strongest: one comparison, one row), the paper's
    margins beside. `by_label`: label -> its Results seed by seed (None for a seed not there: a method shipped in
    part); None: the column's runs are missing, and so are its rows."""
    per_seed = {lab: [final(r) if r is not None else None for r in rs] for lab, rs in (by_label or {}).items() if rs}
    there = {lab: [v for v in vals if v is not None] for lab, vals in per_seed.items()}
    shipped = [lab for lab in baselines if lab in there]  # a baseline declared but not run yet is not the strongest
    strongest = max(shipped, key=lambda lab: np.mean(there[lab])) if shipped else None  # FedAvg's is FedAvg-FT's
    common = dict(kind="claim", quote=QUOTES["table2"], rounds=rounds, part=_T2_SET[partition])
    out = [ledger.compare("FedCR", f"Table 2 ({partition})", f"FedCR is more accurate than the strongest baseline run on "
                          f"FashionMNIST {partition} (final accuracy after the fine-tune)",
                          *_paired(per_seed, "FedCR", strongest), ">", paper_value=reported["FedCR"], **common)]
    shown = {"FedAvg": "FedAvg-FT"}.get(strongest, strongest)  # FedAvg's final accuracy is after the fine-tune
    ledger.add_note(f"the strongest baseline run: {shown}" if strongest else "")
    in_part = [f"{lab} ({len(there[lab])} of {len(per_seed[lab])} seeds)" for lab in shipped
               if len(there[lab]) < len(per_seed[lab])]
    ledger.add_note(f"shipped in part: {', '.join(in_part)} (read on the seeds there)" if in_part else "")
    waiting = [lab for lab in baselines if lab not in there]
    ledger.add_note(f"not run yet: {', '.join(waiting)} (declared; the strongest is taken among those shipped)"
                    if waiting and strongest else "")
    table = TABLE2.get(("fashion_mnist", partition), {})
    named = {("FedBABU" if lab.startswith("FedBabu") else lab) for lab in baselines}
    unrun = [m for m in table if m not in named and m not in ("FedCR", "FedAvg-FT")]  # the paper's, not run here
    top = max(unrun, key=table.get) if unrun else None  # the paper's strongest among those not run here
    ledger.add_note("" if not unrun else f"not run: {top} (not implemented here; {table['FedCR'] - table[top]:.2f} "
                    f"below FedCR in the paper)" if len(unrun) == 1 else f"not run: {', '.join(unrun)} (the "
                    f"strongest of them in the paper, {top}, is {table['FedCR'] - table[top]:.2f} below FedCR there)")
    ledger.add_note(rules.devices_note({name: _there(by_label, name) for name in ("FedCR", strongest)}) if strongest
                    else "")
    if partition == "n1":
        for lab, shown in (("FedAvg", "FedAvg-FT"), ("FedRep", "FedRep")):
            if lab == strongest or (strongest is None and lab == "FedAvg"):
                continue  # the same test on the same numbers as the row above
            out.append(ledger.compare("FedCR", "Table 2 (n1)", f"FedCR is more accurate than {shown} on FashionMNIST n1",
                                      *_paired(per_seed, "FedCR", lab), ">",
                                      paper_value=round(reported["FedCR"] - reported[shown], 2), **common))
            ledger.add_note(rules.devices_note({name: _there(by_label, name) for name in ("FedCR", lab)}) if by_label
                            else "")
    return out


def _there(by_label: dict | None, label: str | None) -> list | None:
    """`label`'s Results that are there (a method shipped in part has None for a seed not there)."""
    rs = (by_label or {}).get(label)
    return None if rs is None else [r for r in rs if r is not None]


def reproduces_table2(ledger, by_label: dict | None, partition: str, labels: list, reported: dict, spread: dict,
                      rounds) -> list[str]:
    """Table 2 (FashionMNIST): each method's number reproduced by the equivalence test (`ClaimsLedger.reproduced`),
    against the paper's mean and its standard error (Table 10's spread read as a standard deviation over its 3 seeds,
    so over sqrt(3)), quoting Table 10's cell. FedAvg is read before the fine-tune and FedAvg-FT, the same runs,
    after it. `by_label` None: the column's runs are missing, and so are the rows of `labels`."""
    out = []
    for lab in labels:
        rs = _there(by_label, lab)  # a method shipped in part: its seeds there ("indicative (k seeds)")
        read = [("FedAvg", Result.last), ("FedAvg-FT", Result.final)] if lab == "FedAvg" else \
            [("FedBABU" if lab.startswith("FedBabu") else lab, Result.final)]
        for shown, quantity in read:
            values = [100 * quantity(r) for r in rs] if rs else None
            made = ledger.reproduced("FedCR", f"Table 2 ({partition})", f"{shown}'s accuracy on FashionMNIST "
                                     f"{partition}", values or [], reported[shown], spread[shown] / 3 ** 0.5,
                                     quote=table10_cell("fashion_mnist", partition, shown), rounds=rounds,
                                     part=_T2_SET[partition], note=REPRODUCTION_NOTES.get(shown, ""))
            ledger.add_note(rules.devices_note({shown: rs}))  # its seeds run on two device types
            out.append(made)
    return out


def ditto_as_main_fed(ledger, results, partition: str, reported: dict, spread: dict, rounds) -> str:
    """Ditto's second reading (the review's, from the authors' main_fed.py): FedAvg-FT with weight decay 0.001 against
    the paper's Ditto number on FashionMNIST `partition`, by the same equivalence test as the row of our Ditto
    (main_fed_ditto.py's), so that both readings stand beside each other. `results` None: its runs are not shipped."""
    values = [100 * Result.final(r) for r in results] if results else []
    return ledger.reproduced("FedCR", f"Table 2 ({partition})",
                             f"Ditto's accuracy on FashionMNIST {partition}, read as {DITTO_AS_MAIN_FED}",
                             values, reported["Ditto"], spread["Ditto"] / 3 ** 0.5,
                             quote=table10_cell("fashion_mnist", partition, "Ditto"), rounds=rounds,
                             part=plans.DITTO_MAIN_FED.name, note="the second reading of the paper's Ditto; the row "
                             f"\"Ditto's accuracy on FashionMNIST {partition}\" is ours, main_fed_ditto.py's")


def drops_only_at_small_v(ledger, per_seed: dict, dataset: str, shown: str, dims: list, table3: dict, rounds):
    """Table 3: accuracy drops only at V <= 4: the lowest at V >= 8 against the highest at V <= 4, seed by seed."""
    high, low = [V for V in dims if V >= 8], [V for V in dims if V <= 4]
    if not (high and low):
        return None
    claim = f"accuracy drops only at V <= 4 ({shown}: the lowest accuracy at V >= 8 against the highest at V <= 4)"
    common = dict(kind="claim", quote=QUOTES["table3"], rounds=rounds, part=plans.DIMS.name,
                  stand_in=dataset == "mnist")
    if any(("dim", dataset, V) not in per_seed for V in high + low):  # a V with no seed there
        return ledger.compare("FedCR", "Table 3", claim, None, None, ">", **common)
    seeds = aligned(*(per_seed[("dim", dataset, V)] for V in high + low))  # the seeds every V has
    worst_high = [min(v) for v in zip(*seeds[:len(high)])]
    best_low = [max(v) for v in zip(*seeds[len(high):])]
    return ledger.compare("FedCR", "Table 3", claim, worst_high, best_low, ">",
                          paper_value=round(min(table3[V][1] for V in (8, 16, 32, 64)) - table3[4][1], 2), **common)


def beta_claims(ledger, per_seed: dict, dataset: str, shown: str, rounds) -> list:
    """Fig. 3(d): beta = 0 is worse than the best beta > 0 (named in the row's note); too large a beta degrades
    accuracy (seed by seed). Without the runs of every beta, the first row says "not run"."""
    positive = [b for name, d, b in per_seed if name == "beta" and d == dataset and b > 0]
    claim = f"beta = 0 is worse than the best beta > 0 ({shown})"
    common = dict(kind="claim", rounds=rounds, part=plans.BETAS.name, stand_in=dataset == "mnist")
    if not positive or ("beta", dataset, 0.0) not in per_seed:
        return [ledger.compare("FedCR", "Fig. 3(d)", claim, None, None, ">", quote=QUOTES["beta_zero"], **common)]
    of = lambda b: per_seed[("beta", dataset, b)]  # noqa: E731  (per seed, None where a seed is not there)
    best_b = max(positive, key=lambda b: np.mean([v for v in of(b) if v is not None]))
    out = [ledger.compare("FedCR", "Fig. 3(d)", claim, *aligned(of(best_b), of(0.0)), ">", quote=QUOTES["beta_zero"],
                          **common)]
    ledger.rows[-1].note = f"the best beta > 0: {best_b:g}"
    if len(positive) > 1 and best_b != max(positive):
        out.append(ledger.compare("FedCR", "Fig. 3(d)", f"too large a beta degrades accuracy ({shown}: beta "
                                  f"{best_b:g} against {max(positive):g})", *aligned(of(best_b), of(max(positive))),
                                  ">", quote=QUOTES["beta_large"], **common))
    return out


def kl_separates(ledger, silhouettes: dict, partition: str, rounds) -> str:
    """Fig. 2: with the KL term the class clusters of the Gaussian means are more separated (silhouette, seed 0);
    "not run" without them."""
    there = (partition, 0.0) in silhouettes
    verdict = ledger.compare("FedCR", "Fig. 2", f"with the KL term (beta = 5e-4) the class clusters of the Gaussian "
                             f"means are more separated than with beta = 0 (silhouette, {partition}; seed 0)",
                             [silhouettes[(partition, 5e-4)]] if there else None,
                             [silhouettes[(partition, 0.0)]] if there else None, ">", rounds=rounds, kind="claim",
                             quote=QUOTES["fig2_n1" if partition == "n1" else "fig2_n2"], part=plans.FIG2.name)
    if not there:  # its runs are live (trained, then one client trains on), so nothing of them is shipped
        ledger.rows[-1].note = (f"its four views are not cached or shipped: `scripts/fedcr_fig2_views.py --profile "
                                f"{ledger.profile}` computes them, `--pack` ships them")
    return verdict


def na_beats_local(ledger, table: dict, k: int, table9_paper: dict, rounds) -> str:
    """Table 9: FedCR-NA beats local training with k classes per client, over the seeds both have ("not run" with
    none, "indicative (k seeds)" with fewer than 3). `table`: (k, label) -> Results seed by seed, None where not
    there."""
    each = lambda lab: [final(r) if r is not None else None for r in table[(k, lab)]]  # noqa: E731
    na, local = aligned(each("FedCR-NA"), each("Local")) if all((k, lab) in table for lab in ("FedCR-NA", "Local")) \
        else (None, None)
    return ledger.compare("FedCR", "Table 9", f"FedCR-NA beats local training (FashionMNIST, k = {k} classes per "
                          "client)", na or None, local or None,
                          ">", rounds=rounds, paper_value={kk: round(table9_paper[kk]["FedCR-NA"]
                                                                     - table9_paper[kk]["Local"], 2)
                                                           for kk in table9_paper},
                          kind="claim", quote=QUOTES["table9"], part=plans.TABLE9.name, stand_in=True)


def fedlog_beats(ledger, t1: dict, other: str, rounds) -> str:
    """FedLog's Table 1 setting: FedLog-C is more accurate than FedCR (or FedCR-NA), best round, seed by seed ("not
    run" without the runs). An extension: FedCR is not in FedLog's Table 1."""
    best = lambda lab: [100 * r.best() for r in t1[lab]] if lab in t1 else None  # noqa: E731
    return ledger.compare("FedLog", "Table 1 (seed systems)", f"FedLog-C is more accurate than {other} in FedLog's "
                          "MNIST setting (best round)", best("FedLog-C"), best(other), ">", rounds=rounds,
                          kind="extension", part=plans.SEED_SYSTEMS.name)


def record_crosscheck(profile: str, ditto_check: tuple[dict, dict], fedpac_check: tuple[dict, dict] = ({}, {})):
    """Part H's claims in notebook 06's ledger of scale "reduced" (the cross-checks' federations are smaller than
    Table 2's, and each row's `where` names its own), saved; returns the ledger, or None when both cross-checks are
    missing. Ditto is checked against the FedCR authors' code, FedPAC against PFLlib's."""
    from ..fedlog.analysis import crosscheck as xc

    checks = [(m, c, s) for m, (c, s) in (("Ditto", ditto_check), ("FedPAC", fedpac_check)) if c]
    if not checks:
        return None
    ledger = rules.ClaimsLedger(NOTEBOOK, profile, scale="reduced")
    for method, curves, setting in checks:
        whose = "its authors' code" if method == "Ditto" else "PFLlib's code (after its authors')"
        xc.record(ledger, "FedCR", f"{method} against {whose} (FashionMNIST n1, {setting.clients} clients, "
                  f"{setting.participation:.0%} a round)", method, curves,
                  (plans.DITTO_CROSSCHECK if method == "Ditto" else plans.FEDPAC_CROSSCHECK).name, whose)
    ledger.save()
    return ledger


def record(reads):
    """Every claim of notebook 06 from its reads (`fedlib.papers.read_notebook`, Table 2's parts at the Ditto lambda
    chosen from the first): the numbers analysis makes of them (`analysis.tables`, the Fig. 2 silhouettes) through
    `record_parts`, and part H's cross-checks from their files (`record_crosscheck`, its own ledger), each saved.
    Returns the first."""
    from ...paths import project_root

    t = tables
    table, _, partial = t.table2_runs(reads[plans.TABLE2_N1], reads[plans.TABLE2_N2], say=False)
    ledger = record_parts(reads.profile, table, t.sweep_finals(reads[plans.DIMS], reads[plans.BETAS], say=False),
                          analysis.silhouettes(reads[plans.FIG2]), t.table9_runs(reads[plans.TABLE9], say=False),
                          t.seed_system_runs(reads[plans.SEED_SYSTEMS], reads[plans.SEED_BASELINES], say=False),
                          reads[plans.DITTO_MAIN_FED], partial)
    files = project_root() / "figures"  # the cross-checks' CSVs, written by their scripts
    record_crosscheck(reads.profile, t.against_their_code(files / "fedcr_crosscheck.csv", "Ditto", "acc_mean"),
                      t.against_their_code(files / "fedpac_crosscheck.csv", "FedPAC", "acc_all"))
    return ledger


def record_parts(profile: str, table: dict, per_seed: dict, silhouettes: dict, t9: dict, t1: dict, second,
                 partial: dict | None = None):
    """Notebook 06's claims from the numbers of its parts (and the reading of Ditto's second reading, `second`; Table
    2's methods shipped in part, `partial`: `analysis.tables.table2_runs`' third value), saved; returns the ledger."""
    S = plans.PROFILES[profile]
    rounds = lambda d: plans.rounds_label(S, [d])  # noqa: E731  (the paper's differ by dataset)
    ledger = rules.ClaimsLedger(NOTEBOOK, profile)
    for (d, q), whole in table.items():
        by_label = {**(whole or {}), **(partial or {}).get((d, q), {})} or None  # seed by seed
        if d == "fashion_mnist":
            beats_the_strongest_baseline(ledger, by_label, q, [lab for lab in plans.labels(S, (d, q)) if lab != "FedCR"],
                                         TABLE2[("fashion_mnist", q)], rounds(d))
            if profile == "paper":  # the other profiles' models, data and rounds are reduced
                reproduces_table2(ledger, by_label, q, plans.labels(S, (d, q)), TABLE2[("fashion_mnist", q)],
                                  TABLE10_SPREAD[("fashion_mnist", q)], rounds(d))
                ditto_as_main_fed(ledger, second.there(q) or None, q, TABLE2[(d, q)], TABLE10_SPREAD[(d, q)],
                                  rounds(d))  # the seeds shipped (fewer than 3: indicative)
    dim_sets = plans.sweep_sets(S, "dim")
    if dim_sets:  # the first dataset's (runs missing: "not run")
        d = dim_sets[0]
        drops_only_at_small_v(ledger, per_seed, d, protocol.SHOWN[d], S.dims, TABLE3, rounds(d))
    for d in plans.sweep_sets(S, "beta"):
        beta_claims(ledger, per_seed, d, protocol.SHOWN[d], rounds(d))
    if plans.here("mnist"):
        for q in ("n1", "n2"):
            kl_separates(ledger, silhouettes, q, S.fig2.rounds)
    for k in S.table9.ks if plans.here(plans.REAL) else []:
        na_beats_local(ledger, t9, k, TABLE9, S.table9.rounds)
    if plans.here("mnist"):
        for other in ("FedCR", "FedCR-NA"):
            fedlog_beats(ledger, t1, other, S.table1.rounds)
    ledger.save()
    return ledger
