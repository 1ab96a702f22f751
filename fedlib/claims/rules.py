"""The rule kinds a claim is decided by, each a value with its parameters (`Rule`), and the test each kind runs.

A rule is stored in a claims file as a small JSON object (`Rule.cell`) and read back with `Rule.from_cell`: data, never
evaluated and never parsed out of prose. Every verdict is recomputed from a row's numbers and its rule (`decide`).

  paired       "A is more accurate than B": ours and the reference one number per seed, paired; a one-sided paired
               t-test at LEVEL each way over at least MIN_SEEDS seeds (op ">" or "<"; `value`: for rounds to a target,
               the value of a run that never reached it, 0 for none)
  equivalence  "reaches 98.15 +- 0.05": ours one number per seed, the reference [the paper's mean, the standard error
               of the paper's mean (or null)]; two one-sided tests at LEVEL each, margin `value` (accuracy points)
  marker       a significance marker of a table (op "<": the entry is marked lower than the reference, ">": higher),
               ours and the reference one number per seed; the exact one-tailed Wilcoxon signed-rank test at `value`
               (the level the caption states), with three outcomes
  observation  an entry a table leaves unmarked: an absent marker is not a claim; its p is reported, no verdict
  statement    a statement with no number ("still acceptable"): our number is reported, no verdict
  unjudged     a claim these runs cannot test at their scale (the row's note says why): no numbers, verdict
               NOT_JUDGED, whether or not the runs are there (before, such a row was a statement with no number,
               which reads "not run: missing data")
  comparison   one exact quantity against a bound: ours OP reference + value (numerical checks, a rank)
  tolerance    one exact quantity: |ours - reference| <= value
"""
from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass

HOLDS, FAILS, PARTLY, MISSING = "holds", "does not hold", "partly", "not run: missing data"
WITHIN = "within noise"  # not significant, and the 95% CI holds both 0 and the paper's own margin (or it gives none)
TIE = "not reproduced (a tie)"  # not significant, and the 95% CI excludes the paper's own margin: a tie measured
# precisely, where the paper claims a difference
CENSORED = "not reached (censored)"  # a rounds-to-target comparison in which neither side reached it on any seed
REPRODUCED, DIFFERS = "reproduced", "differs from the paper"
IMPRECISE, UNRESOLVED = "cannot be decided at this precision", "not resolved"
AGREES, NOT_SIGNIFICANT, OPPOSITE, TIES = "agrees", "not significant", "opposite", "cannot be decided (ties)"
OBSERVATION, REPORTED = "observation", "reported (no verdict)"
NOT_JUDGED = "not judged at this scale"
LEVEL = 0.025  # a paired comparison's one-sided level in each direction: with no effect, 5% of claims get a firm verdict
BAND = 2.0  # borderline: a p within a factor of BAND of its level; a tolerance's margin within 10% of it
MIN_SEEDS = 3
DELTA = 0.5  # the equivalence margin of a reproduced accuracy, in accuracy points
NUDGE = 0.005  # a comparison's verdict that moving its numbers 0.5% flips is near its threshold
RULE_KINDS = ("paired", "equivalence", "marker", "observation", "statement", "unjudged", "comparison", "tolerance")
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}

# How the headline counts read each verdict word (a word a rule can give is in exactly one of these)
OUTCOMES = {"hold": (HOLDS, REPRODUCED, AGREES),
            "differ": (FAILS, TIE, DIFFERS, OPPOSITE),
            "not resolved": (WITHIN, UNRESOLVED, IMPRECISE, NOT_SIGNIFICANT, TIES, PARTLY, CENSORED),
            "not judged": (MISSING, NOT_JUDGED),
            "reported": (OBSERVATION, REPORTED)}


def outcome(verdict: str) -> str:
    """The headline column a verdict word counts in ("indicative (n seeds)" is not resolved)."""
    for name, words in OUTCOMES.items():
        if verdict in words:
            return name
    return "not resolved"


@dataclass(frozen=True)
class Rule:
    kind: str  # one of RULE_KINDS
    op: str = ""  # paired and marker: ">" or "<"; comparison: one of < <= > >=
    value: float = 0.0  # paired: censored at (0 none); equivalence: the margin; marker: the level; comparison: the
    # offset; tolerance: the largest |ours - reference|
    claimed: float | None = None  # paired: the paper's own margin, in the claim's direction (None: it gives none);
    # a comparison that is not significant and whose 95% CI excludes it is "not reproduced (a tie)"

    def __post_init__(self):
        if self.kind not in RULE_KINDS:
            raise ValueError(f"rule kind {self.kind!r} is none of {', '.join(RULE_KINDS)}")
        ops = {"paired": ("<", ">"), "marker": ("<", ">"), "comparison": tuple(_OPS)}.get(self.kind, ("",))
        if self.op not in ops:
            raise ValueError(f"a {self.kind} rule's op is one of {ops}, got {self.op!r}")
        if not isinstance(self.value, (int, float)) or isinstance(self.value, bool) or not math.isfinite(self.value):
            raise ValueError(f"a rule's value is a finite number, got {self.value!r}")
        if self.kind in ("equivalence", "tolerance") and self.value <= 0:
            raise ValueError(f"a {self.kind} rule's margin is positive, got {self.value!r}")
        if self.kind == "marker" and not 0 < self.value < 1:
            raise ValueError(f"a marker rule's level lies in (0, 1), got {self.value!r}")
        if self.claimed is not None and (self.kind != "paired" or not isinstance(self.claimed, (int, float))
                                         or isinstance(self.claimed, bool) or not math.isfinite(self.claimed)):
            raise ValueError(f"only a paired rule takes the paper's margin (a finite number), got {self.claimed!r} "
                             f"for a {self.kind} rule")

    def cell(self) -> str:
        """The rule as a claims file stores it: a JSON object ("claimed" only where the paper gives its margin)."""
        d = {"kind": self.kind, "op": self.op, "value": self.value}
        return json.dumps(d | ({"claimed": self.claimed} if self.claimed is not None else {}), separators=(",", ":"))

    @classmethod
    def from_cell(cls, cell: str) -> "Rule":
        """The rule a claims file's cell stores, or ValueError saying what a rule cell is."""
        try:
            d = json.loads(cell)
        except (json.JSONDecodeError, TypeError):
            d = None
        if not isinstance(d, dict) or set(d) - {"claimed"} != {"kind", "op", "value"}:
            raise ValueError(f"rule {str(cell)[:80]!r} is not a rule cell: a JSON object with kind, op and value "
                             f"(and a paired rule's claimed) (kinds: {', '.join(RULE_KINDS)})")
        return cls(d["kind"], d["op"], d["value"], d.get("claimed"))

    def words(self) -> str:
        """The rule in words, for the report."""
        k, op, v = self.kind, self.op, self.value
        if k == "paired":
            return (f"paired t over seeds, ours {op} reference" + (f", censored at {v:g}" if v else "")
                    + (f", the paper's margin {self.claimed:+g}" if self.claimed is not None else ""))
        if k == "equivalence":
            return f"equivalence (two one-sided tests at {LEVEL:g}), margin {v:g} points"
        if k == "marker":
            return f"exact one-tailed Wilcoxon signed-rank, ours {op} reference, p < {v:g}"
        if k == "observation":
            return "an unmarked entry: its p, no verdict"
        if k == "statement":
            return "a statement with no number: ours reported, no verdict"
        if k == "unjudged":
            return "not judged at this scale: the note says why"
        if k == "comparison":
            return f"ours {op} reference" + (f" {'+' if v >= 0 else '-'} {abs(v):g}" if v else "")
        return f"|ours - reference| <= {v:g}"


def paired(op: str = ">", censored_at: float = 0.0, claimed: float | None = None) -> Rule:
    """`claimed`: the paper's own margin in the claim's direction, where it gives both sides' numbers."""
    return Rule("paired", op, float(censored_at or 0.0), None if claimed is None else float(claimed))


def equivalence(delta: float = DELTA) -> Rule:
    return Rule("equivalence", "", float(delta))


def marker(op: str, level: float) -> Rule:
    return Rule("marker", op, float(level))


def observation() -> Rule:
    return Rule("observation")


def statement() -> Rule:
    return Rule("statement")


def unjudged() -> Rule:
    return Rule("unjudged")


def comparison(op: str, offset: float = 0.0) -> Rule:
    return Rule("comparison", op, float(offset))


def tolerance(c: float) -> Rule:
    return Rule("tolerance", "", float(c))


@dataclass(frozen=True)
class Decision:
    verdict: str
    margin: object = ""  # in the claim's favour (paired, equivalence: ours - the paper's; marker: median difference)
    se: object = ""
    p: object = ""  # the p a multiple-testing correction takes ("" where nothing is decided)
    note: str = ""  # what the numbers say beyond the verdict
    toward: str = ""  # "k/n seeds, smallest +x": how many seeds point the claim's way (paired, marker)
    borderline: bool = False


def _seeds(values) -> list[float]:
    return [float(v) for v in values]


def _per_seed_refs(ours, reference) -> list[float]:
    refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(ours)
    if len(refs) != len(ours):
        raise ValueError(f"{len(ours)} seeds of ours against {len(refs)} of the reference")
    return _seeds(refs)


def _toward(diffs: list[float]) -> str:
    k = sum(d > 0 for d in diffs)
    return f"{k}/{len(diffs)} seeds, smallest {min(diffs):+.3g}" if diffs else ""


# ------------------------------------------------------------------------------------------------------ paired
def _diffs(ours, reference, rule: Rule) -> list[float]:
    """Per seed, ours minus the reference, oriented so that a positive difference favours the claim (op ">" or "<")."""
    refs = _per_seed_refs(ours, reference)
    return [(o - r) if rule.op == ">" else (r - o) for o, r in zip(_seeds(ours), refs)]


def paired_stats(ours, reference, rule: Rule) -> tuple[float, float, int]:
    """(mean, standard error, seeds) of the paired differences, oriented so that a positive margin favours the claim."""
    diffs = _diffs(ours, reference, rule)
    n = len(diffs)
    mean = sum(diffs) / n
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n) if n > 1 else float("nan")
    return mean, se, n


def paired_p(ours, reference, rule: Rule) -> tuple[float, float]:
    """One-sided p-values of the paired t-test: (in the claim's direction, against it). Zero spread with a non-zero
    mean gives 0 on its side."""
    from scipy import stats as st

    mean, se, n = paired_stats(ours, reference, rule)
    if n < 2:
        return float("nan"), float("nan")
    if se == 0:
        return (0.0, 1.0) if mean > 0 else (1.0, 0.0) if mean < 0 else (1.0, 1.0)
    t = mean / se
    return float(st.t.sf(t, n - 1)), float(st.t.cdf(t, n - 1))


def _censored_everywhere(ours, reference, rule: Rule) -> bool:
    at = rule.value
    return bool(at) and all(o >= at for o in _seeds(ours)) and all(r >= at for r in _per_seed_refs(ours, reference))


def paired_note(ours, reference, rule: Rule) -> str:
    at = rule.value
    refs = _per_seed_refs(ours, reference)
    notes = []
    if at and not _censored_everywhere(ours, reference, rule):
        sides = [name for name, v in (("ours", _seeds(ours)), ("the reference", refs)) if any(x >= at for x in v)]
        if sides:
            notes.append(f"{' and '.join(sides)} censored at {at:g} on some seeds: the margin is a bound")
    mean, se, n = paired_stats(ours, reference, rule)
    if n >= 2 and se == 0 and mean != 0:
        notes.append("zero spread: every seed gives the same difference, so p is 0; read the margin itself")
    return "; ".join(notes)


def _t_critical(n: int) -> float:
    from scipy import stats as st

    return float(st.t.ppf(1 - LEVEL, n - 1))


def ci95(mean: float, se: float, n: int) -> tuple[float, float]:
    """The two-sided 95% confidence interval of a paired mean over n seeds (its ends at LEVEL each side)."""
    half = _t_critical(n) * se
    return mean - half, mean + half


def _decide_paired(ours, reference, rule: Rule) -> Decision:
    mean, se, n = paired_stats(ours, reference, rule)
    diffs = _diffs(ours, reference, rule)
    if n < MIN_SEEDS:
        return Decision(f"indicative ({n} seed{'s' if n > 1 else ''})", mean, se, "", paired_note(ours, reference, rule),
                        _toward(diffs))
    if _censored_everywhere(ours, reference, rule):
        return Decision(CENSORED, "", "", "", "", "")
    p_for, p_against = paired_p(ours, reference, rule)
    found = HOLDS if p_for < LEVEL else FAILS if p_against < LEVEL else WITHIN
    note = paired_note(ours, reference, rule)
    if found == WITHIN and rule.claimed is not None:
        lo, hi = ci95(mean, se, n)
        said = f"95% CI {lo:+.3g} to {hi:+.3g}, the paper's margin {rule.claimed:+.3g}"
        if not lo <= rule.claimed <= hi:
            found = TIE
            said += " lies outside it"
        note = "; ".join(x for x in (note, said) if x)
    if found == WITHIN and all(d > 0 for d in diffs):
        note = "; ".join(x for x in (note, f"every seed in the claim's direction, but with {n} seeds a firm verdict "
                                           f"needs t > {_t_critical(n):.2f}") if x)
    border = any(LEVEL / BAND <= p <= LEVEL * BAND for p in (p_for, p_against))
    return Decision(found, mean, se, p_for, note, _toward(diffs), border)


# ------------------------------------------------------------------------------------------------- equivalence
def _decide_equivalence(ours, reference, rule: Rule) -> Decision:
    """ours: one accuracy per seed; reference: [the paper's mean, the SE of the paper's mean or None]."""
    from scipy import stats as st

    values = _seeds(ours)
    paper, paper_se = (list(reference) + [None])[:2] if isinstance(reference, (list, tuple)) else (reference, None)
    n = len(values)
    mean = sum(values) / n
    d = mean - float(paper)
    if n < 2:
        return Decision("indicative (1 seed)", d, "", "", "")
    se_ours = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)
    se = math.sqrt(se_ours ** 2 + (float(paper_se) if paper_se is not None else 0.0) ** 2)
    note = "" if paper_se is not None else "the paper gives no spread: its SE taken as 0"
    if n < MIN_SEEDS:  # a verdict only from MIN_SEEDS seeds, as a paired claim's (issue 89's rule)
        return Decision(f"indicative ({n} seeds)", d, se, "", note)
    delta, t = rule.value, _t_critical(n)
    if se == 0:
        p = 0.0 if abs(d) < delta else 1.0
    else:
        p = float(max(st.t.sf((d + delta) / se, n - 1), st.t.sf((delta - d) / se, n - 1)))
    if abs(d) + t * se <= delta:
        found = REPRODUCED
    elif abs(d) - t * se > delta:
        found = DIFFERS
    elif t * se >= delta:
        found = IMPRECISE
    else:
        found = UNRESOLVED
    return Decision(found, d, se, p, note, "", LEVEL / BAND <= p <= LEVEL * BAND)


# ------------------------------------------------------------------------------------------------------ markers
def _decide_marker(ours, reference, rule: Rule) -> Decision:
    from ..stats import wilcoxon_signed_rank

    values, refs = _seeds(ours), _per_seed_refs(ours, reference)
    along = "less" if rule.op == "<" else "greater"
    against = "greater" if along == "less" else "less"
    t_for, t_against = wilcoxon_signed_rank(values, refs, along), wilcoxon_signed_rank(values, refs, against)
    diffs = _diffs(values, refs, rule)
    nonzero = len(values) - t_for.zeros
    note = f"{t_for.zeros} of {len(values)} seeds equal on both sides, dropped by the test" if t_for.zeros else ""
    median = sorted(diffs)[len(diffs) // 2] if len(diffs) % 2 else sum(sorted(diffs)[len(diffs) // 2 - 1:
                                                                             len(diffs) // 2 + 1]) / 2
    if 0.5 ** nonzero >= rule.value:  # the smallest p the test can reach is not below the level
        why = (f"{nonzero} untied pairs: the smallest one-tailed p is 1/2^{nonzero} = {0.5 ** nonzero:.3g}, not "
               f"below {rule.value:g}")
        word = TIES if t_for.zeros else f"indicative ({len(values)} seed{'s' if len(values) > 1 else ''})"
        return Decision(word, median, "", "", "; ".join(x for x in (note, why) if x), _toward(diffs))
    found = AGREES if t_for.p < rule.value else OPPOSITE if t_against.p < rule.value else NOT_SIGNIFICANT
    border = any(rule.value / BAND <= p <= rule.value * BAND for p in (t_for.p, t_against.p))
    return Decision(found, median, "", t_for.p, note, _toward(diffs), border)


def _decide_observation(ours, reference) -> Decision:
    from ..stats import wilcoxon_signed_rank

    values, refs = _seeds(ours), _per_seed_refs(ours, reference)
    less, greater = wilcoxon_signed_rank(values, refs, "less"), wilcoxon_signed_rank(values, refs, "greater")
    likelier = less if less.p <= greater.p else greater
    word = "lower" if likelier is less else "higher"
    diffs = [o - r for o, r in zip(values, refs)]
    note = f"one-tailed Wilcoxon p {likelier.p:.3g} that ours is {word} (the likelier direction, {len(values)} seeds)"
    if likelier.zeros:
        note += f"; {likelier.zeros} of {len(values)} seeds equal on both sides"
    return Decision(OBSERVATION, sum(diffs) / len(diffs), "", "", note, "")


# ------------------------------------------------------------------------------------------ one exact quantity
def _holds(ours: float, reference: float, rule: Rule) -> bool:
    if rule.kind == "tolerance":
        return abs(ours - reference) <= rule.value
    return bool(_OPS[rule.op](ours, reference + rule.value))


def _exact(ours, reference, rule: Rule) -> str:
    if isinstance(ours, (list, tuple)):
        refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(ours)
        results = [_holds(o, r, rule) for o, r in zip(ours, refs) if o is not None]
        if not results:
            return MISSING
        return HOLDS if all(results) else FAILS if not any(results) else PARTLY
    return HOLDS if _holds(ours, reference, rule) else FAILS


def _scaled(v, factor):
    if isinstance(v, (list, tuple)):
        return [_scaled(x, factor) for x in v]
    return v * factor if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def _exact_borderline(ours, reference, rule: Rule, found: str) -> bool:
    if rule.kind == "tolerance":
        values = ours if isinstance(ours, (list, tuple)) else [ours]
        refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(values)
        return any(o is not None and abs(abs(o - r) - rule.value) <= 0.1 * rule.value for o, r in zip(values, refs))
    return any(_exact(_scaled(ours, up), _scaled(reference, 2 - up), rule) != found for up in (1 + NUDGE, 1 - NUDGE))


def _missing(ours) -> bool:
    return ours is None or (isinstance(ours, float) and math.isnan(ours)) or (isinstance(ours, (list, tuple))
                                                                            and not ours)


def decide(ours, reference, rule: Rule) -> Decision:
    """The verdict `rule` gives for these numbers, with what the report shows beside it."""
    if rule.kind == "unjudged":
        return Decision(NOT_JUDGED)
    if _missing(ours) or (rule.kind in ("paired", "marker", "observation") and reference is None):
        return Decision(MISSING)
    if rule.kind == "paired":
        return _decide_paired(ours, reference, rule)
    if rule.kind == "equivalence":
        return _decide_equivalence(ours, reference, rule)
    if rule.kind == "marker":
        return _decide_marker(ours, reference, rule)
    if rule.kind == "observation":
        return _decide_observation(ours, reference)
    if rule.kind == "statement":
        return Decision(REPORTED)
    found = _exact(ours, reference, rule)
    return Decision(found, borderline=found != MISSING and _exact_borderline(ours, reference, rule, found))


def verdict(ours, reference, rule: Rule) -> str:
    return decide(ours, reference, rule).verdict
