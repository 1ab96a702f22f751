"""The claims ledger: every notebook's verdicts on the papers' claims, as rows computed from numbers.

A notebook opens a `Ledger` with its name and profile, records each claim with our number, the number it is
compared with (the paper's, or another of ours) and the rule that decides (e.g. "ours >= reference - 1.5",
"ours < reference"), and saves. The verdict is computed here from the rule, never typed, and the rule stays in
the row, so anyone can recompute it (`verdict`). A notebook's rows go to figures/claims/<notebook>_<profile>.csv,
which only that notebook and profile rewrite (beside it, a .json names the kind of processor and the code that
ran the notebook); smoke rows go under build/smoke/ like all smoke output.
`python -m fedlib claims` collects every file into figures/claims.csv and figures/claims.md (run_all.sh does).
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import provenance
from .paths import figures_dir

HOLDS, FAILS, PARTLY, MISSING = "holds", "does not hold", "partly", "not run: missing data"
COLUMNS = ["paper", "where", "claim", "paper_value", "ours", "reference", "rule", "verdict", "notebook", "profile",
           "seeds", "rounds"]


def _holds(ours: float, reference: float, rule: str) -> bool:
    namespace = {"ours": ours, "reference": reference, "abs": abs, "min": min, "max": max}
    return bool(eval(compile(rule, "<rule>", "eval"), {"__builtins__": {}}, namespace))  # noqa: S307 (our rules)


def verdict(ours, reference, rule: str) -> str:
    """holds / does not hold / partly (lists: some elements hold) / not run: missing data (ours is None)."""
    if ours is None or (isinstance(ours, float) and math.isnan(ours)):
        return MISSING
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
    rule: str  # a Python expression in `ours` and `reference`
    verdict: str = ""
    notebook: str = ""
    profile: str = ""
    seeds: object = ""
    rounds: object = ""


@dataclass
class Ledger:
    notebook: str
    profile: str
    rows: list[Claim] = field(default_factory=list)

    def record(self, paper: str, where: str, claim: str, ours, reference, rule: str, paper_value=None,
               seeds="", rounds="") -> str:
        """Add one claim; returns its verdict (computed from the rule)."""
        row = Claim(paper, where, claim, paper_value, ours, reference, rule, verdict(ours, reference, rule),
                    self.notebook, self.profile, seeds, rounds)
        self.rows.append(row)
        print(f"[{row.verdict}] {paper}, {where}: {claim} (ours {_fmt(ours)}, {rule.replace('reference', _fmt(reference))})")
        return row.verdict

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


def read(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def parse(cell: str):
    try:
        return json.loads(cell)
    except json.JSONDecodeError:
        return cell


def collect(folder: Path | None = None) -> list[dict]:
    """Every notebook's rows (figures/claims/*.csv), for figures/claims.csv and .md."""
    folder = folder or figures_dir() / "claims"
    return [row for p in sorted(folder.glob("*.csv")) for row in read(p)]


def write_collected(rows: list[dict], out: Path | None = None) -> list[Path]:
    out = out or figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "claims.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    md = ["| paper | where | claim | paper's number | ours | rule | verdict | notebook | profile (seeds x rounds) |",
          "|" + "---|" * 9]
    show = lambda cell: "-" if cell in ("null", "") else _fmt(parse(cell))  # noqa: E731
    for r in rows:
        runs = f" ({r['seeds']} x {r['rounds']})" if r["seeds"] or r["rounds"] else ""
        md.append(f"| {r['paper']} | {r['where']} | {r['claim']} | {show(r['paper_value'])} | {show(r['ours'])} | "
                  f"`{r['rule'].replace('reference', show(r['reference']))}` | **{r['verdict']}** | {r['notebook']} | "
                  f"{r['profile']}{runs} |")
    (out / "claims.md").write_text("\n".join(md) + "\n")
    return [out / "claims.csv", out / "claims.md"]


def update_readme(table: str, readme: Path) -> bool:
    """Put the collected table (claims.md's text) in place of the README's copy: from its header line to the first
    blank line after it. Returns whether the README had the table (it is left alone otherwise)."""
    text = readme.read_text()
    header = table.splitlines()[0]
    start = text.find(header + "\n")
    if start < 0:
        return False
    end = text.find("\n\n", start)
    end = len(text) if end < 0 else end + 1
    readme.write_text(text[:start] + table + text[end:])
    return True
