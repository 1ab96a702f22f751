"""The workbook's book: `python -m fedlib book` (and `run_all.sh`'s last step) assembles its sources in a folder
of its own under build/ and builds them with Jupyter Book (Sphinx) into build/book/, renamed into place (two builds
at once each finish; `swap_in`), publishing no file through a symlink (`safe_files`): a static site with a sidebar, full-text
search, navigation on every page, the papers cited from references.bib and MathJax served from the book itself, so
it opens offline and can be published as it is (build/book/index.html).

The sources: book/ (the configuration, the contents and the front page); each notebook with the outputs of its last
run (run_all.sh's executed copy in build/notebooks where there is one, else the committed .ipynb, which run_all.sh
keeps with its last real run's outputs); docs/; figures/claims.md and the figures the docs show; and a gallery of
every figure the notebooks drew, beside the notebook that draws it.

A notebook whose run did not finish (papermill marks its cells: a failed or pending cell, or an exception in the
notebook's metadata; and run_all.sh leaves `<name>.ipynb.incomplete` beside a run it did not see end, as after
Ctrl-C, where papermill may mark every cell completed) is marked "interrupted" on its page and on the front page,
never shown as complete; one with no outputs anywhere is marked "not run". Every page counts its images that failed
to load into `data-broken-images` on <body> (book/_static/check_images.js; the browser test reads it).
"""
from __future__ import annotations

import base64
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

from . import markup
from .paths import figures_dir, project_root
from .safe_files import regular_file

BANNER = {
    "interrupted": "```{warning}\nThis notebook's run was interrupted: the cells after the one that failed or was "
                   "stopped did not run, and its outputs are incomplete.\n```",
    "not run": "```{note}\nNot run yet: this page shows the notebook without outputs. `./run_all.sh {number}` runs "
               "it.\n```",
}


class BookError(RuntimeError):
    """The book could not be built (Jupyter Book missing, or its build failed)."""


def status(nb: dict) -> str:
    """"complete", or "interrupted" when papermill left a cell failed or pending, or recorded an exception."""
    meta = nb.get("metadata", {}).get("papermill", {})
    if meta.get("exception"):
        return "interrupted"
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and cell.get("metadata", {}).get("papermill", {}).get("status") in (
                "failed", "pending", "running"):
            return "interrupted"
    return "complete"


def last_run(source: Path, executed: Path):
    """(notebook, state, profile) of `source`'s last run: run_all.sh's executed copy where there is one, else the
    committed notebook; state "complete", "interrupted" or "not run"."""
    import nbformat

    ran = executed / source.name
    if ran.exists() or ran.is_symlink():
        regular_file(ran)
        nb = nbformat.read(ran, as_version=4)
        state = "interrupted" if ran.with_name(ran.name + ".incomplete").exists() else status(nb)
        profile = nb.metadata.get("papermill", {}).get("parameters", {}).get("profile")
        nb.cells = [c for c in nb.cells if "injected-parameters" not in c.get("metadata", {}).get("tags", [])]
        return nb, state, profile
    nb = nbformat.read(source, as_version=4)
    has_outputs = any(c.get("outputs") for c in nb.cells if c.cell_type == "code")
    return nb, "complete" if has_outputs else "not run", nb.metadata.get("fedlib", {}).get("profile")


# What a notebook output may show in the book: images as pixels, text as text, and HTML only as the tags of a
# table (pandas' DataFrames), rebuilt by `clean_html` with every attribute but two numeric ones dropped. Anything
# else a committed .ipynb may hold (JavaScript, SVG, Markdown or LaTeX outputs, widget views) could run script in a
# reader's browser: it is left out, or, with no text beside it, shown as its escaped source text.
SHOWN_AS_IS = ("image/png", "image/jpeg", "text/plain")
TABLE_TAGS = {"table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "div", "span", "p", "br", "b", "i",
              "em", "strong", "code", "pre", "sub", "sup"}
VOID_TAGS = {"br"}


def clean_html(markup: str) -> str:
    """`markup` rebuilt from its text and its table tags only: text escaped; tags outside `TABLE_TAGS` dropped (the
    text of <script> and <style> with them); no attribute kept but a number in colspan or rowspan and a class made of
    words (pandas' "dataframe", which the book's style sheet reads)."""
    import html
    import re
    from html.parser import HTMLParser

    out: list[str] = []
    skipping = []

    class Rebuild(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in ("script", "style", "template", "noscript"):
                skipping.append(tag)
            elif tag in TABLE_TAGS and not skipping:
                kept = "".join(f' {k}="{v}"' for k, v in attrs if k in ("colspan", "rowspan") and (v or "").isdigit()
                               or k == "class" and re.fullmatch(r"[\w -]+", v or ""))
                out.append(f"<{tag}{kept}>")

        def handle_startendtag(self, tag, attrs):
            if tag in VOID_TAGS and not skipping:
                out.append(f"<{tag}>")

        def handle_endtag(self, tag):
            if skipping and tag == skipping[-1]:
                skipping.pop()
            elif tag in TABLE_TAGS and tag not in VOID_TAGS and not skipping:
                out.append(f"</{tag}>")

        def handle_data(self, data):
            if not skipping:
                out.append(html.escape(data))

    parser = Rebuild(convert_charrefs=True)
    parser.feed(markup)
    parser.close()
    return "".join(out)


KEPT_METADATA = ("kernelspec", "language_info")  # a notebook's metadata the book may read; a cell keeps its tags only


def publishable(nb):
    """`nb` with every code cell's outputs in forms that cannot run script (`SHOWN_AS_IS`, `clean_html`); every
    cell's metadata but its tags dropped (MyST-NB renders some, a figure's caption among them, as markup), and the
    notebook's but KEPT_METADATA; every markdown cell's raw HTML, MyST roles and directives, and links or images to
    anything but a web address shown as text (`markup.prose`)."""
    nb.metadata = {k: v for k, v in nb.metadata.items() if k in KEPT_METADATA}
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags")
        cell["metadata"] = {"tags": [str(t) for t in tags]} if isinstance(tags, list) else {}
        if cell.cell_type == "markdown":
            cell["source"] = markup.prose("".join(cell["source"]) if isinstance(cell["source"], list)
                                          else cell["source"])
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            data = out.get("data")
            if not data:
                continue
            kept = {k: v for k, v in data.items() if k in SHOWN_AS_IS}
            if "text/html" in data:
                raw = data["text/html"]
                kept["text/html"] = clean_html("".join(raw) if isinstance(raw, list) else raw)
            if not kept:  # only forms that could run script: their source, as text
                first = next(iter(data.values()))
                kept["text/plain"] = "".join(first) if isinstance(first, list) else str(first)
            out["data"] = kept
            out.pop("metadata", None)
    return nb


def _with_banner(nb, state: str, profile: str | None, number: str):
    import nbformat

    text = BANNER.get(state, "").replace("{number}", number)
    if state == "complete":
        text = f"*The outputs of its last run{f', {profile} profile' if profile else ''}.*"
    at = 1 if nb.cells and nb.cells[0].cell_type == "markdown" else 0  # after the title
    nb.cells.insert(at, nbformat.v4.new_markdown_cell(text))
    return nb


def _paper_figures(root: Path) -> list[str]:
    """The gallery's last section: every paper-profile figure committed in figures/ (`*_paper.png`), drawn from
    archive/ by `FEDLIB_PROFILE=paper ./run_all.sh`, so that a notebook whose committed outputs are the quick
    profile's (a part of its paper runs shipped, the rest computing) still shows what is shipped."""
    figures = sorted((root / "figures").glob("*_paper.png"))
    lines = ["## The paper profile's figures", "",
             "Drawn from the runs shipped in `archive/` by `FEDLIB_PROFILE=paper ./run_all.sh NN`; a notebook whose "
             "last run was the paper profile shows its own above too.", ""]
    if not figures:
        return lines + ["None committed yet.", ""]
    for path in figures:
        lines += [f"### {path.stem}", "", f"![{path.stem}](../figures/{path.name})", ""]
    return lines


def _gallery(notebooks: list[tuple[str, object]], src: Path) -> str:
    """The gallery page: every figure the notebooks drew, under the notebook that draws it; then every
    paper-profile figure committed in figures/."""
    folder = src / "docs" / "gallery"
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["# Gallery", "", "Every figure the notebooks drew in their last run, under the notebook that draws it "
             "(the full-size files are in `figures/`).", ""]
    for name, nb in notebooks:
        images = [out["data"]["image/png"] for cell in nb.cells if cell.cell_type == "code"
                  for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]
        lines += [f"## [{name.replace('_', ' ')}](../notebooks/{name}.ipynb)", ""]
        if not images:
            lines += ["No figure in its last run.", ""]
        for k, png in enumerate(images, start=1):
            (folder / f"{name}_{k}.png").write_bytes(base64.b64decode(png))
            lines += [f"![figure {k} of {name}](gallery/{name}_{k}.png)", ""]
    return "\n".join(lines + _paper_figures(project_root()))


def assemble(executed: Path, src: Path, parts: dict | None = None) -> list[tuple[str, str, str | None]]:
    """Write the book's sources under `src`; returns (notebook, state, profile) for each notebook. `parts`:
    notebook -> (parts whose runs are all shipped, parts, runs shipped, runs) at the paper profile, which the front
    page says beside each notebook (the CLI counts them, `fedlib.papers.accounting.parts_shipped`; this module knows no paper)."""
    import nbformat

    root = project_root()
    for path in [*(root / "book").rglob("*"), root / "references.bib", *(root / "notebooks").glob("[0-9]*.ipynb")]:
        regular_file(path)  # the book publishes no file a symlink points at (UnsafePath, naming it)
    if src.exists():
        shutil.rmtree(src)
    shutil.copytree(root / "book", src)
    shutil.copy(root / "references.bib", src / "references.bib")
    (src / "notebooks").mkdir()
    states, drawn = [], []
    for source in sorted((root / "notebooks").glob("[0-9]*.ipynb")):
        nb, state, profile = last_run(source, executed)
        nbformat.write(_with_banner(publishable(nb), state, profile, source.stem[:2]), src / "notebooks" / source.name)
        states.append((source.stem, state, profile))
        drawn.append((source.stem, nb))
    (src / "docs").mkdir()
    for page in sorted((root / "docs").glob("*.md")):
        if page.name != "gallery.md":
            shutil.copy(regular_file(page), src / "docs" / page.name)
    (src / "docs" / "gallery.md").write_text(_gallery(drawn, src))
    (src / "figures").mkdir()
    figures = figures_dir()
    for path in [*(root / "figures").glob("*.png"), *figures.glob("*.png"), figures / "claims.csv"]:
        if path.exists() or path.is_symlink():  # the committed figures the docs show, then this run's
            shutil.copy(regular_file(path), src / "figures" / path.name)
    claims = figures / "claims.md"
    if claims.is_symlink():
        regular_file(claims)
    (src / "figures" / "claims.md").write_text(claims.read_text() if claims.exists() else
                                               "# Claims\n\nNo claims collected yet: `python -m fedlib claims`.\n")
    for page in sorted(figures.glob("claims_*.md")):  # each paper's quotes and notes, linked from claims.md
        shutil.copy(regular_file(page), src / "figures" / page.name)
    parts = parts or {}
    listed = "\n".join(f"- [{name.replace('_', ' ')}](notebooks/{name}.ipynb): {state}"
                       + (f", {profile} profile" if profile and state != "not run" else "")
                       + _parts_said(parts.get(name), profile)
                       for name, state, profile in states)
    intro = (src / "intro.md").read_text()
    head, sep, tail = intro.partition("```{bibliography}")
    (src / "intro.md").write_text(f"{head}## The notebooks, as last run\n\n{listed}\n\n## References\n\n{sep}{tail}")
    return states


def _parts_said(counts, profile: str | None) -> str:
    """What of a notebook's paper-profile parts its runs allow it to draw ("; 2 of 6 parts' runs shipped, 19 of
    172 runs"); nothing for a notebook with no paper-profile run set."""
    if not counts:
        return ""
    whole, sets, have, runs = counts
    said = f"{whole} of {sets} parts' runs shipped ({have} of {runs} runs)"
    return f"; {said}" if profile == "paper" else f"; at the paper profile {said}"


def build(executed: Path | None = None, out: Path | None = None, parts: dict | None = None) -> Path:
    """Assemble and build the book; returns the path of its index page. BookError, saying what to do, if Jupyter
    Book is not installed or its build fails (the previous book is left as it was)."""
    root = project_root()
    executed = executed or root / "build" / "notebooks"
    out = out or root / "build" / "book"
    from .safe_files import refuse_symlink

    for place in (out.parent, out):  # a `build` link would send the book (and its removal of the old one) elsewhere
        refuse_symlink(place, "build the book through")
    try:
        import jupyter_book  # noqa: F401
    except ImportError:
        raise BookError(f"Jupyter Book is not installed: {sys.executable} -m pip install -e '{root}[book]'") from None
    own = f"{os.getpid()}-{secrets.token_hex(3)}"  # this build's folders: two builds at once do not share them
    src, work = out.parent / f".{out.name}_src-{own}", out.parent / f".{out.name}_work-{own}"
    try:
        assemble(executed, src, parts)
        done = subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build",
                               str(src), "--path-output", str(work)], capture_output=True, text=True)
        html = work / "_build" / "html"
        if done.returncode != 0 or not (html / "index.html").exists():
            raise BookError(f"jupyter-book build failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
        with_csp(html)
        swap_in(html, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(src, ignore_errors=True)
    return out / "index.html"


# The book's own inline scripts (its theme's configuration in each page's head; in the body only these) and event
# handlers: the Content-Security-Policy each page carries allows them by hash and nothing else inline, so that a script
# that reached a page any other way would not run.
THEME_BODY_SCRIPTS = ("kernelName = ", "// Activate the search field on page load")
THEME_HANDLERS = ("toggleFullScreen()", "window.print()")
CSP = ("default-src 'self' file:; script-src 'self' file: 'unsafe-hashes' {hashes}; style-src 'self' file: "
       "'unsafe-inline'; img-src 'self' file: data:; font-src 'self' file: data:; connect-src 'self' file:; "
       "object-src 'none'; base-uri 'none'; form-action 'self' file:")


def _hash(code: str) -> str:
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"


def with_csp(site: Path) -> int:
    """Give every page of the built book `site` a Content-Security-Policy (a <meta> first in its head) whose scripts
    are its own files and, by hash, the theme's inline scripts (those in the head, and THEME_BODY_SCRIPTS) and event
    handlers (THEME_HANDLERS): no 'unsafe-inline'. Returns how many pages it wrote."""
    import re

    pages = 0
    for page in site.rglob("*.html"):
        text = page.read_text()
        head = text.find("</head>")
        allowed = set()
        for m in re.finditer(r"<script(?![^>]*\bsrc=)([^>]*)>(.*?)</script>", text, flags=re.S):
            if "text/x-thebe-config" in m.group(1):
                continue  # data, never run
            if m.start() < head or m.group(2).strip().startswith(THEME_BODY_SCRIPTS):
                allowed.add(_hash(m.group(2)))
        allowed |= {_hash(h) for h in THEME_HANDLERS if f'onclick="{h}"' in text}
        meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP.format(hashes=" ".join(sorted(allowed)))}">'
        opened = re.search(r"<head[^>]*>", text)
        at = opened.end() if opened else 0  # a page with no head (the redirect at index.html): first, in its implied head
        page.write_text(text[:at] + ("\n" if opened else "") + meta + ("" if opened else "\n") + text[at:])
        pages += 1
    return pages


def swap_in(new: Path, out: Path, tries: int = 20) -> None:
    """Put the folder `new` at `out` by renames (the old one moved aside, then removed): a reader, or another build
    finishing at the same moment, sees a whole book at `out`, never half of one."""
    for _ in range(tries):
        aside = out.parent / f".{out.name}-old-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            os.rename(out, aside)
        except FileNotFoundError:
            aside = None
        try:
            os.rename(new, out)
        except OSError:  # another build put its book there between the two renames: try again
            continue
        finally:
            if aside is not None:
                shutil.rmtree(aside, ignore_errors=True)
        return
    raise BookError(f"could not put the book in place at {out}: other builds kept replacing it; run it again")
