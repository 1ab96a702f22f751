"""FedProf's claims, as functions of Results: each states one claim of the paper, takes the runs it is about (one
Result per seed on each side, or None where they are not shipped) and records one row in the ledger, decided by one
of the ledger's rule kinds (a paired t-test over seeds, `fedlib.claims`). `record` makes every row of notebook 08.
Each function is tested on made-up Results: holding, failing, within noise, censored and with zero spread."""
from __future__ import annotations

from ... import claims as ledger_rules
from . import analysis
from ..part import Reads, first_whole
from . import plans
from .plans import FIG1, NOTEBOOK, READINGS, TABLE3_PER_ROUND
from .reported import QUOTES, TABLE3

PAPER = "FedProf"
# Every run stands in for the paper's L-Task (1,000 clients on EMNIST): 200 clients on MNIST (the run sets' deviations)
COMMON = dict(stand_in=True)


def _each(results, f):
    return None if results is None else [f(r) for r in results]


def fewer_rounds(ledger, fedprof, baseline, *, baseline_label: str, aggregation: str, C: float, target: float,
                 rounds: int, said: str = "") -> str:
    """Table 3: FedProf reaches `target` in fewer rounds than the baseline. A run that never reaches it counts as
    `rounds` + 1, which the rule reads as censored ("not reached" where neither side ever does)."""
    reported = TABLE3.get((aggregation, C), {})  # the paper's rounds to 90% (none for other C)
    return ledger.compare(PAPER, "Table 3", f"FedProf reaches {target:.0%} in fewer rounds than {baseline_label} "
                          f"({aggregation} aggregation, C = {C}{said})",
                          _each(fedprof, lambda r: analysis.rounds_to(r, target)),
                          _each(baseline, lambda r: analysis.rounds_to(r, target)), "<",
                          paper_value=[reported[baseline_label][1], reported["FedProf"][1]] if reported else None,
                          rounds=rounds, censored_at=rounds + 1, kind="claim", quote=QUOTES["rounds"],
                          part="fedprof_table3", **COMMON)


def best_above_fedavg(ledger, fedprof, fedavg, *, C: float, rounds: int, said: str = "") -> str:
    """Table 3, full aggregation: FedProf's best accuracy is above FedAvg's."""
    return ledger.compare(PAPER, "Table 3", f"FedProf's best accuracy is above FedAvg's (full aggregation, C = {C}"
                          f"{said})", _each(fedprof, analysis.best), _each(fedavg, analysis.best), ">", rounds=rounds,
                          kind="claim", quote=QUOTES["best"], part="fedprof_table3", **COMMON)


def best_above_the_strongest(ledger, fedprof, fedavg_rp, fedprox, *, C: float, rounds: int, said: str = "") -> str:
    """Table 3, partial aggregation: FedProf's best accuracy is above the better of FedAvg-RP's and FedProx's, seed
    by seed."""
    strongest = None if fedavg_rp is None or fedprox is None else \
        [max(analysis.best(a), analysis.best(b)) for a, b in zip(fedavg_rp, fedprox)]
    return ledger.compare(PAPER, "Table 3", f"FedProf's best accuracy is above FedAvg-RP's and FedProx's (partial "
                          f"aggregation, C = {C}{said})", _each(fedprof, analysis.best), strongest, ">", rounds=rounds,
                          kind="claim", quote=QUOTES["best"], part="fedprof_table3", **COMMON)


def selected_less_often(ledger, fedprof, kind: str, *, C: float, rounds: int, said: str = "") -> str:
    """Fig. 6: clients of `kind` (analysis.KINDS) are selected less often than clean ones (mean selections per
    client, per seed)."""
    picked = _each(fedprof, analysis.participation)
    return ledger.compare(PAPER, "Fig. 6", f"{analysis.KINDS[kind]} clients are selected less often than clean ones "
                          f"(mean selections per client, C = {C}{said})", _each(picked, lambda by_kind: by_kind[kind]),
                          _each(picked, lambda by_kind: by_kind["clean"]), "<", rounds=rounds, kind="claim",
                          quote=QUOTES["selection"], part="fedprof_table3", **COMMON)


def biased_and_noisy_slowest(ledger, conditions: dict | None, *, rounds: int) -> str:
    """Fig. 1: biased + noisy data slow FedAvg most: its final accuracy is below the lowest of the other three
    conditions', seed by seed. `conditions`: condition -> one Result per seed."""
    finals = {c: [100 * r.last("acc_all") for r in rs] for c, rs in (conditions or {}).items()}
    others = [min(finals[c][i] for c in finals if c != "biased + noisy") for i in range(len(finals["biased + noisy"]))] \
        if finals else None
    return ledger.compare(PAPER, "Fig. 1", "biased + noisy data slow FedAvg most (final accuracy, against the lowest "
                          "of the other three conditions)", finals.get("biased + noisy"), others, "<", rounds=rounds,
                          kind="claim", quote=QUOTES["fig1"], part="fedprof_fig1")


def record(reads: Reads):
    """Every claim of notebook 08 from its reads (`fedlib.papers.read_notebook`): the Table 3 claims read the first
    reading of the lr decay whose runs are shipped (`part.first_whole`; the protocol's, or the per-round one while
    only that is, and they say so), the Fig. 1 claim reads Fig. 1's part; the ledger, saved."""
    shown, fig1 = first_whole(reads[plans.TABLE3], reads[TABLE3_PER_ROUND]), reads[FIG1]
    S = reads[FIG1].settings
    ledger = ledger_rules.ClaimsLedger(NOTEBOOK, reads.profile)
    said = "" if shown is None or READINGS[shown.part] == "per participation" else \
        "; lr decay per round, the earlier reading"
    got = lambda C, lab: shown[(C, lab)] if shown is not None else None  # noqa: E731
    for C in S.fractions:
        for agg, base, ours in (("full", "FedAvg", "FedProf (full)"), ("partial", "FedAvg-RP", "FedProf (partial)")):
            fewer_rounds(ledger, got(C, ours), got(C, base), baseline_label=base, aggregation=agg, C=C,
                         target=S.targets[0], rounds=S.full_rounds if agg == "full" else S.partial_rounds, said=said)
        best_above_fedavg(ledger, got(C, "FedProf (full)"), got(C, "FedAvg"), C=C, rounds=S.full_rounds, said=said)
        best_above_the_strongest(ledger, got(C, "FedProf (partial)"), got(C, "FedAvg-RP"), got(C, "FedProx"), C=C,
                                 rounds=S.partial_rounds, said=said)
    C0 = S.fractions[-1]
    for kind in ("irrelevant", "blur"):
        selected_less_often(ledger, got(C0, "FedProf (partial)"), kind, C=C0, rounds=S.partial_rounds, said=said)
    biased_and_noisy_slowest(ledger, fig1.all() if fig1.whole() else None, rounds=S.fig1_rounds)
    ledger.save()
    return ledger
