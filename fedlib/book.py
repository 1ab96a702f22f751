"""A browsable book of the executed notebooks: `python -m fedlib book` (and `run_all.sh`'s last step) turns the
notebooks as `run_all.sh` executed them (build/notebooks/*.ipynb, outputs and figures included) into static HTML
pages with nbconvert, beside the claims table and the docs pages, under one table of contents:
build/book/index.html, which opens offline.

A notebook whose run did not finish (papermill marks its cells: a failed or pending cell, or an exception in the
notebook's metadata; and run_all.sh leaves `<name>.ipynb.incomplete` beside a run it did not see end, as after
Ctrl-C, where papermill may mark every cell completed) is marked "interrupted" in the contents and on its page, never shown as complete. A notebook
that was never executed is listed as "not run". The committed .ipynb files stay without outputs; the book is where
outputs are read. Every page counts its images that failed to load into `data-broken-images` on <body> once
loaded (the browser test reads it).
"""
from __future__ import annotations

import html
import json
from pathlib import Path

from .paths import figures_dir, project_root

CHECK_IMAGES = """<script>window.addEventListener("load", () => {
  const broken = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).length;
  document.body.dataset.brokenImages = String(broken);
});</script>"""
STYLE = """<style>body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;line-height:1.45}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}
.interrupted{color:#a00;font-weight:bold}nav a{margin-right:1em}</style>"""


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


def _page(title: str, body: str, nav: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{STYLE}"
            f"</head><body><nav>{nav}</nav>{body}{CHECK_IMAGES}</body></html>")


def _markdown(text: str) -> str:
    import mistune

    return mistune.create_markdown(plugins=["table"])(text)


def build(executed: Path | None = None, out: Path | None = None) -> Path:
    """Write the book; returns the path of its index page."""
    import nbformat
    from nbconvert import HTMLExporter

    root = project_root()
    executed = executed or root / "build" / "notebooks"
    out = out or root / "build" / "book"
    out.mkdir(parents=True, exist_ok=True)
    nav = "<a href='index.html'>contents</a><a href='claims.html'>claims</a>"
    exporter = HTMLExporter(template_name="classic")
    entries = []
    for source in sorted((root / "notebooks").glob("[0-9]*.ipynb")):
        ran = executed / source.name
        name = source.stem
        if not ran.exists():
            entries.append(f"<li>{html.escape(name)} <em>(not run: no executed copy in {executed})</em></li>")
            continue
        nb = nbformat.read(ran, as_version=4)
        state = "interrupted" if ran.with_name(ran.name + ".incomplete").exists() else status(nb)
        body, _ = exporter.from_notebook_node(nb)
        if state == "interrupted":
            banner = ("<p class='interrupted'>This notebook's run was interrupted: the cells after the one that "
                      "failed or was stopped did not run, and its outputs are incomplete.</p>")
            body = body.replace("<body>", "<body>" + banner, 1) if "<body>" in body else banner + body
        body = body.replace("</body>", CHECK_IMAGES + "</body>", 1)
        (out / f"{name}.html").write_text(body)
        mark = " <span class='interrupted'>(interrupted)</span>" if state == "interrupted" else ""
        profile = nb.get("metadata", {}).get("papermill", {}).get("parameters", {}).get("profile")
        made = f" <em>({html.escape(str(profile))} profile)</em>" if profile else ""  # what the last run was
        entries.append(f"<li><a href='{name}.html'>{html.escape(name)}</a>{mark}{made}</li>")
    claims_md = figures_dir() / "claims.md"
    claims_html = _markdown(claims_md.read_text()) if claims_md.exists() else "<p>No claims collected yet.</p>"
    (out / "claims.html").write_text(_page("Claims", claims_html, nav))
    docs = []
    for page in sorted((root / "docs").glob("*.md")):
        text = page.read_text().replace("](../figures/", "](../../figures/")
        (out / f"docs_{page.stem}.html").write_text(_page(page.stem, _markdown(text), nav))
        docs.append(f"<li><a href='docs_{page.stem}.html'>{html.escape(page.stem)}</a></li>")
    index = (f"<h1>fedlib workbook</h1><h2>Notebooks</h2><ol>{''.join(entries)}</ol>"
             f"<h2>Verdicts</h2><p><a href='claims.html'>The claims table</a></p>"
             f"<h2>Documentation</h2><ul>{''.join(docs)}</ul>")
    target = out / "index.html"
    target.write_text(_page("fedlib workbook", index, nav))
    (out / "book.json").write_text(json.dumps({"notebooks": len(entries), "docs": len(docs)}) + "\n")
    return target
