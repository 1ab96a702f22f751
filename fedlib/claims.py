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
`ClaimsLedger.compare`, one number per seed on each side, and decided on the paired differences (rule "paired: ours >
reference"): it holds, or does not hold, only when the mean difference exceeds 2 standard errors over at least 3
seeds; otherwise it is "within noise", or "indicative (n seeds)" with fewer than 3. The margin and its standard
error stand in the row. Claims about one exact quantity keep their tolerance rules (`ClaimsLedger.record`). Every row
names its scale (the profile: smoke, quick or paper). A verdict is "borderline" when its margin lies within 10% of
its decision threshold (paired rows), or when moving every number by 0.5% (relative, `NUDGE`, beyond what another
processor's rounding does to accuracies) would change it; figures/claims.md counts them.
"""
from __future__ import annotations

import csv
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
PAIRED = "paired: "  # the prefix of a rule decided on paired differences over seeds
MIN_SEEDS = 3
NUDGE = 0.005  # 0.5% relative: beyond another processor's rounding of accuracies (0.16 points measured), so a
# verdict that moving its numbers this much flips is near its threshold
COLUMNS = ["paper", "where", "claim", "paper_value", "ours", "reference", "rule", "verdict", "notebook", "profile",
           "seeds", "rounds", "scale", "margin", "se", "borderline"]
SCALES = ("smoke", "quick", "paper")


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


def _paired_verdict(ours, reference, rule: str) -> str:
    mean, se, n = paired_stats(ours, reference, rule)
    if n < MIN_SEEDS:
        return f"indicative ({n} seed{'s' if n > 1 else ''})"
    return HOLDS if mean > 2 * se else FAILS if mean < -2 * se else WITHIN


# The rule kinds a claim may be decided by, as data: no rule text is ever evaluated (a claims CSV is a file anyone can
# edit, and the ledger reads every one). `parse_rule` reads a rule's text into one of these, or refuses it by name.
#   comparison   "ours OP reference", "ours OP reference + c" or "- c"   (OP one of < <= > >=)
#   tolerance    "abs(ours - reference) <= c"
#   paired       "paired: ours > reference" or "paired: ours < reference"  (over seeds, see `paired_stats`)
_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"
_COMPARISON = re.compile(rf"ours\s*(<=|>=|<|>)\s*reference(?:\s*([-+])\s*({_NUMBER}))?")
_TOLERANCE = re.compile(rf"abs\(\s*ours\s*-\s*reference\s*\)\s*<=\s*({_NUMBER})")
_PAIRED = re.compile(r"paired:\s*ours\s*(<|>)\s*reference")
RULE_KINDS = ("comparison", "tolerance", "paired")


@dataclass(frozen=True)
class Rule:
    kind: str  # one of RULE_KINDS
    op: str = ""  # comparison and paired: the operator between ours and the reference
    value: float = 0.0  # comparison: the reference's offset; tolerance: the largest |ours - reference|


def parse_rule(text: str) -> Rule:
    """The rule kind `text` states (see RULE_KINDS), or a ValueError that names what rules may be."""
    text = str(text).strip()
    if m := _PAIRED.fullmatch(text):
        return Rule("paired", m.group(1))
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


def _scaled(v, factor):
    if isinstance(v, (list, tuple)):
        return [_scaled(x, factor) for x in v]
    return v * factor if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def is_borderline(ours, reference, rule: str, verdict_now: str) -> bool:
    """Whether the verdict is near its threshold: a paired margin within 10% of 2 SE, or a verdict that moving
    the numbers by NUDGE (ours up and the reference down, or the reverse) would change."""
    if verdict_now == MISSING:
        return False
    if rule.startswith(PAIRED):
        mean, se, n = paired_stats(ours, reference, rule)
        if n >= MIN_SEEDS and abs(abs(mean) - 2 * se) <= 0.1 * 2 * se:
            return True
    for up in (1 + NUDGE, 1 - NUDGE):
        if verdict(_scaled(ours, up), _scaled(reference, 2 - up), rule) != verdict_now:
            return True
    return False

@dataclass
class ClaimsLedger:
    notebook: str
    profile: str
    rows: list[Claim] = field(default_factory=list)

    def record(self, paper: str, where: str, claim: str, ours, reference, rule: str, paper_value=None,
               seeds="", rounds="") -> str:
        """Add one claim; returns its verdict (computed from the rule). A comparison of methods or settings over
        seeds belongs in `compare`; a rule here that compares one seed's numbers is read as such."""
        found = verdict(ours, reference, rule)
        margin = se = ""
        if rule.startswith(PAIRED) and found != MISSING:
            margin, se, _ = paired_stats(ours, reference, rule)
        row = Claim(paper, where, claim, paper_value, ours, reference, rule, found, self.notebook, self.profile,
                    seeds, rounds, self.profile, margin, se, is_borderline(ours, reference, rule, found))
        self.rows.append(row)
        extra = f", margin {margin:.4g} +- {se:.2g} (SE)" if margin != "" else ""
        print(f"[{row.verdict}{', borderline' if row.borderline else ''}] {paper}, {where}: {claim} "
              f"(ours {_fmt(ours)}, {rule.replace('reference', _fmt(reference))}{extra})")
        return row.verdict

    def compare(self, paper: str, where: str, claim: str, ours: list, reference, direction: str = ">",
                paper_value=None, rounds="") -> str:
        """A claim that compares methods or settings: `ours` one number per seed, `reference` one per seed (paired)
        or one for all; `direction` ">" (ours above the reference) or "<". Decided on the paired differences."""
        if direction not in (">", "<"):
            raise ValueError(f"direction is '>' or '<', got {direction!r}")
        if ours is not None and not isinstance(ours, (list, tuple)):
            raise ValueError("compare takes one number per seed (a list)")
        return self.record(paper, where, claim, ours, reference, f"{PAIRED}ours {direction} reference", paper_value,
                           seeds=len(ours) if ours is not None else 0, rounds=rounds)

    def path(self) -> Path:
        return figures_dir() / "claims" / f"{self.notebook}_{self.profile}.csv"

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
            row["borderline"] = str(is_borderline(ours, reference, row["rule"], again))
            if row["rule"].startswith(PAIRED) and again != MISSING:
                row["margin"], row["se"] = (str(v) for v in paired_stats(ours, reference, row["rule"])[:2])
            rows.append(row)
    return rows


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(text)
    tmp.replace(path)


def write_collected(rows: list[dict], out: Path | None = None) -> list[Path]:
    """figures/claims.csv (every row) and figures/claims.md: the counts of verdicts by scale, then each claim at
    the largest scale it was tested at, with its quick verdict beside as an indication. Both written atomically."""
    import io

    out = out or figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO()
    w = csv.DictWriter(buffer, fieldnames=COLUMNS, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    show = lambda cell: "-" if cell in ("null", "", None) else _fmt(parse(cell))  # noqa: E731
    rank = {s: i for i, s in enumerate(SCALES)}
    by_claim: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        by_claim.setdefault((r["paper"], r["where"], r["claim"]), {})[r["scale"]] = r
    md = ["# Claims: our verdicts on the papers' claims", "",
          "Collected by `python -m fedlib claims` from every notebook's ledger (figures/claims/). Verdicts by scale:", "",
          "| scale | " + " | ".join(sorted({r['verdict'] for r in rows})) + " | borderline | claims |",
          "|---|" + "---|" * (len({r['verdict'] for r in rows}) + 2)]
    for scale in SCALES:
        at = [r for r in rows if r["scale"] == scale]
        if at:
            md.append(f"| {scale} | " + " | ".join(str(sum(r["verdict"] == v for r in at))
                                                    for v in sorted({r['verdict'] for r in rows}))
                      + f" | {sum(str(r.get('borderline')) == 'True' for r in at)} | {len(at)} |")
    from .papers import NOT_AT_PAPER_SCALE

    gaps = [f"- {nb}: not run at paper scale: {why}" for nb, why in NOT_AT_PAPER_SCALE.items()
            if any(r["notebook"] == nb for r in rows) and not any(r["notebook"] == nb and r["scale"] == "paper"
                                                                   for r in rows)]
    if gaps:
        md += ["", "Notebooks whose claims have no paper-scale verdict yet:", ""] + gaps
    md += ["", "Each claim at the largest scale it was tested at; the quick verdict beside it is an indication. A "
           "comparison over seeds holds or fails only beyond 2 standard errors of the paired difference over at "
           "least 3 seeds (margin +- SE).", "",
           "| paper | where | claim | paper's number | ours | rule | verdict | scale (seeds x rounds) | quick verdict |",
           "|" + "---|" * 9]
    for (paper, where, claim), scales in by_claim.items():
        r = scales[max(scales, key=lambda s: rank.get(s, -1))]
        runs = f" ({r['seeds']} x {r['rounds']})" if r["seeds"] or r["rounds"] else ""
        margin = f" ({_fmt(parse(r['margin']))} +- {_fmt(parse(r['se']))})" if r.get("margin") not in ("", None) else ""
        flag = ", borderline" if str(r.get("borderline")) == "True" else ""
        if r["scale"] == "paper" and r["verdict"] == MISSING and r["notebook"] in NOT_AT_PAPER_SCALE:
            flag += f"; not run at paper scale: {NOT_AT_PAPER_SCALE[r['notebook']]}"
        quick = scales.get("quick", {}).get("verdict", "-") if r["scale"] != "quick" else "(this)"
        if r["scale"] != "paper" and r["notebook"] in NOT_AT_PAPER_SCALE:
            quick += "; not run at paper scale"
        cells = [paper, where, claim, show(r['paper_value']), show(r['ours']),
                 f"`{r['rule'].replace('reference', show(r['reference']))}`", f"**{r['verdict']}**{margin}{flag}",
                 f"{r['scale']}{runs}", quick]
        md.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    _atomic_write(out / "claims.csv", buffer.getvalue())
    _atomic_write(out / "claims.md", "\n".join(md) + "\n")
    return [out / "claims.csv", out / "claims.md"]
