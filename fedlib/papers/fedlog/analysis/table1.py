"""Notebook 02's quantities (FedLog's Table 1 and Table A.1, the augmentation and beta ablations): each regime's
Results read from the plan, and the tables' rows of numbers beside the paper's (`figures` saves them, the claims read
them). Accuracies in percent; the paper's layout (mean +- SE with Wilcoxon markers, its units) beside the numbers."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .... import stats
from ....result import as_result
from ..plans import REGIME_WORDS, REGIMES, Table1Reads, table1_reads
from ..protocol import TABLE_A1_METHODS
from ..reported import TABLE1, TABLE1_MARKERS, TABLE_A1, TABLE_A1_MARKERS, THRESHOLD
from .regime import deciding

NAN = float("nan")


def _fmt_acc(m: float, se: float, marker: str = "") -> str:  # one seed has no standard error: the number stands alone
    return stats.format_mean_se(m, se) + marker


def _fmt_bits(b: float, se: float | None = None, marker: str = "") -> str:
    return stats.format_bits(b) + (f"±{stats.format_bits(se)}" if stats.has_spread(se) else "") + marker


def table1_rows(by_label: dict, dataset: str, seeds: int, rounds: int, profile: str) -> tuple[list, list, list]:
    """Table 1 for one dataset: (rows of numbers, rows in the paper's layout, `stats.table_rows`' rows), ours beside
    the paper's, markers against FedLog-C (best-round accuracy, bits to the dataset's threshold)."""
    rows = stats.table_rows(by_label, THRESHOLD[dataset], reference="FedLog-C")
    reported = TABLE1.get(dataset, {})
    numbers, pretty = [], []
    for r in rows:
        p_acc, p_bits = reported.get(r.method, (NAN, NAN))
        m_acc, m_bits = TABLE1_MARKERS.get(dataset, {}).get(r.method, ("", ""))  # the paper's, at p < 0.01
        numbers.append({"method": r.method, "accuracy_mean": r.accuracy_mean, "accuracy_se": r.accuracy_se,
                        "bits_to_threshold": r.bits_to_threshold,
                        "uplink_bits_to_threshold": r.uplink_bits_to_threshold, "paper_accuracy": p_acc,
                        "paper_bits": p_bits, "final_accuracy_mean": r.final_accuracy_mean,
                        "final_accuracy_se": r.final_accuracy_se, "seeds": seeds, "rounds": rounds,
                        "profile": profile})
        pretty.append({"method": r.method,
                       "accuracy (ours)": _fmt_acc(r.accuracy_mean, r.accuracy_se, r.accuracy_marker),
                       "accuracy (paper)": "-" if math.isnan(p_acc) else f"{p_acc:.2f}{m_acc}",
                       "comm cost (ours)": _fmt_bits(r.bits_to_threshold, r.bits_se, r.bits_marker),
                       "comm cost (paper)": "-" if math.isnan(p_bits) else stats.format_bits(p_bits) + m_bits,
                       "comm one way (ours)": _fmt_bits(r.uplink_bits_to_threshold),
                       "reached threshold": r.reached, "seeds x rounds": f"{seeds} x {rounds} ({profile})"})
    return numbers, pretty, rows


def table_a1_rows(by_label: dict, dataset: str, classes: int, seeds: int, rounds: int) -> tuple[list, float]:
    """Table A.1 for one (dataset, classes per client): rows beside the paper's, and the threshold, by the paper's
    rule (the largest integer accuracy every method reaches in every seed, `stats.common_threshold`)."""
    threshold = stats.common_threshold(by_label)
    reported = TABLE_A1.get((dataset, classes), {})
    marked = TABLE_A1_MARKERS.get((dataset, classes), {})  # the paper's, direction only (its caption's levels)
    out = []
    for r in stats.table_rows(by_label, threshold, reference="FedLog-C"):
        p_acc, p_bits = reported.get(r.method, (NAN, NAN))
        m_acc, m_bits = marked.get(r.method, ("", ""))
        out.append({"method": r.method, "accuracy_mean": r.accuracy_mean, "accuracy_se": r.accuracy_se,
                    "accuracy_marker": r.accuracy_marker, "paper_accuracy_marker": m_acc,
                    "bits_to_threshold": r.bits_to_threshold, "bits_marker": r.bits_marker,
                    "paper_bits_marker": m_bits, "threshold": threshold, "paper_accuracy": p_acc,
                    "paper_bits": p_bits, "seeds": seeds, "rounds": rounds})
    return out, threshold


class AugmentationRow(NamedTuple):
    """One entry of the augmentation ablation: its best-round accuracy (%) without and with crop-and-flip, the
    paper's, and which of the two lies nearer it ("with" or "without")."""
    dataset: str
    method: str
    accuracy_without: float
    se_without: float
    accuracy_with: float
    se_with: float
    paper_accuracy: float
    nearer_the_paper: str
    seeds: int
    rounds: int


def augmentation_rows(pairs: dict, dataset: str, seeds: int, rounds: int) -> list[AugmentationRow]:
    """The augmentation ablation: pairs[label] = {False: runs without, True: runs with}; best-round accuracy of each
    beside the paper's, and which lies nearer it."""
    rows = []
    for label, pair in pairs.items():
        acc = {aug: stats.mean_se([100 * as_result(r).best() for r in rs]) for aug, rs in pair.items()}
        published = TABLE1.get(dataset, {}).get(label, (NAN,))[0]
        nearer = "with" if abs(acc[True][0] - published) < abs(acc[False][0] - published) else "without"
        rows.append(AugmentationRow(dataset, label, *acc[False], *acc[True], published, nearer, seeds, rounds))
    return rows


class BetaRow(NamedTuple):
    """FedLog-C at one separation weight beta: its best- and final-round accuracy (%), mean and SE over seeds."""
    dataset: str
    beta: float
    accuracy_mean: float
    accuracy_se: float
    final_accuracy_mean: float
    final_accuracy_se: float
    seeds: int
    rounds: int


def beta_rows(by_beta: dict, dataset: str, seeds: int, rounds: int) -> tuple[list[BetaRow], str]:
    """FedLog-C's separation weight: by_beta[beta] = runs; rows (best and final round) and what they say (a gain
    counts beyond 2 standard errors; one seed says only which was higher)."""
    rows = []
    for beta, rs in by_beta.items():
        rs = [as_result(r) for r in rs]
        best, final = stats.mean_se([100 * r.best() for r in rs]), stats.mean_se([100 * r.last() for r in rs])
        rows.append(BetaRow(dataset, beta, *best, *final, seeds, rounds))
    base, top = rows[0], max(rows, key=lambda r: r.accuracy_mean)
    if seeds < 2:  # no standard error to judge a gain by
        return rows, (f"one seed: best beta {top.beta:g} ({top.accuracy_mean:.2f}) vs beta 0 "
                      f"({base.accuracy_mean:.2f}); more seeds say whether the difference is more than noise")
    helps = top.beta > 0 and top.accuracy_mean - base.accuracy_mean > 2 * max(top.accuracy_se, base.accuracy_se, 1e-9)
    return rows, (f"the separation term {'helps' if helps else 'does not help beyond 2 standard errors'}: best beta "
                  f"{top.beta:g} ({top.accuracy_mean:.2f}) vs beta 0 ({base.accuracy_mean:.2f})")


def _ranks(scores: dict) -> dict:
    return {m: i + 1 for i, m in enumerate(sorted(scores, key=lambda m: -scores[m]))}


def ranking_rows(here: dict, dataset: str) -> tuple[list[dict], list[str], float | None]:
    """Our ranking by accuracy (`here`: entry -> accuracy) beside the paper's Table 1: rows, the line that sums them
    up (Kendall tau) and the tau (None where the paper has no Table 1 for `dataset`)."""
    published = {m: acc for m, (acc, _) in TABLE1.get(dataset, {}).items()}
    rank_here, rank_published = _ranks(here), _ranks(published)
    rows = [{"method": m, "accuracy": here[m], "rank": rank_here[m], "paper_accuracy": published.get(m, np.nan),
             "paper_rank": rank_published.get(m, "")} for m in sorted(here, key=rank_here.get)]  # by our rank
    lines, tau = [], None
    if published:
        agreement = stats.rank_agreement(here, published)
        tau = agreement.tau
        lines.append(f"{dataset}: Kendall tau with the paper's Table 1: {tau:.2f} ({agreement.methods} methods, "
                     f"p = {agreement.p:.3g})")
    return rows, lines, tau


def read_regimes(reads: Table1Reads) -> tuple[dict, dict]:
    """Table 1's Results that are there (regime -> dataset -> entry -> [Result], an entry only with all its seeds)
    and, per regime, the entries that are not, (dataset, entry) (`missing_notes` says what computes them)."""
    runs, absent = {}, {}
    for reg in REGIMES:
        runs[reg] = {d: {lab: r[lab] for lab in r.keys() if r[lab] is not None} for d, r in reads.table1[reg].items()}
        absent[reg] = [(d, lab) for d, r in reads.table1[reg].items() for lab in r.missing()]
    return runs, absent


def missing_notes(reads: Table1Reads) -> list[str]:
    """Each regime's Table 1 entries whose runs are not all there, named with the commands that compute them."""
    return [r.note(r.missing(), f"Table 1 ({d}) {REGIME_WORDS[reg]}") + "; their claims wait for them"
            for reg in REGIMES for d, r in reads.table1[reg].items() if r.missing()]


def _a1(reads: Table1Reads) -> tuple[dict, dict, list[str]]:
    """Table A.1 per regime and (dataset, classes per client) whose runs are all there: regime -> (dataset, classes)
    -> (entry -> Results, the threshold, rounds) and -> its rows; and a note for each that is not."""
    found, rows, notes = {reg: {} for reg in REGIMES}, {reg: {} for reg in REGIMES}, []
    for reg in REGIMES:
        for d, read in reads.tableA1[reg].items():
            for k, s in read.settings.classes.items():
                keys = [(k, lab) for lab in TABLE_A1_METHODS]
                if any(read[key] is None for key in keys):
                    notes.append(read.note(keys, f"Table A.1 ({d}, {k} classes per client) {REGIME_WORDS[reg]}"))
                    continue
                by_label = {lab: read[(k, lab)] for lab in TABLE_A1_METHODS}
                rows[reg][(d, k)], threshold = table_a1_rows(by_label, d, k, len(s.seeds), s.rounds)
                found[reg][(d, k)] = (by_label, threshold, s.rounds)
    return found, rows, notes


@dataclass(frozen=True)
class Table1Numbers:
    """Notebook 02's Table 1 and Table A.1 numbers, made from its reads (`numbers`): what its figures draw and its
    claims judge."""
    p: Table1Reads  # the reads by table, regime and dataset, and their settings
    runs: dict  # regime -> dataset -> entry -> [Result] (an entry with all its seeds: `read_regimes`)
    absent: dict  # regime -> [(dataset, entry)] whose runs are not all there
    notes: list  # what is missing and what was read from longer runs, in words
    tables: dict  # regime -> dataset -> `table1_rows` (numbers, the paper's layout, rows): those with every entry
    a1: dict  # regime -> (dataset, classes) -> (entry -> [Result], threshold, rounds): those with every run
    a1_rows: dict  # regime -> (dataset, classes) -> Table A.1's rows
    deciding: dict  # dataset -> the regime.Choice that decides its claims
    rankings: dict  # dataset -> `ranking_rows` (rows, lines, tau) of the deciding regime's paper entries

    @property
    def summary(self) -> dict:
        """regime -> dataset -> the paper's entries' rows, by entry."""
        return {reg: {d: {r.method: r for r in rows if r.method in self.p.paper_entries}
                      for d, (_, _, rows) in by.items()} for reg, by in self.tables.items()}


def _prefixes_note(p: Table1Reads) -> list[str]:
    """How many of the runs read were the first rounds of shipped longer runs (one sweep read them all)."""
    reads = [r for t in (p.table1, p.tableA1) for by in t.values() for r in by.values()] + \
        [*p.augment.values(), *p.beta.values()]
    if not reads:
        return []
    sweep = reads[0].results
    cfgs = {c.key(): c for r in reads for cs in r.plan.values() for c in cs}
    n = sum("first_rounds_of" in sweep([c])[0] for c in cfgs.values() if sweep.has([c]))
    return [f"{n} read as the first rounds of shipped longer runs"]


def numbers(reads) -> Table1Numbers:
    """Notebook 02's numbers from its reads (`papers.read_notebook` of `plans.table1_parts(...).every()`)."""
    p = table1_reads(reads)
    runs, absent = read_regimes(p)
    tables = {reg: {} for reg in REGIMES}
    for reg in REGIMES:
        for d, by_label in runs[reg].items():
            if by_label and not any(dd == d for dd, _ in absent[reg]):
                s = p.settings.table1[d]
                tables[reg][d] = table1_rows(by_label, d, len(s.seeds), s.rounds, p.profile)
    a1, a1_rows, a1_notes = _a1(p)
    chosen = deciding(runs, p.settings.table1)
    n = Table1Numbers(p, runs, absent, _prefixes_note(p) + missing_notes(p) + a1_notes, tables, a1, a1_rows, chosen,
                      {})
    for d in p.settings.table1:
        rows = n.summary[chosen[d].regime].get(d)
        if rows and not p.chosen:  # a ranking of some methods only would mislead
            n.rankings[d] = ranking_rows({m: r.accuracy_mean for m, r in rows.items()}, d)
    return n


def per_seed(results, f) -> list[float] | None:
    """`f` of each seed's Result (None without Results)."""
    return None if results is None else [f(r) for r in results]


def _to_threshold(r, threshold: float) -> tuple[float, int, bool]:
    return stats.bits_to_threshold(r.curve(), r.curve("up_bits"), r.curve("down_bits"), threshold)


def bits_to(threshold: float):
    """A Result -> the bits its run communicated until its accuracy first reached `threshold`."""
    return lambda r: _to_threshold(r, threshold)[0]


def reaches(threshold: float):
    """A Result -> whether its run's accuracy reached `threshold` (else `bits_to` counts to its best round)."""
    return lambda r: _to_threshold(r, threshold)[2]
