"""The claims ledger: a notebook's rows, each a checkable statement about a paper decided from numbers.

A notebook opens a `ClaimsLedger` with its name and profile and records each claim with our numbers, what they are
compared with (the paper's number, or another of ours), the rule that decides (`rules.Rule`), the row's kind and the
paper's own words it tests (`quote`), then saves. The verdict is computed from the rule, never typed, and the rule
stays in the row, so anyone can recompute it. A notebook's rows go to figures/claims/<notebook>_<scale>.csv, which
only that notebook rewrites (beside it, a .json names the kind of processor and the code that ran the notebook).

Kinds (KINDS): `claim` (a statement in the paper's text), `reproduction` (a number in one of its tables or figures),
`marker` (a significance marker in one of its tables; an unmarked entry is a `marker` row with the verdict
"observation"), `self-check` (our implementation against its authors' code) and `extension` (a measurement the paper
did not make). Only the first three are the paper's and count in the headline; each of them quotes the paper.
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import provenance
from ..safe_files import replace_text
from ..paths import figures_dir
from . import rules as R

KINDS = ("claim", "reproduction", "marker", "self-check", "extension")
PAPER_KINDS = ("claim", "reproduction", "marker")  # the paper's own: they quote it, and the headline counts them
SCALES = ("smoke", "quick", "reduced", "stand-in", "paper")  # stand-in: the paper's protocol with its data, model or
# size replaced (the row's run set says by what); reduced: the paper's protocol at a smaller scale the row names
COLUMNS = ["paper", "where", "claim", "kind", "quote", "paper_value", "ours", "reference", "rule", "verdict",
           "notebook", "profile", "seeds", "rounds", "scale", "part", "margin", "se", "p", "toward", "borderline",
           "says", "note"]
DERIVED = ("verdict", "margin", "se", "p", "toward", "borderline", "says")  # recomputed from the numbers and the rule


class ClaimsError(ValueError):
    """A claims file that cannot be collected: damaged, emptied, or with a verdict its own rule does not give."""


@dataclass
class Claim:
    paper: str  # e.g. "FedLog"
    where: str  # the figure or table, e.g. "Table 1 (mnist)"
    claim: str  # in words
    kind: str  # one of KINDS
    quote: str  # the paper's own words or number that the row tests ("" for self-checks and extensions)
    paper_value: object  # the paper's number (None where the paper gives none)
    ours: object  # our number(s): one per seed for the tests over seeds
    reference: object  # what ours is compared with: the paper's number, or another of ours
    rule: R.Rule
    verdict: str = ""
    notebook: str = ""
    profile: str = ""
    seeds: object = ""
    rounds: object = ""
    scale: str = ""  # one of SCALES
    part: str = ""  # the notebook part it reads or computes (`fedlib.papers.PARTS`: its name; a packed part's name is
    # its run set's, `fedlib.papers.RUN_SETS`)
    margin: object = ""
    se: object = ""
    p: object = ""
    toward: str = ""
    borderline: bool = False
    says: str = ""  # what the numbers say beyond the verdict (derived)
    note: str = ""  # the notebook's note (e.g. which rival a row is against)


PAPER_NAME = re.compile(r"[A-Z][A-Za-z0-9-]{0,31}")  # a paper's name as a row gives it: a word, no markup
KNOWN_PAPERS: set[str] = set()  # the papers the workbook reads: `fedlib.papers` registers them (`register_papers`)


def register_papers(*names: str) -> None:
    """Make `names` the papers a row may name (each a word: PAPER_NAME)."""
    for name in names:
        if not PAPER_NAME.fullmatch(name):
            raise ValueError(f"a paper's name is a word of letters, digits and '-', got {name!r}")
    KNOWN_PAPERS.update(names)


def _check_row(kind: str, quote: str, scale: str, where: str, paper: str | None = None) -> None:
    if paper is not None and (not PAPER_NAME.fullmatch(str(paper)) or KNOWN_PAPERS and paper not in KNOWN_PAPERS):
        raise ValueError(f"{where}: a row's paper is one of {', '.join(sorted(KNOWN_PAPERS)) or 'the known papers'} "
                         f"(a word), got {str(paper)[:60]!r}")
    if kind not in KINDS:
        raise ValueError(f"{where}: a claim's kind is one of {', '.join(KINDS)}, got {kind!r}")
    if kind in PAPER_KINDS and not str(quote).strip():
        raise ValueError(f"{where}: a {kind} row quotes its paper (the words or number it tests); a row without a "
                         f"quote is not a claim of the paper: make it a self-check or an extension")
    if scale not in SCALES:
        raise ValueError(f"{where}: a scale is one of {', '.join(SCALES)}, got {scale!r}")


@dataclass
class ClaimsLedger:
    notebook: str
    profile: str
    rows: list[Claim] = field(default_factory=list)
    scale: str = ""  # "reduced": the paper's protocol at a smaller scale, which each row's `where` names

    def record(self, paper: str, where: str, claim: str, ours, reference, rule: R.Rule, *, kind: str, quote: str = "",
               paper_value=None, seeds="", rounds="", part: str = "", stand_in: bool = False,
               note: str = "") -> str:
        """Add one row; returns its verdict (computed from the rule). `stand_in`: its runs replace the paper's data,
        model or size (their run set says by what), so at the paper profile its scale is "stand-in"."""
        if not isinstance(rule, R.Rule):
            raise TypeError(f"a rule is a rules.Rule (rules.paired, rules.equivalence, ...), got {rule!r}")
        scale = self.scale or self.profile
        if stand_in and scale == "paper":
            scale = "stand-in"
        _check_row(kind, quote, scale, f"{paper}, {where}", paper)
        d = R.decide(ours, reference, rule)
        profile = "any" if self.scale == "reduced" else self.profile  # a reduced scale's rows read shipped runs alike
        row = Claim(paper, where, claim, kind, quote, paper_value, ours, reference, rule, d.verdict, self.notebook,
                    profile, seeds, rounds, scale, part, d.margin, d.se, d.p, d.toward, d.borderline, d.note, note)
        self.rows.append(row)
        extra = f", margin {fmt(d.margin)}" if d.margin != "" else ""
        extra += f" +- {fmt(d.se)} (SE)" if d.se not in ("", None) and d.se == d.se else ""
        extra += f", p {d.p:.2g}" if d.p != "" else ""
        said = note if rule.kind == "unjudged" else f"ours {fmt(ours)} against {fmt(reference)}; {rule.words()}{extra}"
        print(f"[{d.verdict}{', borderline' if d.borderline else ''}] {paper}, {where}: {claim} ({said})")
        return d.verdict

    def compare(self, paper: str, where: str, claim: str, ours, reference, direction: str = ">", *, kind: str,
                quote: str = "", paper_value=None, rounds="", censored_at=None, part: str = "",
                stand_in: bool = False, note: str = "", claimed: float | None = None) -> str:
        """A claim that compares methods or settings: `ours` one number per seed, `reference` one per seed (paired)
        or one for all; decided by the paired t-test (`rules.paired`). `claimed`: the paper's own margin in the
        claim's direction, where it prints both sides' numbers (a comparison that is not significant and whose 95% CI
        excludes it is "not reproduced (a tie)")."""
        if direction not in (">", "<"):
            raise ValueError(f"direction is '>' or '<', got {direction!r}")
        if ours is not None and not isinstance(ours, (list, tuple)):
            raise ValueError("compare takes one number per seed (a list)")
        if reference is None:  # the other side's runs are missing: so is the comparison
            ours = None
        return self.record(paper, where, claim, ours, reference, R.paired(direction, censored_at or 0.0, claimed),
                           kind=kind,
                           quote=quote, paper_value=paper_value, seeds=len(ours) if ours is not None else 0,
                           rounds=rounds, part=part, stand_in=stand_in, note=note)

    def reproduced(self, paper: str, where: str, what: str, values: list, reported: float,
                   reported_se: float | None, *, quote: str, rounds="", part: str = "", stand_in: bool = False,
                   delta: float = R.DELTA, note: str = "") -> str:
        """A number of the paper's table reproduced: our seeds' `values` against the paper's mean `reported` and the
        standard error of that mean `reported_se` (None where the paper gives no spread), by the equivalence test
        (`rules.equivalence`, margin `delta` points)."""
        return self.record(paper, where, f"{what} is reproduced", list(values),
                           [reported, reported_se], R.equivalence(delta), kind="reproduction", quote=quote,
                           paper_value=reported, seeds=len(values), rounds=rounds, part=part,
                           stand_in=stand_in, note=note)

    def cannot_judge(self, paper: str, where: str, claim: str, why: str, *, kind: str, quote: str = "",
                     part: str = "", stand_in: bool = False) -> str:
        """A claim these runs cannot judge, with the reason (verdict: not judged at this scale, its rule `unjudged`)."""
        return self.record(paper, where, claim, None, None, R.unjudged(), kind=kind, quote=quote, part=part,
                           stand_in=stand_in, note=f"{R.NOT_JUDGED}: {why}")

    def add_note(self, text: str, last: int = 1) -> None:
        """Append `text` (if any) to the note of each of the `last` rows recorded."""
        for row in self.rows[len(self.rows) - last:] if text else []:
            row.note = "; ".join(n for n in (row.note, text) if n)

    def made_on(self) -> str:
        """What the ledger's stamp says made its numbers: this kind of processor, or, in the paper profile (which
        redraws the runs shipped in archive/, made wherever they were), archive/ itself, so that a paper redraw
        writes the same bytes on any machine. No code fingerprint: it moved with every edit and left a rerun's
        checkout unclean (the runs' own fingerprints are in figures/provenance.json)."""
        return ARCHIVE if self.profile == "paper" or self.scale == "reduced" else provenance.machine()

    def path(self) -> Path:
        return figures_dir() / "claims" / f"{self.notebook}_{self.scale or self.profile}.csv"

    def save(self, keep_other_where: bool = False) -> Path:
        """Replace this notebook's rows for this profile (and only those). keep_other_where: the saved rows whose
        figure or table (`where`) this ledger has no row for stay, ahead of the new ones."""
        out = self.path()
        out.parent.mkdir(parents=True, exist_ok=True)
        new = [row_cells(row) for row in self.rows]
        if keep_other_where and out.exists():
            mine = {row.where for row in self.rows}
            new = [{k: v for k, v in row.items() if k in COLUMNS} for row in read(out) if row["where"] not in mine] + new
        replace_text(out, csv_text(new))
        replace_text(out.with_suffix(".json"), json.dumps({"machine": self.made_on()}, indent=1) + "\n")
        return out


def fmt(v) -> str:
    if v is None:  # no number (its runs are not there, or the row compares with none): "-", never "None"
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def _cell(v) -> str:
    if isinstance(v, R.Rule):
        return v.cell()
    return json.dumps(v) if isinstance(v, (list, tuple, dict)) or v is None else str(v)


def row_cells(row: Claim) -> dict:
    return {k: _cell(v) for k, v in asdict(row).items() if k != "rule"} | {"rule": row.rule.cell()}


def csv_text(rows: list[dict], columns: list[str] = COLUMNS) -> str:
    buffer = io.StringIO()
    w = csv.DictWriter(buffer, fieldnames=columns, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return buffer.getvalue()


ARCHIVE = "archive/ (the paper profile redraws shipped runs)"


def made_on(path: Path) -> str | None:
    """The kind of processor that made a ledger file's numbers (`provenance.machine`; None if unrecorded)."""
    stamp = path.with_suffix(".json")
    return json.loads(stamp.read_text()).get("machine") if stamp.exists() else None


def read(path: Path, lines: bool = False) -> list[dict]:
    """A claims file's rows; with `lines`, each carries "_line", the file line its row ends on. A file written before
    2026-11-29 names its row's part in a column called `run_set` (then only the packed parts, whose names are their
    run sets'): read as `part`."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return [_renamed({**row, "_line": reader.line_num} if lines else row) for row in reader]


def _renamed(row: dict) -> dict:
    if "run_set" in row and "part" not in row:
        row = {("part" if k == "run_set" else k): v for k, v in row.items()}
    return row


def parse(cell: str):
    try:
        return json.loads(cell)
    except (json.JSONDecodeError, TypeError):
        return cell


def _derived(row: dict, where: str) -> dict:
    """The columns a row's numbers and rule determine (DERIVED), recomputed; ClaimsError naming `where` if its rule
    cannot be read or evaluated."""
    try:
        rule = R.Rule.from_cell(row["rule"])
    except ValueError as err:
        raise ClaimsError(f"{where}: refused: {err}; rerun its notebook") from None
    try:
        d = R.decide(parse(row["ours"]), parse(row["reference"]), rule)
    except Exception as err:  # noqa: BLE001  (a row a hand edit broke)
        raise ClaimsError(f"{where}: its rule cannot be evaluated ({err}); rerun its notebook") from None
    return {"verdict": d.verdict, "margin": _cell(d.margin), "se": _cell(d.se), "p": _cell(d.p),
            "toward": d.toward, "borderline": str(d.borderline), "says": d.note}


def _read_checked(p: Path) -> list[dict]:
    """A claims file's rows, each with its derived columns recomputed; ClaimsError naming the file and row for a file
    that cannot be read, holds no row, lacks a column, or stores a verdict its rule does not give."""
    try:
        found = read(p, lines=True)
    except (UnicodeDecodeError, csv.Error) as err:
        raise ClaimsError(f"{p}: not a readable claims file ({type(err).__name__}); rerun its notebook") from None
    if not found:
        raise ClaimsError(f"{p}: holds no claim (header only or empty); rerun its notebook to rewrite it")
    out = []
    for row in found:
        i = row.pop("_line")
        where = f"{p}, line {i}"
        if None in row:
            raise ClaimsError(f"{where}: the row has {len(row[None])} value(s) more than the header's columns (the "
                              f"file is damaged); rerun its notebook")
        lacking = [k for k in COLUMNS if row.get(k) is None]
        if lacking:
            raise ClaimsError(f"{where}: the row lacks {', '.join(lacking)} (the file is damaged or written by older "
                              f"code); rerun its notebook")
        try:
            _check_row(row["kind"], row["quote"], row["scale"], where, row["paper"])
            _check_numbers(row, where)
        except ValueError as err:
            raise ClaimsError(f"{err}; rerun its notebook") from None
        new = _derived(row, where)
        if new["verdict"] != row["verdict"]:
            raise ClaimsError(f"{where}: the stored verdict {row['verdict']!r} is not what its rule gives "
                              f"({new['verdict']!r}) for ours={row['ours']} and reference={row['reference']}; rerun "
                              f"its notebook rather than editing the file")
        out.append({**row, **new})
    return out


def _check_numbers(row: dict, where: str) -> None:
    """A row's seeds are a count and its rounds a count with an optional note in parentheses ("250 (fashion_mnist)"),
    or empty: ValueError naming the row otherwise."""
    for col, form in (("seeds", r"\d{1,7}"), ("rounds", r"\d{1,7}( \([^()]{1,80}\))?")):
        cell = str(row.get(col) or "").strip()
        if cell and not re.fullmatch(form, cell):
            raise ValueError(f"{where}: its {col} is a count, got {cell[:40]!r}")


def collect(folder: Path | None = None, fill_from: Path | None = None) -> list[dict]:
    """Every notebook's rows (figures/claims/*.csv), each verdict recomputed from its numbers and rule. A file that
    cannot be read, holds no row, or has a row whose stored verdict its rule does not give is refused (ClaimsError,
    naming the file and row) before anything is written. `fill_from` (a quick run's: the committed ledgers) gives
    the files of the notebooks and profiles that `folder` has none of."""
    folder = folder or figures_dir() / "claims"
    own = {p.name: p for p in folder.glob("*.csv")}
    if fill_from is not None and fill_from.resolve() != folder.resolve():
        own = {**{p.name: p for p in fill_from.glob("*.csv")}, **own}
    files = [own[name] for name in sorted(own)]
    if not files:
        raise ClaimsError(f"{folder} holds no claims file (a notebook's ledger is <notebook>_<profile>.csv): run the "
                          f"notebooks first (./run_all.sh), or restore the folder with `git checkout -- {folder.name}`")
    return [row for p in files for row in _read_checked(p)]


def rejudge(folder: Path | None = None) -> int:
    """Rewrite every notebook's ledger under the current rules from the numbers it stores (its derived columns only:
    never its numbers, notes or quotes), after a change of a rule. Every file is read and checked before any is
    written; returns the rows whose verdict changed."""
    folder = folder or figures_dir() / "claims"
    plans, changed = [], 0
    for p in sorted(folder.glob("*.csv")):
        try:
            rows = read(p, lines=True)
        except (UnicodeDecodeError, csv.Error) as err:
            raise ClaimsError(f"{p}: not a readable claims file ({type(err).__name__}); nothing was rewritten") from None
        new_rows = []
        for row in rows:
            i = row.pop("_line")
            if None in row or any(row.get(k) is None for k in COLUMNS):
                raise ClaimsError(f"{p}, line {i}: damaged or written by older code (rerun its notebook); nothing "
                                  f"was rewritten")
            new = _derived(row, f"{p}, line {i}")
            changed += new["verdict"] != row["verdict"]
            new_rows.append({**row, **new})
        plans.append((p, csv_text(new_rows)))
    for p, text in plans:
        replace_text(p, text)
    return changed


def devices_note(sides: dict[str, list]) -> str:
    """"" when every run of the sides (name -> its results) was made on one device type; otherwise which side's runs
    ran where, since a pair then compares arithmetic that rounds differently."""
    where = {name: sorted({r.get("device", "cpu") for r in rs or []}) for name, rs in sides.items()}
    if len({d for ds in where.values() for d in ds}) <= 1:
        return ""
    return "runs on different devices: " + ", ".join(f"{name} on {' and '.join(ds)}" for name, ds in where.items())


def normalized(text: str) -> str:
    """Text as a quote is looked up in its paper (`fedlib.papers.quotes`): lower case, every run of whitespace one
    space."""
    return " ".join(str(text).lower().split())
