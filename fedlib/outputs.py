"""Where figures and tables go: every figure saved as .png and .pdf, every table as .csv, .md and .tex (by
pandas), under figures/ (the paper profile's names end in `_paper`), with the code fingerprints and devices of the
runs behind each table in figures/provenance.json."""
from __future__ import annotations

from pathlib import Path

from . import provenance
from .safe_files import open_lock, regular_file, replace_text, replacing
from .paths import active_profile, figures_dir


def output_name(name: str) -> str:
    """The file name a figure or table is saved under: in the paper profile it ends in `_paper`, so the paper
    profile and the quick one never overwrite each other's files (smoke writes under build/smoke/)."""
    if active_profile() == "paper":
        return name if name.endswith("_paper") else f"{name}_paper"
    if name.endswith("_paper"):
        raise ValueError(f"{name}: names ending in _paper belong to the paper profile, and this is "
                         f"{active_profile() or 'no profile'}; save it under its plain name")
    return name


CAPTION_GAP_POINTS = 4.0  # between the lowest thing drawn and the caption line hung under it


def _hang_caption(fig, caption) -> None:
    """Move the caption line (`plots.caption`, hung from the figure's bottom edge) under whatever is drawn lower
    than that edge: an axis label of a figure laid out without `tight_layout` reaches below it, and the caption
    was written over it (notebook 03's dp_sigma: "privacy budget ε" under "paper profile · no runs ..."). A figure
    with nothing below its edge keeps the caption where it was, and its bytes."""
    caption.set_visible(False)
    try:
        fig.draw_without_rendering()  # places the axis labels under their tick labels (before a draw they sit high)
        drawn = fig.get_tightbbox(fig.canvas.get_renderer())  # inches, from the figure's bottom-left corner
    finally:
        caption.set_visible(True)
    if drawn is not None and drawn.y0 < 0:
        caption.set_y((drawn.y0 - CAPTION_GAP_POINTS / 72) / fig.get_figheight())


def save_figure(fig, name: str) -> list[Path]:
    """Save as name.png and name.pdf under figures/; the figure must carry its `caption` line, which is hung under
    everything else drawn (`_hang_caption`)."""
    captions = [t for t in fig.texts if " profile · " in t.get_text()]
    if not captions:
        raise ValueError(f"{name}: call plots.caption(fig, profile, seeds, rounds) first: every figure says which "
                         f"profile, seeds and rounds it shows")
    _hang_caption(fig, captions[-1])
    name = output_name(name)
    out = figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png", out / f"{name}.pdf"]
    with replacing(paths[0], "wb") as f:  # never through a symlink planted at the name
        fig.savefig(f, format="png", bbox_inches="tight")
    with replacing(paths[1], "wb") as f:
        fig.savefig(f, format="pdf", bbox_inches="tight", metadata={"CreationDate": None})  # same figure, same bytes
    return paths


def _cell(v) -> str:
    """How a table's number is shown, in the notebook and in its .md and .tex alike: 2 decimals ("98.42", "0.50");
    2 significant digits below 0.1, so that a p-value or a small rate keeps its size ("0.0049", "3.1e-05"); 3 from a
    million up, so that a count of bits reads ("6.92e+09", not "6918912000.00"); a number not there, "-"."""
    if v is None or (isinstance(v, float) and v != v):  # a number not there: "-", never "nan" or "None"
        return "-"
    if not isinstance(v, float) or v in (float("inf"), float("-inf")):
        return str(v)
    if abs(v) >= 1e6:
        return f"{v:.3g}"
    return f"{v:.2f}" if v == 0 or abs(v) >= 0.1 else f"{v:.2g}"


class Shown:
    """A saved table as its files show it (`_cell`, no index column): what a notebook displays, as a plain HTML table
    (the book publishes no other markup) with the Markdown text beside it."""

    def __init__(self, shown, name: str):
        self.shown, self.name = shown, name

    def _repr_html_(self) -> str:
        return self.shown.to_html(index=False, escape=True, border=0)

    def __repr__(self) -> str:
        return f"{self.name}\n" + self.shown.to_markdown(index=False, disable_numparse=True)


def _show(shown, name: str) -> None:
    """Display a saved table in the notebook that saved it, as a saved figure is shown (nothing outside a kernel)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from IPython.display import display

        display(Shown(shown, name))


def _value(text: str):
    """A CSV cell as the number it was written from (int or float), else the text: a table merged with rows read
    back from its CSV formats them as it formats fresh ones."""
    if not isinstance(text, str):  # a short row's missing cell (None) stays as it is
        return text
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if str(value) == text:  # only where writing it back gives the same text ("86.30" stays text)
            return value
    return text


PROVENANCE = "provenance.json"  # beside the tables: table name -> the code fingerprints and devices of its runs


def record_provenance(name: str, made_by: dict) -> Path:
    """Write `made_by` ({"code", "device"}) for table `name` into figures/provenance.json (read, merged and replaced
    atomically under a lock): where a table's rows come from, in one file instead of a column on every row, so a
    rerun that changes no number changes no table."""
    import fcntl
    import json

    out = figures_dir()
    path = out / PROVENANCE
    with open_lock(out / f".{PROVENANCE}.lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        known = {}
        if path.exists() or path.is_symlink():
            try:
                known = json.loads(regular_file(path, "read").read_text())
            except ValueError as err:  # a merge conflict's markers, say: never replaced by a smaller file
                raise ValueError(f"{path} cannot be read ({err}): it holds every table's provenance and is not "
                                 f"rewritten while damaged; mend it (git checkout -- '{path}', or resolve the merge) "
                                 f"and run again") from None
            if not isinstance(known, dict):
                raise ValueError(f"{path} holds a {type(known).__name__}, not a table of provenance by table name; "
                                 f"mend it (git checkout -- '{path}') and run again")
        known[name] = made_by
        replace_text(path, json.dumps(known, indent=1, sort_keys=True) + "\n")
    return path


def _shown(table, units: dict | None):
    """A table as its files and the notebook show it: every number as `_cell` shows it, as text (so pandas writes
    what it is given), a `*_bits` column in Mb as the papers count messages (the CSV keeps the ledger's whole bits),
    each unit in its column's header."""
    megabits = [c for c in table.columns if str(c).endswith("_bits")]
    units = {**(units or {}), **{c: "Mb" for c in megabits}}
    shown = table.map(_cell)
    for c in megabits:
        shown[c] = [_cell(v / 1e6) if isinstance(v, (int, float)) and not isinstance(v, bool) else _cell(v)
                    for v in table[c]]
    shown.columns = [f"{c} ({units[c]})" if c in units else c for c in table.columns]
    return shown


def save_table(rows: list[dict], name: str, keep_other: str | tuple | None = None, show: bool = True,
               units: dict | None = None, replace: tuple = ()):
    """rows: one dict per row, same keys. In a notebook the table is displayed as its .md shows it (`Shown`), once,
    where it is saved, so every part shows the table it saves. Returns the table written, as a pandas DataFrame of
    its numbers, its files in `.attrs["paths"]` (a cell need not end with it: it has been shown). `show=False` for
    the numbers behind a table that is shown in another form (Table 1's, beside its formatted twin). `units`: column
    -> its unit, written in the shown header ("final_mean (%)"); the CSV keeps the plain name, for code to read. A
    column named `*_bits` is shown in megabits ("uplink_bits (Mb)"), its CSV in the ledger's bits.
    `replace` (columns, with keep_other): the old rows that share these columns' values with a new row go, the new
    rows stand for all of them (`replace=("dataset",)`: a dataset's rows are the new ones; a label no longer made,
    such as a renamed method, does not stay), and only the other rows keep their places.
    Writes name.csv, and name.md and name.tex by pandas, under figures/ (a "profile" column is added when the rows have none; the paper profile's names end in `_paper`, see
    `output_name`). When the notebook has read runs, the fingerprints and devices they were made with (all runs
    the notebook read so far: a superset of the table's own) go to figures/provenance.json under `name`.
    `keep_other="dataset"` (or a tuple of columns): rows of the existing name.csv (same columns) whose key is
    not among the new rows' keep their places (a notebook run on some datasets does not erase the others' rows).
    No rows (a part whose runs are all missing): nothing is written, the files there stay, and it returns None."""
    import csv

    import pandas as pd

    if not rows:
        return None
    name = output_name(name)
    out = figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    if active_profile() and "profile" not in rows[0]:  # every table says which profile made it
        rows = [{**r, "profile": active_profile()} for r in rows]
    cols = list(rows[0])
    if keep_other and ((out / f"{name}.csv").exists() or (out / f"{name}.csv").is_symlink()):
        with open(regular_file(out / f"{name}.csv", "read"), newline="") as f:  # never another file's rows
            old = [{k: _value(v) for k, v in r.items()} for r in csv.DictReader(f) if list(r) == cols]
        covered = {tuple(str(r[c]) for c in replace) for r in rows}
        old = [r for r in old if not replace or tuple(str(r[c]) for c in replace) not in covered]
        cols_key = (keep_other,) if isinstance(keep_other, str) else tuple(keep_other)
        key = lambda r: tuple(str(r[c]) for c in cols_key)  # noqa: E731
        if len({key(r) for r in rows}) < len(rows):
            raise ValueError(f"keep_other={keep_other!r} must tell the new rows of {name} apart; add columns to it")
        merged: dict = {}
        for r in old:  # one row per key, in the old order (a file written by an older, buggier run may repeat keys)
            merged.setdefault(key(r), r)
        merged.update({key(r): r for r in rows})
        rows = list(merged.values())
    with replacing(out / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    table = pd.DataFrame(rows, columns=cols)
    shown = _shown(table, units)
    replace_text(out / f"{name}.md", shown.to_markdown(index=False, disable_numparse=True) + "\n")
    replace_text(out / f"{name}.tex", shown.to_latex(index=False, escape=True))
    made_by = provenance.read_so_far()  # the code fingerprints and devices of the runs behind it
    if made_by:
        record_provenance(name, made_by)
    table.attrs["paths"] = [out / f"{name}.{ext}" for ext in ("csv", "md", "tex")]
    if show:
        _show(shown, name)
    return table


def _setting(v) -> str:
    """A setting's value in a few words: a tuple or list joined, a mapping as "key value", a nested dataclass as its
    own fields, one level deep."""
    import dataclasses

    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return "; ".join(f"{f.name} {_setting(getattr(v, f.name))}" for f in dataclasses.fields(v))
    if isinstance(v, dict):
        return ", ".join(f"{k} {_setting(x)}" for k, x in v.items()) or "-"
    if isinstance(v, (tuple, list)):
        return ", ".join(_setting(x) for x in v) or "-"
    return str(v)


def settings(profile: str, values) -> Shown:
    """A profile's settings (a dataclass) as a short table to display: one row per setting, its value in words; the
    notebook's second cell shows it in place of the dataclass's repr."""
    import dataclasses

    import pandas as pd

    rows = [{"setting": f.name, "value": _setting(getattr(values, f.name))} for f in dataclasses.fields(values)]
    return Shown(pd.DataFrame(rows, columns=["setting", "value"]), f"the {profile} profile's settings")
