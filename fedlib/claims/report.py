"""figures/claims.md and figures/claims.csv: the collected rows, counted per paper and scale, one compact table per
paper and scale, and Holm's correction over every decided row of a paper at a scale."""
from __future__ import annotations

import os
import re
from pathlib import Path

from .. import markup
from ..paths import figures_dir
from . import rules as R
from ..safe_files import replace_text
from .ledger import COLUMNS, PAPER_KINDS, SCALES, csv_text, fmt, parse

SHOWN_SCALES = ("paper", "stand-in", "reduced", "quick")  # the headline's columns (smoke rows are not collected here)
SCALE_TEXT = {"paper": "the paper's own data, model and size",
              "stand-in": "its data, model or size replaced (each run set says by what)",
              "reduced": "its protocol at a smaller scale (each row names its rung)",
              "quick": "the quick profile: fewer seeds and rounds (indicative)"}


def holm(pvalues: list[float], alpha: float = R.LEVEL) -> list[bool]:
    """Holm's step-down correction: which of the hypotheses (one-sided p-values) are rejected at family level
    `alpha` (in the order given)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    rejected = [False] * len(pvalues)
    for step, i in enumerate(order):
        if pvalues[i] > alpha / (len(pvalues) - step):
            break
        rejected[i] = True
    return rejected


def _decided(r: dict) -> bool:
    """A row a Holm family holds: a statement of the paper's text (kind "claim") with a p that decided it. Markers
    are read as the paper read them, each at its caption's level with no correction (with 10 seeds the exact
    Wilcoxon test's smallest p, 1/1024, is above Holm's first threshold in any family of more than 25 markers, so a
    correction would reject none by construction); a reproduction is an equivalence test of one number, never part
    of a claim's family."""
    return r["kind"] == "claim" and r.get("p") not in ("", None, "nan") and R.outcome(r["verdict"]) in (
        "hold", "differ", "not resolved")


def family(r: dict) -> str:
    """The Holm family a decided row belongs to: its paper, scale, and table or figure (its `where` up to the first
    parenthesis: "Table 1 (mnist)" -> "Table 1")."""
    return f"{r['paper']}, {r['scale']}, {str(r['where']).split(' (')[0]}"


def with_holm(rows: list[dict]) -> list[dict]:
    """Each row with "holm": "survives" / "does not survive" (a decided statement of the paper's text, `_decided`,
    its family the paper's table or figure at its scale, `family`, at family-wise LEVEL in the claim's direction) or
    "", and "holm_family": its family and size ("FedCR, paper, Table 2: 2 tests")."""
    out = [dict(r, holm="", holm_family="") for r in rows]
    families: dict[str, list[int]] = {}
    for i, r in enumerate(out):
        if _decided(r):
            families.setdefault(family(r), []).append(i)
    for name, members in families.items():
        kept = holm([float(parse(out[i]["p"])) for i in members])
        for i, k in zip(members, kept):
            out[i]["holm"] = "survives" if k else "does not survive"
            out[i]["holm_family"] = f"{name}: {len(members)} test{'s' if len(members) > 1 else ''}"
    return out


def _md(text) -> str:
    """A Markdown cell or line from data: text, never markup (`markup.text`: HTML escaped, every character that opens
    MyST inline markup escaped, newlines as spaces); a quote's TeX is shown as the paper prints it, not set as math."""
    return markup.text(text)


def _sig(x, se=None) -> str:
    """A number to 2 significant digits of its SE (or 3 significant digits without one)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if se not in (None, "", "nan"):
        try:
            s = float(se)
        except (TypeError, ValueError):
            s = 0.0
        if s > 0 and s == s:
            import math

            digits = max(0, 1 - int(math.floor(math.log10(s))))
            return f"{v:+.{digits}f}"
    return f"{v:+.3g}"


def _margin(r: dict) -> str:
    if r.get("margin") in ("", None) and r["verdict"] == R.REPORTED:  # a statement: our number itself
        v = parse(r["ours"]) if isinstance(r.get("ours"), str) else r.get("ours")
        if isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
            import statistics

            se = statistics.stdev(v) / len(v) ** 0.5 if len(v) > 1 else None
            return f"ours {_sig(statistics.fmean(v), se)}" + (f" ± {_sig(se, se).lstrip('+')}" if se else "")
        return f"ours {_sig(v)}" if isinstance(v, (int, float)) else "-"
    if r.get("margin") in ("", None):
        return "-"
    ref = parse(r.get("reference")) if isinstance(r.get("reference"), str) else r.get("reference")
    if '"kind":"equivalence"' in str(r.get("rule")) and isinstance(ref, list) and ref and ref[0] is not None:
        se = r.get("se")  # a reproduction: ours and the paper's number beside the difference
        paper = float(ref[0])
        d = f"{_sig(r['margin'], se)}" + (f" ± {_sig(se, se).lstrip('+')}" if se not in ("", None, "nan") else "")
        return f"{paper + float(r['margin']):.2f} vs {paper:.2f}: {d}"
    bound = _bound(r)
    if bound is not None:  # ours against a fixed bound (a tolerance): our mean itself, and the bound
        rule = R.Rule.from_cell(r["rule"])
        ours = bound + float(r["margin"]) if rule.op == ">" else bound - float(r["margin"])
        se = r.get("se")
        spread = f" ± {_sig(se, se).lstrip('+')}" if se not in ("", None, "nan") else ""
        return f"ours {_sig(ours, se)}{spread} (bound {bound:+g})"
    se = r.get("se")
    if se not in ("", None, "nan"):
        return f"{_sig(r['margin'], se)} ± {_sig(se, se).lstrip('+')}"
    return _sig(r["margin"])


def _bound(r: dict) -> float | None:
    """The fixed bound a paired row's per-seed numbers are tested against (a tolerance such as -1 point), or None
    where the reference is one number per seed."""
    try:
        rule = R.Rule.from_cell(r["rule"])
    except (ValueError, KeyError, TypeError):
        return None
    ref = parse(r.get("reference")) if isinstance(r.get("reference"), str) else r.get("reference")
    if rule.kind != "paired" or isinstance(ref, bool) or not isinstance(ref, (int, float)):
        return None
    return float(ref)


def _p(r: dict) -> str:
    """The p, and for a row in a Holm family its size: "0.0077 (H, 2)" survives in a family of 2 tests, "0.04 (2)"
    does not."""
    if r.get("p") in ("", None, "nan"):
        return "-"
    p = float(parse(r["p"]))
    size = str(r.get("holm_family") or "").rsplit(": ", 1)[-1].split(" ")[0]
    mark = {"survives": f" (H, {size})", "does not survive": f" ({size})"}.get(r.get("holm", ""), "")
    return f"{p:.2g}{mark}"


def _toward(r: dict) -> str:
    """The seeds in the claim's direction and the smallest per-seed margin, as the table's column reads them ("9/10
    seeds, smallest +0.17" in claims.csv: "9/10, +0.17")."""
    return re.sub(r"^(\d+/\d+) seeds, smallest ", r"\1, ", str(r.get("toward") or "")) or "-"


def _not_judged(r: dict) -> bool:
    """A row its runs cannot judge (rule `unjudged`): its note says why, below the table."""
    return r["verdict"] == R.NOT_JUDGED


def _verdict(r: dict, sets: dict) -> str:
    """The verdict as shown: a paper-scale row whose runs are not all shipped says how many are."""
    v = r["verdict"]
    if _not_judged(r):
        return f"{R.NOT_JUDGED} (why: below)"
    s = sets.get(r.get("part") or "")
    if v == R.MISSING and s and r["scale"] in ("paper", "stand-in", "reduced") and s["have"] < s["n"]:
        return f"not run yet ({s['have']} of {s['n']} runs shipped)"
    return v + (" (borderline)" if str(r.get("borderline")) == "True" else "")


SHORT_CLAIM = 88  # the table shows a claim's words up to this length (claims.csv holds them whole)


def _cut(words: str, n: int) -> str:
    return words if len(words) <= n else words[:n].rsplit(" ", 1)[0] + " …"


def _short_claim(r: dict) -> str:
    """The claim's words up to SHORT_CLAIM; where two rows of a table would read alike cut, the start and the words
    from the first that differs (`_unique_short` puts where they begin in "_from")."""
    words = str(r["claim"])
    if len(words) <= SHORT_CLAIM:
        return words
    start = r.get("_from")
    if not start:
        return _cut(words, SHORT_CLAIM)
    return _cut(words[:start], SHORT_CLAIM // 2).removesuffix(" …") + " … " + _cut(words[start:], SHORT_CLAIM // 2)


def _unique_short(rows: list[dict]) -> list[dict]:
    """Rows whose cut claim would read like another row's of the same table show, after their start, the words from
    the first one in which they differ."""
    groups: dict[tuple, list[str]] = {}
    for r in rows:
        groups.setdefault((r["paper"], r["scale"], r["where"], _short_claim(r)), []).append(str(r["claim"]))
    out = []
    for r in rows:
        alike = groups[(r["paper"], r["scale"], r["where"], _short_claim(r))]
        if len(alike) < 2:
            out.append(r)
            continue
        same = len(os.path.commonprefix(alike))
        out.append(dict(r, _from=str(r["claim"]).rfind(" ", 0, same) + 1))
    return out


NOTE_SHOWN = 200  # a longer note is cut on the page (claims.csv holds it whole)
SHORT_NOTE = 60  # a note this short stands in the verdict cell (the ablation's verdict, the rival); longer ones below


REGIME_LINE = "Which regime decides:"  # a note part said once under its section's heading (FedLog's Table 1)
REGIME_SAYS = ("depends on augmentation", "without augmentation:", "with crop-and-flip:",
               "not reproduced in either regime")  # how a row names the other regime's verdict


def _regime(note: str) -> str:
    """The part of a note that names the ablation's verdict (FedLog's two regimes, `fedlog.claims._cross_notes`)."""
    return next((part for part in note.split("; ") if part.startswith(REGIME_SAYS)), "")


VERDICT_TABLE = "verdicts"  # the class of a table of rows (book/_static/tables.css gives its columns their widths)
OTHER_REGIME = "the other regime"  # the column that says a row's verdict in the regime that does not decide it


def _other_regime(r: dict) -> str:
    """The verdict in the regime that does not decide the row, from the note's regime part (`_regime`), as its own
    column ("with crop-and-flip: agrees"); "" where the note names none. Where both regimes fail ("not reproduced in
    either regime: with crop-and-flip ... (V1), without augmentation ... (V2)"), the reading whose margin is not the
    row's own."""
    part = "" if _not_judged(r) else _regime(str(r.get("note") or ""))
    both = re.fullmatch(r"depends on augmentation: with it (.*), without it (.*)", part)
    if both:
        return f"without augmentation: {both.group(2)}" if both.group(1) == r["verdict"] else \
            f"with crop-and-flip: {both.group(1)}"
    either = re.fullmatch(r"not reproduced in either regime: (with crop-and-flip .*), (without augmentation .*)", part)
    if either:
        own = parse(str(r.get("margin") or ""))
        other = [x for x in either.groups() if not isinstance(own, float)
                 or abs(float(re.search(r"[+-]?\d+\.\d+", x).group()) - own) > 5e-4]
        return other[0] if len(other) == 1 else part
    return part


def _verdict_cell(r: dict, sets: dict) -> str:
    """The verdict, and beside it a short note that is not the other regime's verdict (that has its own column,
    `_other_regime`); a row both regimes fail says so ("not reproduced in either regime")."""
    note = str(r.get("note") or "")
    if _not_judged(r):
        return _verdict(r, sets)
    regime = _regime(note)
    rest = "; ".join(part for part in note.split("; ") if part != regime)
    short = rest if len(note) <= SHORT_NOTE else ""
    for says in ("not reproduced in either regime", "depends on augmentation"):
        short = says if regime.startswith(says) else short
    return _verdict(r, sets) + (f"; {short}" if short else "")


def _long_note(r: dict) -> str:
    """The note as said on the paper's notes page: a long one, less the regime part where the other-regime column
    shows it whole."""
    note = str(r.get("note") or "")
    if len(note) <= SHORT_NOTE and not _not_judged(r):
        return ""
    regime = "" if _not_judged(r) else _regime(note)
    return "; ".join(part for part in note.split("; ") if part != regime) if regime else note


def _both_readings(r: dict) -> str:
    """A row both regimes fail: its cells name one reading, so the notes page says both, as a note of its own."""
    regime = "" if _not_judged(r) else _regime(str(r.get("note") or ""))
    return regime if regime.startswith("not reproduced in either regime") else ""


def _seeds_rounds(r: dict) -> str:
    seeds = r["seeds"] if str(r["seeds"]) not in ("", "0") else "-"
    return f"{seeds} x {r['rounds'] or '-'}"


FULL_WIDTH = "html_theme.sidebar_secondary.remove: true"  # the page's front matter: no right-hand contents column, so
# its tables take the window's width less the navigation (book/_static/tables.css)


def _headline(rows: list[dict]) -> list[str]:
    out = ["| paper | scale | tested | hold | differ | not resolved | not judged | reported | survive Holm |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for paper in sorted({r["paper"] for r in rows}):
        for scale in SHOWN_SCALES:
            at = [r for r in rows if r["paper"] == paper and r["scale"] == scale and r["kind"] in PAPER_KINDS]
            if not at:
                continue
            count = {name: sum(R.outcome(r["verdict"]) == name for r in at) for name in R.OUTCOMES}
            decided = [r for r in at if r.get("holm")]  # the text's claims (markers, reproductions: no Holm)
            out.append(f"| {_md(paper)} | {_md(scale)} | {len(at)} | {count['hold']} | {count['differ']} | "
                       f"{count['not resolved']} | {count['not judged']} | {count['reported']} | "
                       f"{sum(r['holm'] == 'survives' for r in decided)} of {len(decided)} |")
    return out


def _own_checks(rows: list[dict]) -> list[str]:
    """Our self-checks and extensions, one line per paper, kind, scale and table (their rows are in claims.csv)."""
    mine = [r for r in rows if r["kind"] not in PAPER_KINDS]
    if not mine:
        return []
    groups: dict[tuple, list[dict]] = {}
    for r in mine:
        groups.setdefault((r["kind"], r["paper"], r["scale"], r["where"]), []).append(r)
    out = ["", "## Our own checks and extensions (not the papers' claims; not in the counts above)", "",
           "Each line is one table's rows (claims.csv holds them, with their numbers); the rows of the ablation without "
           "augmentation are also named in the note of their stated-protocol row.", "",
           "| kind | paper | scale | where | rows | verdicts |", "|---|---|---|---|---|---|"]
    for (kind, paper, scale, where), rs in groups.items():
        counts = {}
        for r in rs:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        said = ", ".join(f"{n} {v}" for v, n in counts.items())
        what = _short_claim(rs[0]) if len(rs) == 1 else f"{len(rs)} rows"
        out.append("| " + " | ".join(_md(c) for c in (kind, paper, scale, where, what, said)) + " |")
    return out


def _rule_lines() -> list[str]:
    return ["", "## How a row is decided", "", ":::{dropdown} The tests, their levels and the words they give "
                                                  "(holds, reproduced, agrees ...) and Holm's families", "",
            f"- **Comparisons** (\"A is more accurate than B\"): a paired t-test of the per-seed differences, one-sided "
            f"at {R.LEVEL:g} each way, over at least {R.MIN_SEEDS} seeds: **holds**, **does not hold** or **within "
            f"noise**; with fewer seeds **indicative**. *seeds toward, smallest*: the seeds in the claim's direction, "
            f"and the smallest per-seed margin.",
            f"- **Reproductions** of a number: an equivalence test (two one-sided tests at {R.LEVEL:g}), margin "
            f"{R.DELTA:g} accuracy points, SE = sqrt(ours² + the paper's²): **reproduced** when |d| + t·SE ≤ "
            f"{R.DELTA:g}; **differs from the paper** when |d| − t·SE > {R.DELTA:g}; **cannot be decided at this "
            f"precision** when t·SE ≥ {R.DELTA:g}; otherwise **not resolved**; with fewer than {R.MIN_SEEDS} seeds "
            f"**indicative**. Its p is the larger one-sided p.",
            "- **Significance markers**: the exact one-tailed Wilcoxon signed-rank test at the level the table's "
            "caption states: **agrees**, **not significant** or **opposite**; **cannot be decided (ties)** where the "
            "untied seeds cannot reach the level. An entry the table leaves unmarked is an **observation**: its p, no "
            "verdict.",
            "- A statement with no number is **reported (no verdict)**: no tolerance is invented.",
            "- **Words for a comparison that is not significant**: **not reproduced (a tie)** when its 95% CI "
            "excludes the paper's own margin (where the paper prints both sides' numbers; counted with \"differ\"); "
            "**within noise** when the CI holds both 0 and that margin, or the paper gives none.",
            f"- **Holm**: over the statements of the text, one family per paper, scale and table or figure, at a "
            f"family-wise {R.LEVEL:g}; (H, k) marks a row that survives in a family of k tests, (k) one that does not. "
            f"Markers are read at their caption's level with no correction, as the paper did (with 10 seeds the exact "
            f"test's smallest p is 1/1024, above Holm's first threshold in a family of more than 25 markers); a "
            f"reproduction is one number's equivalence test, in no family. **borderline**: p within a factor "
            f"{R.BAND:g} of its level.",
            "- Each section's scale is named in its heading; each row quotes its paper under *what the paper says*.",
            ":::"]


def _rows_table(title: str, rows: list[dict], sets: dict) -> list[str]:
    """A table of judged rows (its title above it where given); the other regime's column where a row names one."""
    if not rows:
        return []
    others = [_other_regime(r) for r in rows]
    other = any(others)
    named = {x.split(":")[0].split(" +")[0].split(" -")[0] for x in others if x}  # the regime each cell names
    header = OTHER_REGIME
    if len(named) == 1 and (header := named.pop()) in ("with crop-and-flip", "without augmentation"):
        others = [x[len(header):].lstrip(": ") for x in others]  # said once, in the column's header
    else:
        header = OTHER_REGIME
    scale = {_seeds_rounds(r) for r in rows}
    each = len(scale) > 1  # one seeds x rounds for the whole table: said once, above it
    head = ["where", "claim", "verdict"] + [header] * other + ["margin ± SE", "p", "seeds toward, smallest"] + [
        "seeds x rounds"] * each
    said = "" if each else f"{'; ' * bool(title)}every row {scale.pop()} (seeds x rounds)"
    md = ["", f"{title}{said}"] * bool(title or said) + ["", ":::{table}", f":class: {VERDICT_TABLE}{' with-other' * other}", "",
          "| " + " | ".join(head) + " |", "|---|---|---|" + "---|" * other + "---:|---:|---:|" + "---:|" * each]
    for i, r in enumerate(rows):  # a table's name once, on the first of its rows in a run; numbers right-aligned,
        where = "" if i and rows[i - 1]["where"] == r["where"] else r["where"]  # which the book's CSS never breaks
        cells = [where, _short_claim(r), _verdict_cell(r, sets)] + [others[i] or "-"] * other + [
            _margin(r), _p(r), _toward(r)] + [_seeds_rounds(r)] * each
        md.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return md + [":::"]


def _kind_tables(at: list[dict], sets: dict) -> list[str]:
    """One scale's rows by kind: the decided ones (they hold, or they differ) in a table each; behind one click
    (a dropdown that counts them), the judged rows not decided, in tables of the same form, and those with no numbers
    yet, one line per table and verdict."""
    shown, folded, counts = [], [], []
    for kind, title in (("claim", "Statements of the text"), ("reproduction", "Numbers of its tables"),
                        ("marker", "Significance markers of its tables")):
        of = [r for r in at if r["kind"] == kind]
        judged = [r for r in of if R.outcome(r["verdict"]) != "not judged" or r["verdict"] != R.MISSING
                  and (r.get("seeds") not in ("", "0", None) or r.get("margin") not in ("", None))]
        waiting = [r for r in of if r not in judged]  # not run yet (one side's numbers at most): a line, no row
        decided = [r for r in judged if R.outcome(r["verdict"]) in ("hold", "differ")]
        shown += _rows_table(f"*{title}*", decided, sets)
        rest = [r for r in judged if r not in decided]
        what = title.split(" of ")[0].lower()  # "statements", "numbers", "significance markers"
        if rest:
            counts.append(f"{len(rest)} {what if len(rest) > 1 else what[:-1]} not decided")
            folded += _rows_table(f"*{title}, not decided* ({_md(', '.join(dict.fromkeys(_verdict(r, sets) for r in rest)))})",
                                  rest, sets)
        if waiting:  # one line per table, verdict and short note (the ablation's verdict): its claims
            counts.append(f"{len(waiting)} {what if len(waiting) > 1 else what[:-1]} not judged yet")
            grouped: dict[tuple, list[str]] = {}
            for r in waiting:
                short = "; ".join(x for x in (_verdict_cell(r, sets)[len(_verdict(r, sets)):].lstrip("; "),
                                              _other_regime(r)) if x)
                grouped.setdefault((r["where"], _verdict(r, sets), short), []).append(_short_claim(r))
            folded += ["", f"*{title}, not judged yet*", ""] + [
                f"- {_md(w)}, **{_md(v)}**" + (f" ({_md(n)})" if n else "") + ": " + "; ".join(_md(c) for c in cs)
                for (w, v, n), cs in grouped.items()]
    if folded:
        shown += ["", f"::::{{dropdown}} Not decided at this scale: {'; '.join(counts)}"] + folded + ["::::"]
    return shown


_TEX = [(r"\\pm", "±"), (r"\\Downarrow", "⇓"), (r"\\downarrow", "↓"), (r"\\Uparrow", "⇑"), (r"\\uparrow", "↑"),
        (r"\\pitchfork", "⋔"), (r"\\(?:text|mathrm)", ""), (r"</?sup>", ""), (r"[${}^]|\\,", "")]


def _plain(cell: str) -> str:
    """A table's cell as the paper's text gives it (TeX or HTML: "$98.18 \\pm 0.06^{\\Downarrow}$"), as a reader reads
    it ("98.18 ± 0.06⇓"); claims.csv keeps the cell as given (its quote is found in the paper's text)."""
    for pattern, to in _TEX:
        cell = re.sub(pattern, to, cell)
    return " ".join(cell.split())


def _details(at: list[dict], sets: dict) -> list[str]:
    """One scale's quotes (the text's words once each, the tables' cells per table) and notes, folded. A row not run
    yet (its set shipped in part) has no numbers for a note to explain: its verdict cell says how many runs are
    shipped, and claims.csv keeps its note."""
    md = []
    quoted: dict[str, list[str]] = {}  # the text's words, each once with the tables it is read for
    cells: dict[str, list[str]] = {}  # the tables' entries (reproductions, markers): their cells, per table
    for r in at:
        if r["kind"] == "claim":  # the table each is read for, without its qualifiers
            quoted.setdefault(r["quote"], []).append(r["where"].split(" (")[0])
        else:
            cells.setdefault(r["where"], []).append(r["quote"])
    md += ["", "What the paper says:", ""]
    md += [f"- \"{_md(q)}\" ({_md('; '.join(dict.fromkeys(ws)))})" for q, ws in quoted.items()]
    md += [f"- {_md(w)}, its entries as the paper prints them (its TeX as text): "
           + ", ".join(_md(_plain(q)) for q in dict.fromkeys(qs)) for w, qs in cells.items()]
    noted: dict[str, list[str]] = {}  # one line per note, naming the rows it is said of
    for r in at:
        if _verdict(r, sets).startswith("not run yet"):
            continue
        for n in (_long_note(r), _both_readings(r), r.get("says")):
            if n:
                noted.setdefault(n, []).append(f"{r['where']}, {_short_claim(r)}")
    clip = lambda n: n if len(n) <= NOTE_SHOWN else n[:NOTE_SHOWN].rsplit(" ", 1)[0] + " … (claims.csv)"  # noqa: E731
    md += ["", "Notes:", ""] + [f"- {_md(clip(n))} ({_md('; '.join(ws))})" if len(ws) <= 2 else
                                f"- {_md(clip(n))} ({len(ws)} rows of "
                                f"{_md(', '.join(dict.fromkeys(w.split(', ')[0] for w in ws)))})"
                                for n, ws in noted.items()]
    return md


def notes_page(paper: str) -> str:
    """The file name of a paper's quotes-and-notes page, beside claims.md ("claims_fedlog.md")."""
    return f"claims_{re.sub(r'[^a-z0-9]+', '_', str(paper).lower()).strip('_')}.md"


def _sections(rows: list[dict], sets: dict) -> tuple[list[str], dict[str, list[str]]]:
    """One section per paper; in it one compact table per scale (largest first), and a link to the paper's quotes and
    notes page (returned beside: paper -> its lines), so that the page is the verdicts and the words behind them one
    click away."""
    md, pages = [], {}
    larger = {(r["paper"], r["where"], r["claim"]) for r in rows if r["scale"] != "quick"}
    for paper in sorted({r["paper"] for r in rows if r["kind"] in PAPER_KINDS}):  # a paper with own rows only
        md += ["", f"## {_md(paper)}", "", f"What the paper says, and the notes behind each row: "
                                           f"[{_md(paper)}: quotes and notes]({notes_page(paper)})."]
        page = [f"# {_md(paper)}: what the paper says, and notes", "",
                "The quotes each row of [the claims page](claims.md) tests, and the notes behind its verdicts, per "
                "scale (figures/claims.csv holds every row whole)."]
        for scale in SHOWN_SCALES:
            at = [r for r in rows if r["paper"] == paper and r["scale"] == scale and r["kind"] in PAPER_KINDS]
            twins = [r for r in at if scale == "quick" and (r["paper"], r["where"], r["claim"]) in larger]
            at = [r for r in at if r not in twins]  # a quick row tested at a larger scale too: counted, not listed
            if not at:
                continue
            md += ["", f"### {scale}: {SCALE_TEXT[scale]}"]
            if twins:
                md += ["", f"Listed here: the claims tested at this scale only; {len(twins)} more, also tested at a "
                           "larger scale above, are counted in the headline and listed in claims.csv."]
            stand = sorted({sets[r["part"]]["deviations"] for r in at if sets.get(r.get("part") or "", {})
                            .get("deviations")})
            if stand and scale in ("stand-in", "reduced"):
                md += [""] + [f"- {_md(s)}" for s in stand]
            decided = dict.fromkeys(part for r in at for part in str(r.get("note") or "").split("; ")
                                    if part.startswith(REGIME_LINE))
            md += [""] + [f"- {_md(line)}" for line in decided] if decided else []
            md += _kind_tables(at, sets)
            page += ["", f"## {scale}: {SCALE_TEXT[scale]}"] + _details(at, sets)
        pages[paper] = page
    return md, pages


def _short(cell) -> str:
    v = parse(cell) if isinstance(cell, str) else cell
    if v is None or v == "":
        return "-"
    if isinstance(v, list):
        return "[" + ", ".join(fmt(round(x, 4) if isinstance(x, float) else x) for x in v) + "]"
    return fmt(v)


def _unshipped(rows: list[dict], sets: dict) -> list[str]:
    """A table of the paper-profile run sets the rows name whose runs are not all in archive/ yet."""
    named = sorted({r["part"] for r in rows if r.get("part")})
    lines = ["| " + " | ".join(_md(c) for c in (name, ", ".join(sets[name]["where"]),
                                               f"{sets[name]['have']} of {sets[name]['n']}", sets[name]["cost"])) + " |"
             for name in named if name in sets and sets[name]["have"] < sets[name]["n"]]
    return (["", f":::{{dropdown}} {len(lines)} paper-profile run set{'s' * (len(lines) > 1)} not all shipped "
                 "(counted from archive/)", "", "`python scripts/paper_runs.py SET` computes a set's runs.", "",
             "| set | for | runs shipped | cost |", "|---|---|---|---|"] + lines + [":::"] if lines else [])


def write_collected(rows: list[dict], out: Path | None = None, sets: dict | None = None) -> list[Path]:
    """figures/claims.csv (every row, with its Holm column), figures/claims.md and one quotes-and-notes page per paper
    (figures/claims_<paper>.md, linked from its section), each written atomically.
    `sets` (`fedlib.papers.accounting.set_status()`, passed by `python -m fedlib claims`): per run set, how much is shipped,
    its cost, its command and what it changes from the paper."""
    out = out or figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    sets = sets or {}
    rows = _unique_short(with_holm([r for r in rows if r["scale"] in SCALES]))
    md = ["---", FULL_WIDTH, "---", "# Claims: our verdicts on the papers' claims", "",
          "Collected by `python -m fedlib claims` from every notebook's ledger (figures/claims/). The counts hold the "
          "papers' own claims, reproductions and markers; our self-checks and extensions are counted apart below.",
          ""] + _headline(rows)
    sections, pages = _sections(rows, sets)
    md += _unshipped(rows, sets) + _rule_lines() + sections + _own_checks(rows)
    replace_text(out / "claims.csv", csv_text_with_holm([{k: v for k, v in r.items() if k != "_from"} for r in rows]))
    replace_text(out / "claims.md", "\n".join(md) + "\n")
    written = [out / "claims.csv", out / "claims.md"]
    for paper, page in pages.items():
        replace_text(out / notes_page(paper), "\n".join(page) + "\n")
        written.append(out / notes_page(paper))
    for old in out.glob("claims_*.md"):  # a paper no longer collected: its page goes too
        if old not in written and old.is_file() and not old.is_symlink():
            old.unlink()
    return written


def csv_text_with_holm(rows: list[dict]) -> str:
    return csv_text([{k: _spreadsheet_safe(v) for k, v in r.items()} for r in rows], COLUMNS + ["holm", "holm_family"])


def _spreadsheet_safe(v) -> str:
    """A cell a spreadsheet opens as text: one that begins with = + - or @ (a formula there) gets a leading
    apostrophe, as spreadsheets write text that looks like a formula."""
    s = "" if v is None else str(v)
    try:
        float(s)
        return s  # a number (a negative one begins with -) is read as a number, not a formula
    except ValueError:
        return "'" + s if s[:1] in ("=", "+", "-", "@") else s


__all__ = ["family", "holm", "notes_page", "with_holm", "write_collected", "csv_text"]
