"""The claims ledger: every notebook's verdicts on the papers' claims, as rows computed from numbers.

A notebook opens a `ClaimsLedger` with its name and profile, records each claim with our number, the number it is
compared with (the paper's, or another of ours) and the rule that decides (e.g. "ours >= reference - 1.5",
"ours < reference"), and saves. The verdict is computed here from the rule, never typed, and the rule stays in
the row, so anyone can recompute it (`verdict`). A notebook's rows go to figures/claims/<notebook>_<profile>.csv,
which only that notebook and profile rewrite (beside it, a .json names the kind of processor and the code that
ran the notebook); smoke rows go under build/smoke/ like all smoke output.
`python -m fedlib claims` collects every file into figures/claims.csv and figures/claims.md (run_all.sh does),
recomputing every verdict from its row and refusing a file that is damaged or whose verdicts disagree with its rules.

How sure a verdict is (design.md, "Verdicts and scale"): a claim that compares methods or settings is recorded with
`ClaimsLedger.compare`, one number per seed on each side, and decided by a paired t-test of the differences (rule
"paired: ours > reference"; n - 1 degrees of freedom): it holds, or does not hold, when the one-sided p in that
direction is below LEVEL (2.5%) over at least 3 seeds, so a claim with no effect gets a firm verdict 5% of the time;
otherwise it is "within noise", or "indicative (n seeds)" with fewer than 3. Rounds to a target where neither side
reached it on any seed are "not reached (censored)". The margin, its standard error, p and a note (a censored side,
zero spread) stand in the row. Claims about one exact quantity keep their tolerance rules (`ClaimsLedger.record`).
Every row names its scale (the profile: smoke, quick or paper). A verdict is "borderline" when its p lies within a
factor 2 of the level (paired rows), a tolerance within 10% of its edge, or a comparison's verdict changes when its
numbers move by 0.5% (`NUDGE`); figures/claims.md counts them, and reports Holm's correction per paper.
"""
from __future__ import annotations

import csv
import io
import json
import math
import operator
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import provenance
from .paths import figures_dir

HOLDS, FAILS, PARTLY, MISSING = "holds", "does not hold", "partly", "not run: missing data"
WITHIN = "within noise"
CENSORED = "not reached (censored)"  # a rounds-to-target comparison in which neither side reached it on any seed
LEVEL = 0.025  # a paired comparison's one-sided level in each direction: with no effect, 5% of claims get a firm verdict
BAND = 2.0  # borderline: a paired p within a factor of BAND of LEVEL; a tolerance's margin within 10% of it
PAIRED = "paired: "  # the prefix of a rule decided on paired differences over seeds
MIN_SEEDS = 3
NUDGE = 0.005  # 0.5% relative: beyond another processor's rounding of accuracies (0.16 points measured), so a
# verdict that moving its numbers this much flips is near its threshold
COLUMNS = ["paper", "where", "claim", "paper_value", "ours", "reference", "rule", "verdict", "notebook", "profile",
           "seeds", "rounds", "scale", "margin", "se", "borderline", "p", "note"]
SCALES = ("smoke", "quick", "reduced", "paper")  # reduced: the paper's protocol at a smaller scale the row names


class ClaimsError(ValueError):
    """A claims file that cannot be collected: damaged, emptied, or with a verdict its own rule does not give."""


def paired_stats(ours, reference, rule: str) -> tuple[float, float, int]:
    """(mean, standard error, seeds) of the paired differences a "paired: ours > reference" (or "<") rule decides
    on, oriented so that a positive margin favours the claim. `reference` is one number per seed or one for all."""
    parsed = parse_rule(rule)
    if parsed.kind != "paired":
        raise ValueError(f"a paired rule is 'paired: ours > reference' or 'paired: ours < reference', got {rule!r}")
    op = f"ours{parsed.op}reference"
    refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(ours)
    if len(refs) != len(ours):
        raise ValueError(f"paired rule: {len(ours)} seeds of ours against {len(refs)} of the reference")
    diffs = [(o - r) if op == "ours>reference" else (r - o) for o, r in zip(ours, refs)]
    n = len(diffs)
    mean = sum(diffs) / n
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1) / n) if n > 1 else float("nan")
    return mean, se, n


def paired_p(ours, reference, rule: str) -> tuple[float, float]:
    """The one-sided p-values of a paired t-test (n - 1 degrees of freedom) of the paired differences: (p in the
    claim's direction, p against it). Zero spread with a non-zero mean gives 0 on its side."""
    from scipy import stats as st

    mean, se, n = paired_stats(ours, reference, rule)
    if n < 2:
        return float("nan"), float("nan")
    if se == 0:
        return (0.0, 1.0) if mean > 0 else (1.0, 0.0) if mean < 0 else (1.0, 1.0)
    t = mean / se
    return float(st.t.sf(t, n - 1)), float(st.t.cdf(t, n - 1))


def _censored_everywhere(ours, reference, rule: str) -> bool:
    at = parse_rule(rule).value
    refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(ours)
    return bool(at) and all(o >= at for o in ours) and all(r >= at for r in refs)


def devices_note(sides: dict[str, list]) -> str:
    """"" when every run of the sides (name -> its results) was made on one device type; otherwise which side's runs
    ran where, since a pair then compares arithmetic that rounds differently (FedCR's Table 2 n1, seed 0: 93.70% on
    an H200 against 93.59% on a CPU, per client +0.11 points, SE 0.08)."""
    where = {name: sorted({r.get("device", "cpu") for r in rs or []}) for name, rs in sides.items()}
    if len({d for ds in where.values() for d in ds}) <= 1:
        return ""
    return "runs on different devices: " + ", ".join(f"{name} on {' and '.join(ds)}" for name, ds in where.items())


def paired_note(ours, reference, rule: str) -> str:
    """What a paired verdict's reader must know beyond it: a censored side (its margin is a bound), zero spread."""
    at = parse_rule(rule).value
    refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(ours)
    notes = []
    if at and not _censored_everywhere(ours, reference, rule):
        sides = [name for name, v in (("ours", ours), ("the reference", refs)) if any(x >= at for x in v)]
        if sides:
            notes.append(f"{' and '.join(sides)} censored at {at:g} on some seeds: the margin is a bound")
    mean, se, n = paired_stats(ours, reference, rule)
    if n >= 2 and se == 0 and mean != 0:
        notes.append("zero spread: every seed gives the same difference, so p is 0; read the margin itself")
    return "; ".join(notes)


def _paired_verdict(ours, reference, rule: str) -> str:
    mean, se, n = paired_stats(ours, reference, rule)
    if n < MIN_SEEDS:
        return f"indicative ({n} seed{'s' if n > 1 else ''})"
    if _censored_everywhere(ours, reference, rule):
        return CENSORED
    p_for, p_against = paired_p(ours, reference, rule)
    return HOLDS if p_for < LEVEL else FAILS if p_against < LEVEL else WITHIN


# The rule kinds a claim may be decided by, as data: no rule text is ever evaluated (a claims CSV is a file anyone can
# edit, and the ledger reads every one). `parse_rule` reads a rule's text into one of these, or refuses it by name.
#   comparison   "ours OP reference", "ours OP reference + c" or "- c"   (OP one of < <= > >=)
#   tolerance    "abs(ours - reference) <= c"
#   paired       "paired: ours > reference" or "paired: ours < reference"  (over seeds, see `paired_stats`), and for
#                rounds to a target "paired: ours < reference, censored at K" (K: the value of a run that never reached it)
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_COMPARISON = re.compile(rf"ours\s*(<=|>=|<|>)\s*reference(?:\s*([-+])\s*({_NUMBER}))?")
_TOLERANCE = re.compile(rf"abs\(\s*ours\s*-\s*reference\s*\)\s*<=\s*({_NUMBER})")
_PAIRED = re.compile(rf"paired:\s*ours\s*(<|>)\s*reference(?:\s*,\s*censored at\s*({_NUMBER}))?")
RULE_KINDS = ("comparison", "tolerance", "paired")


@dataclass(frozen=True)
class Rule:
    kind: str  # one of RULE_KINDS
    op: str = ""  # comparison and paired: the operator between ours and the reference
    value: float = 0.0  # comparison: the reference's offset; tolerance: the largest |ours - reference|


def parse_rule(text: str) -> Rule:
    """The rule kind `text` states (see RULE_KINDS), or a ValueError that names what rules may be."""
    text = str(text).strip()
    if m := _PAIRED.fullmatch(text):  # value: the censoring point of a rounds-to-target comparison (0: none)
        return Rule("paired", m.group(1), float(m.group(2)) if m.group(2) else 0.0)
    if m := _TOLERANCE.fullmatch(text):
        return Rule("tolerance", "<=", float(m.group(1)))
    if m := _COMPARISON.fullmatch(text):
        offset = float(m.group(3)) if m.group(3) else 0.0
        return Rule("comparison", m.group(1), -offset if m.group(2) == "-" else offset)
    raise ValueError(f"rule {text!r} is none of the rule kinds: 'ours OP reference' (OP one of < <= > >=, optionally "
                     f"'+ c' or '- c'), 'abs(ours - reference) <= c', 'paired: ours > reference' or '... < ...'")


def _holds(ours: float, reference: float, rule: str) -> bool:
    r = parse_rule(rule)
    if r.kind == "tolerance":
        return abs(ours - reference) <= r.value
    if r.kind == "comparison":
        return bool(_OPS[r.op](ours, reference + r.value))
    raise ValueError(f"rule {rule!r} is decided over seeds (paired_stats), not one number at a time")


def verdict(ours, reference, rule: str) -> str:
    """holds / does not hold / partly (lists: some elements hold) / not run: missing data (ours is None)."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return MISSING
    if parse_rule(rule).kind == "paired":
        return _paired_verdict(ours, reference, rule)
    if isinstance(ours, (list, tuple)):
        refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(ours)
        results = [_holds(o, r, rule) for o, r in zip(ours, refs) if o is not None]
        if not results:
            return MISSING
        return HOLDS if all(results) else FAILS if not any(results) else PARTLY
    return HOLDS if _holds(ours, reference, rule) else FAILS


@dataclass
class Claim:
    paper: str  # e.g. "FedLog"
    where: str  # figure or table, e.g. "Table 1"
    claim: str  # in words
    paper_value: object  # the paper's number (None where the paper gives none)
    ours: object  # our number (or a list of them: one per dataset, seed...)
    reference: object  # what ours is compared with: the paper's number, or another of ours
    rule: str  # one of the rule kinds (`parse_rule`), e.g. "ours >= reference - 1.5"
    verdict: str = ""
    notebook: str = ""
    profile: str = ""
    seeds: object = ""
    rounds: object = ""
    scale: str = ""  # smoke, quick or paper: the profile the numbers come from
    margin: object = ""  # paired rows: the mean difference in the claim's favour
    se: object = ""  # paired rows: its standard error over seeds
    borderline: bool = False
    p: object = ""  # paired rows: the one-sided p of the paired t-test in the claim's direction
    note: str = ""  # what the verdict's reader must know: a censored side, zero spread


def _scaled(v, factor):
    if isinstance(v, (list, tuple)):
        return [_scaled(x, factor) for x in v]
    return v * factor if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def is_borderline(ours, reference, rule: str, verdict_now: str) -> bool:
    """Whether the verdict is near its threshold: a paired comparison whose p lies within a factor BAND of LEVEL, a
    tolerance within 10% of its edge, or a comparison that moving the numbers by NUDGE (ours up and the reference
    down, or the reverse) would change."""
    if verdict_now == MISSING or verdict_now == CENSORED:
        return False
    parsed = parse_rule(rule)
    if parsed.kind == "paired":  # in the statistic's own terms: a p within a factor BAND of the level, either side
        mean, se, n = paired_stats(ours, reference, rule)
        return n >= MIN_SEEDS and any(LEVEL / BAND <= p <= LEVEL * BAND for p in paired_p(ours, reference, rule))
    if parsed.kind == "tolerance":  # in the quantity's own units: within 10% of the tolerance of its edge
        values = ours if isinstance(ours, (list, tuple)) else [ours]
        refs = reference if isinstance(reference, (list, tuple)) else [reference] * len(values)
        return any(o is not None and abs(abs(o - r) - parsed.value) <= 0.1 * parsed.value for o, r in zip(values, refs))
    for up in (1 + NUDGE, 1 - NUDGE):
        if verdict(_scaled(ours, up), _scaled(reference, 2 - up), rule) != verdict_now:
            return True
    return False

@dataclass
class ClaimsLedger:
    notebook: str
    profile: str
    rows: list[Claim] = field(default_factory=list)
    scale: str = ""  # "reduced": the paper's protocol at a smaller scale, which each row's `where` names (default: the profile)

    def record(self, paper: str, where: str, claim: str, ours, reference, rule: str, paper_value=None,
               seeds="", rounds="") -> str:
        """Add one claim; returns its verdict (computed from the rule). A comparison of methods or settings over
        seeds belongs in `compare`; a rule here that compares one seed's numbers is read as such."""
        found = verdict(ours, reference, rule)
        margin = se = p = ""
        note = ""
        if rule.startswith(PAIRED) and found != MISSING:
            margin, se, _ = paired_stats(ours, reference, rule)
            p, note = paired_p(ours, reference, rule)[0], paired_note(ours, reference, rule)
        # a reduced scale's rows read shipped runs alike in every profile: their file must not depend on which wrote it
        profile = "any" if self.scale == "reduced" else self.profile
        row = Claim(paper, where, claim, paper_value, ours, reference, rule, found, self.notebook, profile,
                    seeds, rounds, self.scale or self.profile, margin, se, is_borderline(ours, reference, rule, found),
                    p, note)
        self.rows.append(row)
        extra = ""
        if margin != "":  # one seed has no standard error and no p: say the seed count instead of "+- nan"
            extra = (f", margin {margin:.4g} +- {se:.2g} (SE), p {p:.2g}" if se == se else
                     f", margin {margin:.4g} (1 seed: no SE, no p)")
        print(f"[{row.verdict}{', borderline' if row.borderline else ''}] {paper}, {where}: {claim} "
              f"(ours {_fmt(ours)}, {rule.replace('reference', _fmt(reference))}{extra})")
        return row.verdict

    def compare(self, paper: str, where: str, claim: str, ours: list, reference, direction: str = ">",
                paper_value=None, rounds="", censored_at=None) -> str:
        """A claim that compares methods or settings: `ours` one number per seed, `reference` one per seed (paired)
        or one for all; `direction` ">" (ours above the reference) or "<". Decided by a paired t-test (LEVEL in each
        direction). `censored_at`: rounds to a target, where this value means "never reached"."""
        if direction not in (">", "<"):
            raise ValueError(f"direction is '>' or '<', got {direction!r}")
        if ours is not None and not isinstance(ours, (list, tuple)):
            raise ValueError("compare takes one number per seed (a list)")
        if reference is None:  # the other side's runs are missing: so is the comparison
            ours = None
        rule = f"{PAIRED}ours {direction} reference" + (f", censored at {censored_at:g}" if censored_at else "")
        return self.record(paper, where, claim, ours, reference, rule, paper_value,
                           seeds=len(ours) if ours is not None else 0, rounds=rounds)

    def reproduced(self, paper: str, where: str, what: str, mean: float, se: float, seeds: int, reported: float,
                   reported_se: float | None, rounds="", tolerance: float = 1.5) -> list[str]:
        """One reported number reproduced: our seeds' `mean` within `tolerance` of `reported` (the coarse row) and,
        with 2 or more seeds and the paper's standard error, within two standard errors of the difference
        (2 x sqrt(se^2 + reported_se^2)). `what` names the quantity, e.g. "FedLog's accuracy"."""
        out = [self.record(paper, where, f"{what} is reproduced within {tolerance:g} points", mean, reported,
                           f"abs(ours - reference) <= {tolerance:g}", paper_value=reported, seeds=seeds, rounds=rounds)]
        if seeds >= 2 and reported_se is not None:
            band = 2 * (se ** 2 + reported_se ** 2) ** 0.5
            out.append(self.record(paper, where, f"{what} matches the paper's within two standard errors of the "
                                   f"difference (2 x sqrt(ours^2 + the paper's^2) = {band:.2f})", mean, reported,
                                   f"abs(ours - reference) <= {band:.4g}", paper_value=reported, seeds=seeds,
                                   rounds=rounds))
        return out

    def path(self) -> Path:
        return figures_dir() / "claims" / f"{self.notebook}_{self.scale or self.profile}.csv"

    def cannot_judge(self, paper: str, where: str, claim: str, why: str) -> str:
        """A claim these runs cannot judge, said with the reason (verdict: not run)."""
        self.record(paper, where, claim, None, None, "ours > reference")
        self.rows[-1].note = f"not judged here: {why}"
        return self.rows[-1].verdict

    def add_note(self, text: str, last: int = 1) -> None:
        """Append `text` (if any) to the note of each of the `last` rows recorded (after what their rule said)."""
        for row in self.rows[len(self.rows) - last:] if text else []:
            row.note = "; ".join(n for n in (row.note, text) if n)

    def save(self, keep_other_where: bool = False) -> Path:
        """Replace this notebook's rows for this profile (and only those). keep_other_where: the saved rows whose
        figure or table (`where`) this ledger has no row for stay, ahead of the new ones (a notebook run on some of
        its datasets keeps the others' claims)."""
        out = self.path()
        out.parent.mkdir(parents=True, exist_ok=True)
        new = [{k: _cell(v) for k, v in asdict(row).items()} for row in self.rows]
        if keep_other_where and out.exists():
            mine = {row.where for row in self.rows}
            new = [row for row in read(out) if row["where"] not in mine] + new
        with open(out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS)
            w.writeheader()
            w.writerows(new)
        stamp = {"machine": provenance.machine(), "fingerprint": provenance.fingerprint()}
        out.with_suffix(".json").write_text(json.dumps(stamp, indent=1) + "\n")
        return out


def _md_cell(text) -> str:
    """A markdown table cell: a '|' in it would end the cell (and shift the row), a newline the row."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def _cell(v) -> str:
    return json.dumps(v) if isinstance(v, (list, tuple, dict)) or v is None else str(v)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def made_on(path: Path) -> str | None:
    """The kind of processor that made a ledger file's numbers (`provenance.machine`; None if unrecorded)."""
    stamp = path.with_suffix(".json")
    return json.loads(stamp.read_text()).get("machine") if stamp.exists() else None


def read(path: Path, lines: bool = False) -> list[dict]:
    """A claims file's rows; with `lines`, each carries "_line", the file line its row ends on (a quoted cell may
    span lines)."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return [{**row, "_line": reader.line_num} if lines else row for row in reader]


def parse(cell: str):
    try:
        return json.loads(cell)
    except json.JSONDecodeError:
        return cell


def collect(folder: Path | None = None) -> list[dict]:
    """Every notebook's rows (figures/claims/*.csv), for figures/claims.csv and .md, each verdict recomputed from
    its row's numbers and rule. A file that cannot be read, holds no row, or has a row whose stored verdict its rule
    does not give is refused (ClaimsError, naming the file and row) before anything is written."""
    folder = folder or figures_dir() / "claims"
    rows = []
    files = sorted(folder.glob("*.csv"))
    if not files:
        raise ClaimsError(f"{folder} holds no claims file (a notebook's ledger is <notebook>_<profile>.csv): run the "
                          f"notebooks first (./run_all.sh), or restore the folder with `git checkout -- {folder.name}`")
    for p in files:
        try:
            found = read(p, lines=True)
        except (UnicodeDecodeError, csv.Error) as err:
            raise ClaimsError(f"{p}: not a readable claims file ({type(err).__name__}); rerun its notebook") from None
        if not found:
            raise ClaimsError(f"{p}: holds no claim (header only or empty); rerun its notebook to rewrite it")
        for row in found:
            i = row.pop("_line")
            if None in row:
                raise ClaimsError(f"{p}, line {i}: the row has {len(row[None])} value(s) more than the header's "
                                  f"columns (the file is damaged); rerun its notebook")
            if any(row.get(k) is None for k in COLUMNS[:10]):
                raise ClaimsError(f"{p}, line {i}: the row is cut short (the file is damaged); rerun its notebook")
            try:
                parse_rule(row["rule"])
            except ValueError as err:
                raise ClaimsError(f"{p}, line {i}: refused: {err}; rerun its notebook") from None
            try:
                again = verdict(parse(row["ours"]), parse(row["reference"]), row["rule"])
            except Exception as err:  # noqa: BLE001  (a row a hand edit broke)
                raise ClaimsError(f"{p}, line {i}: its rule cannot be evaluated ({err}); rerun its notebook") from None
            if again != row["verdict"]:
                raise ClaimsError(f"{p}, line {i}: the stored verdict {row['verdict']!r} is not what its rule gives "
                                  f"({again!r}) for ours={row['ours']} and reference={row['reference']}; rerun its "
                                  f"notebook rather than editing the file")
            ours, reference = parse(row["ours"]), parse(row["reference"])
            row["scale"] = row.get("scale") or row["profile"]
            row.update(_derived(ours, reference, row["rule"], again, row.get("note") or ""))
            rows.append(row)
    return rows


def _derived(ours, reference, rule: str, found: str, note: str = "") -> dict:
    """The columns a row's numbers and rule determine beside its verdict: borderline, and for paired rows the
    margin, its SE, p and the note: the notebook's (`note`, e.g. which rival a row is against) followed by what the
    numbers say (a censored side, zero spread), each once."""
    out = {"borderline": str(is_borderline(ours, reference, rule, found)), "margin": "", "se": "", "p": ""}
    if rule.startswith(PAIRED) and found != MISSING:
        out["margin"], out["se"] = (str(v) for v in paired_stats(ours, reference, rule)[:2])
        parts = [x for x in note.split("; ") if x]
        parts += [x for x in paired_note(ours, reference, rule).split("; ") if x and x not in parts]
        out["p"], out["note"] = str(paired_p(ours, reference, rule)[0]), "; ".join(parts)
    return out


def rejudge(folder: Path | None = None) -> int:
    """Rewrite every notebook's ledger under the current decision rule from the numbers it stores (its verdicts,
    margins, p and borderline flags; never its numbers), after a change of the rule. Returns the rows changed."""
    folder = folder or figures_dir() / "claims"
    changed = 0
    for p in sorted(folder.glob("*.csv")):
        rows = read(p)
        for row in rows:
            ours, reference = parse(row["ours"]), parse(row["reference"])
            found = verdict(ours, reference, row["rule"])
            new = {"verdict": found, **_derived(ours, reference, row["rule"], found)}
            changed += any(str(row.get(k, "")) != v for k, v in new.items() if k == "verdict")
            row.update(new)
        buffer = io.StringIO()
        w = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
        _atomic_write(p, buffer.getvalue())
    return changed


def _rule_lines() -> list[str]:
    """claims.md's statement of the decision rule and of every verdict word."""
    return ["", "## The rule, and what the words mean", "",
            f"A comparison over seeds is decided by a paired t-test of the per-seed differences (n - 1 degrees of "
            f"freedom), one-sided at {LEVEL:g} in each direction, over at least {MIN_SEEDS} seeds: with no effect a "
            f"claim gets a firm verdict {2 * LEVEL:.0%} of the time. Words: **holds**, p < {LEVEL:g} in the claim's "
            f"direction; **does not hold**, p < {LEVEL:g} against it; **within noise**, neither; **indicative (n "
            f"seeds)**, fewer than {MIN_SEEDS} seeds, not decided; **{CENSORED}**, rounds to a target where neither "
            f"side reached it on any seed; **partly**, some of a list of numbers hold; **borderline**, p within a "
            f"factor {BAND:g} of {LEVEL:g} (a tolerance: within 10% of its edge); **{MISSING}**, the runs it needs are not "
            f"computed or shipped (or, with a note, cannot be judged at that scale); **reduced** (a scale), the paper's "
            f"protocol at a smaller scale that the line names; **this line** (under numbers), the line is the quick profile's own. The margin is "
            f"the mean paired difference in the claim's favour, with its standard error over seeds and p (with one "
            f"seed: no SE); a note says where a side was censored (the margin is then a bound) or every seed gave the "
            f"same difference.", ""]


def holm(pvalues: list[float], alpha: float = LEVEL) -> list[bool]:
    """Holm's step-down correction: which of the hypotheses (one-sided p-values) are rejected at family level
    `alpha` (in the order given)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    for step, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - step):
            break
        rejected[i] = True
    return rejected


def _holm_lines(rows: list[dict]) -> list[str]:
    """Per paper and scale: the decided comparisons, how many hold at LEVEL each, and after Holm's correction."""
    out = ["| paper | scale | comparisons decided | hold at the level each | hold after Holm's correction |",
           "|---|---|---|---|---|"]
    for paper in sorted({r["paper"] for r in rows}):
        for scale in SCALES:
            ps = [float(parse(r["p"])) for r in rows if r["paper"] == paper and r["scale"] == scale
                  and r.get("p") not in ("", None, "nan") and r["verdict"] in (HOLDS, FAILS, WITHIN)]
            if ps:
                out.append(f"| {paper} | {scale} | {len(ps)} | {sum(p < LEVEL for p in ps)} | {sum(holm(ps))} |")
    return out


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(text)
    tmp.replace(path)


def _margin_text(r: dict) -> str:
    """'0.13 (SE 0.05, p 0.012)'; with one seed no SE, '(1 seed)'; a note after it."""
    if r.get("margin") in ("", None) or r["verdict"] == CENSORED:  # a censored tie has no margin to speak of
        return "-" + (f"; {r['note']}" if r.get("note") else "")
    se = parse(r["se"]) if r.get("se") not in ("", None, "nan") else float("nan")
    p_text = f", p {_fmt(parse(r['p']))}" if r.get("p") not in ("", None, "nan") else ""
    spread = f"SE {_fmt(se)}{p_text}" if se == se else f"{r.get('seeds') or 1} seed{'' if str(r.get('seeds')) in ('', '1') else 's'}"
    return f"{_fmt(parse(r['margin']))} ({spread})" + (f"; {r['note']}" if r.get("note") else "")


def belongs(where: str, named: str) -> bool:
    """Whether a claim's `where` is the table or figure a run set `named`: the same, or `named` with a qualifier
    ("Table 1 (mnist)" is "Table 1"'s, "Table I (ladder, T = 10)" is "Table I (ladder)"'s); "Table III" is not
    "Table I"'s, nor "Table 10" "Table 1"'s."""
    if where == named:
        return True
    if named.endswith(")"):  # a qualified name: more qualifiers may follow its own, after a comma
        return where.startswith(named[:-1] + ",")
    return where.startswith(named + " (")


def _claim_line(r: dict, scales: dict, coverage: dict) -> list[str]:
    """The cells of one claim's line: where, claim, verdict, margin, seeds x rounds and scale, its numbers."""
    show = lambda cell: "-" if cell in ("null", "", None) else _fmt(parse(cell))  # noqa: E731
    where = r["where"]
    cover = coverage.get(r["notebook"], {})
    hits = [w for w in cover.get("unshipped", ()) if belongs(where, w)]
    unshipped = bool(hits)
    flag = ", borderline" if str(r.get("borderline")) == "True" else ""
    judged = not str(r.get("note") or "").startswith("not judged")
    waiting = r["scale"] in ("paper", "reduced") and r["verdict"] == MISSING and unshipped and judged
    quick = scales.get("quick", {}).get("verdict", "-") if r["scale"] != "quick" else "this line"
    if r["scale"] not in ("paper", "reduced") and unshipped:  # a reduced row's verdict already says it
        quick += "; paper-profile runs not all shipped"
    matching = [w for w in cover.get("deviations", {}) if belongs(where, w)]  # the closest: the longest
    reduced = cover["deviations"][max(matching, key=len)] if matching and r["scale"] in ("paper", "reduced") else None
    seeds = r["seeds"] if str(r["seeds"]) not in ("", "0") else ""  # a comparison whose runs are missing has none
    runs = f"{seeds or '-'} x {r['rounds'] or '-'}, " if seeds or r["rounds"] else ""
    numbers = (f"<details><summary>numbers</summary>ours {show(r['ours'])}; compared with {show(r['reference'])}; "
               f"rule `{r['rule']}`; the paper's number {show(r['paper_value'])}; quick profile: {quick}</details>")
    verdict = f"**{r['verdict']}**{flag}"
    if not judged:  # `cannot_judge`: the reason instead of "missing data", which it is not
        verdict, r = f"**not judged at this scale** ({str(r['note']).removeprefix('not judged here: ')})", {**r, "note": ""}
    why = cover.get("why", {}).get(max(hits, key=len), "its runs are not all shipped") if unshipped else ""
    at = "this reduced scale" if r["scale"] == "reduced" else "the paper protocol"  # a ladder row never says "paper"
    if waiting:  # its runs are declared and not all in archive/: say how many are and what the rest costs
        verdict = f"**not run at {at}** ({why})"
    elif r["scale"] not in ("paper", "reduced") and unshipped:  # its largest scale is a smaller profile's
        verdict = f"**not run at the paper protocol** ({why}); the {r['scale']} profile: {verdict}"
    scale = r["scale"]  # a reduced row names what is reduced; a paper row what of the paper's protocol it reduces
    if reduced:
        scale = f"reduced: {reduced}" if scale == "reduced" else f"{scale} (paper protocol, reduced: {reduced})"
    return [where, r["claim"], verdict, _margin_text(r), f"{runs}{scale}", numbers]


def _paper_sections(rows: list[dict], coverage: dict) -> list[str]:
    """One section per paper, one line per claim at the largest scale it was tested at."""
    rank = {s: i for i, s in enumerate(SCALES)}
    by_claim: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        by_claim.setdefault((r["paper"], r["where"], r["claim"]), {})[r["scale"]] = r
    md = ["Each claim at the largest scale it was tested at; its numbers, its rule and the quick profile's verdict "
          "are folded under *numbers*.", ""]
    for paper in sorted({p for p, _, _ in by_claim}):
        md += [f"## {paper}", "", "| where | claim | verdict | margin | seeds x rounds, scale | numbers |",
               "|---|---|---|---|---|---|"]
        for (p, _, _), scales in by_claim.items():
            if p == paper:
                r = scales[max(scales, key=lambda s: rank.get(s, -1))]
                md.append("| " + " | ".join(_md_cell(c) for c in _claim_line(r, scales, coverage)) + " |")
        md.append("")
    return md


def _coverage_lines(rows: list[dict], coverage: dict) -> list[str]:
    gaps = [f"- {nb}, {line}" for nb, entry in sorted(coverage.items()) for line in entry["lines"]
            if any(r["notebook"] == nb for r in rows)]
    return ["", "Paper-profile runs not all shipped yet (counted from archive/; verdicts that need them are missing "
            "or made at a smaller scale):", ""] + gaps if gaps else []


def write_collected(rows: list[dict], out: Path | None = None, coverage: dict | None = None) -> list[Path]:
    """figures/claims.csv (every row) and figures/claims.md: the counts of verdicts by scale, what is not shipped,
    the rule and its words, then one section per paper with one line per claim, at the largest scale it was tested
    at (its numbers, rule and quick verdict folded in a details cell). Both written atomically.
    `coverage` (`fedlib.papers.coverage()`, passed by `python -m fedlib claims`): per notebook, which paper-profile
    runs are not shipped yet and what each table's runs change from the paper (shown beside a paper-scale row)."""
    import io

    out = out or figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    w = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    verdicts = sorted({r['verdict'] for r in rows})
    md = ["# Claims: our verdicts on the papers' claims", "",
          "Collected by `python -m fedlib claims` from every notebook's ledger (figures/claims/). Verdicts by scale:", "",
          "| scale | " + " | ".join(verdicts) + " | borderline | claims |", "|---|" + "---|" * (len(verdicts) + 2)]
    for scale in SCALES:
        at = [r for r in rows if r["scale"] == scale]
        if at:
            md.append(f"| {scale} | " + " | ".join(str(sum(r["verdict"] == v for r in at)) for v in verdicts)
                      + f" | {sum(str(r.get('borderline')) == 'True' for r in at)} | {len(at)} |")
    coverage = coverage or {}
    md += _coverage_lines(rows, coverage)
    md += _rule_lines() + _holm_lines(rows) + [""]
    md += _paper_sections(rows, coverage)
    _atomic_write(out / "claims.csv", buffer.getvalue())
    _atomic_write(out / "claims.md", "\n".join(md) + "\n")
    return [out / "claims.csv", out / "claims.md"]
