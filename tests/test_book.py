"""The book (Jupyter Book): which run of each notebook it shows and how it marks an unfinished one; then the real
build, checked in a browser: a sidebar and navigation on every page, search, math with no network, every image
loaded and no link that 404s."""
import base64
import os
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from fedlib import book

# a 1 x 1 PNG
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0000003010100c9fe92ef0000000049454e44ae426082")).decode()


PAYLOADS = [{"text/html": "<table class='dataframe'><tr><td>a planted table</td></tr></table>"
                          "<img src=x onerror=\"document.title='ran html'\"><script>document.title='ran script'</script>",
             "text/plain": "a table"},
            {"application/javascript": "document.title='ran js'"},
            {"text/markdown": "<img src=x onerror=\"document.title='ran md'\">", "text/plain": "md"},
            {"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload=\"document.title='ran svg'\"></svg>"}]


def test_notebook_outputs_are_published_only_in_forms_that_cannot_run_script():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data=data) for data in PAYLOADS]
    shown = [out["data"] for out in book.publishable(nb).cells[0].outputs]
    assert shown[0]["text/html"] == '<table class="dataframe"><tr><td>a planted table</td></tr></table>'
    assert shown[1] == {"text/plain": "document.title='ran js'"}  # its source, as text
    assert shown[2] == {"text/plain": "md"} and set(shown[3]) == {"text/plain"}


def _executed(folder, name, failed=False, profile=None):
    nb = nbformat.v4.new_notebook()
    if profile:
        nb.metadata["papermill"] = {"parameters": {"profile": profile}}
    ok = nbformat.v4.new_code_cell("plot()", metadata={"papermill": {"status": "completed"}})
    ok.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Figure>"})]
    nb.cells = [nbformat.v4.new_markdown_cell("# A title"), ok,
                nbformat.v4.new_code_cell("more()", metadata={"papermill": {"status": "failed" if failed
                                                                            else "completed"}})]
    nbformat.write(nb, folder / name)


def _sources(tmp_path, parts=None, **failed):
    executed = tmp_path / "executed"
    executed.mkdir(exist_ok=True)
    for name in ("01_synthetic_separators", "02_communication_cost"):
        _executed(executed, f"{name}.ipynb", failed=failed.get(name, False), profile="quick")
    states = book.assemble(executed, tmp_path / "src", parts)
    return {name: (state, profile) for name, state, profile in states}, (tmp_path / "src" / "intro.md").read_text()


def _first_cells(tmp_path, name):
    return [c.source for c in nbformat.read(tmp_path / "src" / "notebooks" / f"{name}.ipynb", as_version=4).cells[:2]]


def test_an_interrupted_notebook_is_marked_on_its_page_and_the_front_page(tmp_path, monkeypatch):
    monkeypatch.setattr(book, "project_root", lambda: _checkout_without_outputs(tmp_path))
    states, intro = _sources(tmp_path, **{"02_communication_cost": True})
    assert states["02_communication_cost"] == ("interrupted", "quick")
    assert "02 communication cost](notebooks/02_communication_cost.ipynb): interrupted" in intro
    assert "interrupted" in _first_cells(tmp_path, "02_communication_cost")[1]
    assert states["01_synthetic_separators"] == ("complete", "quick") and "01 synthetic separators](notebooks/" \
        "01_synthetic_separators.ipynb): complete, quick profile" in intro
    assert states["03_differential_privacy"][0] == "not run" and "Not run yet" in _first_cells(
        tmp_path, "03_differential_privacy")[1]


def test_a_run_that_run_all_did_not_see_end_is_interrupted_even_if_every_cell_says_completed(tmp_path, monkeypatch):
    monkeypatch.setattr(book, "project_root", lambda: _checkout_without_outputs(tmp_path))
    (tmp_path / "executed").mkdir()
    (tmp_path / "executed" / "01_synthetic_separators.ipynb.incomplete").touch()  # Ctrl-C: papermill's marks lie
    states, _ = _sources(tmp_path)
    assert states["01_synthetic_separators"][0] == "interrupted"


def test_a_committed_notebook_with_outputs_is_shown_with_the_profile_of_its_last_run(tmp_path, monkeypatch):
    """Without an executed copy the book shows the committed notebook, which run_all.sh keeps with its outputs."""
    root = _checkout_without_outputs(tmp_path)
    nb = nbformat.read(root / "notebooks" / "08_fedprof_client_selection.ipynb", as_version=4)
    nb.metadata["fedlib"] = {"profile": "paper"}
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="a verdict\n")]
    nbformat.write(nb, root / "notebooks" / "08_fedprof_client_selection.ipynb")
    monkeypatch.setattr(book, "project_root", lambda: root)
    states, intro = _sources(tmp_path)
    assert states["08_fedprof_client_selection"] == ("complete", "paper")
    assert "08 fedprof client selection](notebooks/08_fedprof_client_selection.ipynb): complete, paper profile" in intro


def test_the_gallery_shows_every_committed_paper_profile_figure(tmp_path, monkeypatch):
    """Before, the gallery showed only the notebooks' own outputs, so a paper figure drawn from archive/ by a
    notebook whose committed outputs are the quick profile's (FedCR's Fig. 2) was in figures/ and nowhere in the
    book."""
    root = _checkout_without_outputs(tmp_path)
    (root / "figures").mkdir(exist_ok=True)
    (root / "figures" / "fedcr_fig2_features_paper.png").write_bytes(base64.b64decode(PIXEL))
    (root / "figures" / "fedcr_fig2_features.png").write_bytes(base64.b64decode(PIXEL))  # quick: not listed
    monkeypatch.setattr(book, "project_root", lambda: root)
    monkeypatch.setattr(book, "figures_dir", lambda: root / "figures")
    _sources(tmp_path)
    gallery = (tmp_path / "src" / "docs" / "gallery.md").read_text()
    assert "![fedcr_fig2_features_paper](../figures/fedcr_fig2_features_paper.png)" in gallery
    assert "(../figures/fedcr_fig2_features.png)" not in gallery
    assert (tmp_path / "src" / "figures" / "fedcr_fig2_features_paper.png").exists()  # where the link points


def _checkout_without_outputs(tmp_path):
    """A copy of the checkout's book sources with notebooks that carry no outputs."""
    real = Path(book.__file__).resolve().parent.parent
    root = tmp_path / "checkout"
    if root.exists():
        return root
    for folder in ("book", "docs"):
        shutil.copytree(real / folder, root / folder)
    shutil.copy(real / "references.bib", root)
    (root / "notebooks").mkdir()
    for source in sorted((real / "notebooks").glob("[0-9]*.ipynb")):
        nb = nbformat.read(source, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
        nbformat.write(nb, root / "notebooks" / source.name)
    return root


def _dom(page: Path, query: str = "") -> str:
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chrome is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("no Chromium here (apt-get install chromium); CI installs it")
    done = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                           "--dump-dom", page.as_uri() + query], capture_output=True, text=True, timeout=120)
    return done.stdout


def _console(chrome: str, url: str) -> str:
    """What a page logs to the browser's console (a CSP violation among it), headless."""
    done = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                           "--enable-logging=stderr", "--v=0", "--dump-dom", url], capture_output=True, text=True,
                          timeout=120)
    return done.stderr


def test_the_book_builds_offline_and_reads_in_a_browser(tmp_path):
    from fedlib import claims

    ledger = claims.ClaimsLedger("01_synthetic_separators", "quick")  # into this test's figures folder (conftest)
    ledger.compare("FedLog", "Fig. 1", "a claim", [1.0, 2.0, 3.0], [0.0, 0.5, 1.0], kind="claim", quote="a quote")
    ledger.compare("FedLog", "Fig. 1", "<img src=x onerror=\"document.title='ran'\">", [1.0, 2.0, 3.0],
                   [0.0, 0.5, 1.0], kind="claim", quote="<script>document.title='ran'</script>",
                   note="<b onmouseover=alert(1)>x</b>")
    outside = tmp_path / "outside_secret.txt"  # a file beside the checkout that no page may pull in
    outside.write_text("secret")
    role = f"{{download}}`{outside}` [x]({outside}) ![y]({outside})"  # MyST roles, links and images from data
    ledger.compare("FedLog", "Fig. 1", f"a role {role}", [1.0, 2.0, 3.0], [0.0, 0.5, 1.0], kind="claim",
                   quote=f"a quote {role}", note=f"a note {role}")
    ledger.save()
    sets = {"": {"have": 1, "n": 2, "cost": f"3 core-hours {role}", "where": ["Fig. 1"], "deviations": role}}
    claims.write_collected(claims.collect(), sets=sets)
    executed = tmp_path / "executed"
    executed.mkdir()
    _executed(executed, "01_synthetic_separators.ipynb", profile="quick")
    planted = nbformat.read(executed / "01_synthetic_separators.ipynb", as_version=4)
    planted.cells.insert(1, nbformat.v4.new_markdown_cell(f"A cell {role} <img src=x onerror=\"document.title=1\">"))
    planted.cells[2].metadata["mystnb"] = {"figure": {"caption": f"a caption {role}"}}
    planted.cells[2].outputs += [nbformat.v4.new_output("display_data", data=data) for data in PAYLOADS]
    nbformat.write(planted, executed / "01_synthetic_separators.ipynb")
    index = book.build(executed, tmp_path / "book")
    site = index.parent
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)
    assert {"intro.html", "search.html", "genindex.html"} <= {p.name for p in pages}
    for page in pages:  # every local link and image resolves inside the site (it can be published as it is)
        for target in re.findall(r'(?:href|src)="([^"#?]+)[^"]*"', page.read_text()):
            if not re.match(r"[a-z]+:", target):
                assert (page.parent / target).resolve().exists(), f"{page.relative_to(site)} links {target}"
    assert not re.search(r'src="https?://[^"]*mathjax', (site / "intro.html").read_text(), flags=re.I)
    intro = _dom(site / "intro.html")
    assert "bd-sidebar-primary" in intro and "02_communication_cost.html" in intro  # the sidebar's contents
    assert "mjx-container" in intro  # MathJax rendered the front page's formula, from the book's own copy
    assert "Zhang" in intro and "Wu" in intro  # the papers cited from references.bib
    notebook = _dom(site / "notebooks" / "01_synthetic_separators.html")
    assert "<img" in notebook and 'data-broken-images="0"' in notebook
    # scripts planted in a committed notebook's outputs (HTML, JavaScript, Markdown, SVG): none ran, none is markup
    assert "<title>ran" not in notebook and "<script>document.title" not in notebook
    assert not re.search(r"<[a-z]+[^>]*\son(error|load|mouseover)=", notebook)
    assert "a planted table" in notebook and "<table" in notebook  # a DataFrame's table is still shown
    assert "prev-next-area" in notebook  # navigation to the previous and next pages
    gallery = _dom(site / "docs" / "gallery.html")
    assert "<img" in gallery and 'data-broken-images="0"' in gallery
    claims_page = _dom(site / "figures" / "claims.html")
    assert "<table" in claims_page and "a claim" in claims_page
    # a claim's text from a claims file reaches the page as text, never as markup: nothing it holds ran
    assert "<title>ran</title>" not in claims_page and not re.search(r"<[a-z]+[^>]*\sonerror=", claims_page)
    assert "<script>document.title" not in claims_page
    notes = _dom(site / "figures" / "claims_fedlog.html")  # the paper's quotes and notes, linked from its section
    assert "claims_fedlog.html" in claims_page and "<script>document.title" not in notes
    assert "&lt;script&gt;document.title" in notes and not re.search(r"<[a-z]+[^>]*\son(error|mouseover)=", notes)
    # no horizontal scroll at a 1,300-pixel-wide window: a copy of the page reports its scroll width in its title
    probe = site / "figures" / "claims_width_probe.html"
    (site / "figures" / "width_probe.js").write_text(  # a file of the site: the page's CSP lets it run, as the theme's
        "window.addEventListener('load', () => { let n = 0; document.querySelectorAll('*')"
        ".forEach(e => { if (e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX != "
        "'visible') n++; }); document.title = 'width ' + (n ? 99999 : "
        "document.documentElement.scrollWidth); });")  # a table's own scroll counts too
    probe.write_text((site / "figures" / "claims.html").read_text().replace(
        "</body>", '<script src="width_probe.js"></script></body>'))
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    if chrome:
        done = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1300,900",
                               "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()], capture_output=True,
                              text=True, timeout=120)
        width = re.search(r"<title>width (\d+)</title>", done.stdout)
        assert width and int(width.group(1)) <= 1300, width.group(0) if width else done.stdout[-300:]
    # no file from outside the book's sources was copied in, by a role, a link or an image in data or a cell
    assert not [p for p in site.rglob("*") if p.name == outside.name or (p.is_file() and p.read_bytes() == b"secret")]
    found = _dom(site / "search.html", "?q=FedProf")
    assert re.search(r"found [1-9]\d* page", found), "the search found nothing"
    # every page carries a Content-Security-Policy that allows the theme's own inline scripts by hash, never
    # 'unsafe-inline' for scripts; a clean build violates it nowhere, and a script planted in a page is refused
    for page in pages:
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', page.read_text())
        assert policy, page
        script_src = next(d for d in policy.group(1).split(";") if d.strip().startswith("script-src"))
        assert "'unsafe-inline'" not in script_src, page
        assert "'sha256-" in script_src or "<script" not in page.read_text(), page  # the theme's own, by hash
    if chrome:
        for name, query in (("intro.html", ""), ("search.html", "?q=FedProf"),
                            ("notebooks/01_synthetic_separators.html", ""), ("figures/claims.html", "")):
            said = _console(chrome, (site / name).as_uri() + query)
            assert "Content Security Policy" not in said, (name, said[-500:])
        planted = site / "planted.html"
        planted.write_text((site / "intro.html").read_text().replace("</body>", "<script>document.title='ran'"
                                                                                 "</script></body>"))
        assert "Content Security Policy" in _console(chrome, planted.as_uri())


def test_the_front_page_says_how_many_of_a_notebooks_parts_its_runs_allow_it_to_draw(tmp_path, monkeypatch):
    """Before: "complete, paper profile" for notebook 06 while 153 of its 172 paper-profile runs were missing."""
    from fedlib import papers
    from fedlib.papers import accounting

    counted = accounting.parts_shipped(shipped=lambda cfg: cfg.method == "fedavg")
    whole, sets, have, runs = counted["06_fedcr_common_representation"]
    assert sets == len([s for s in papers.RUN_SETS.values() if s.notebook == "06_fedcr_common_representation"])
    assert 0 < have < runs and whole < sets
    monkeypatch.setattr(book, "project_root", lambda: _checkout_without_outputs(tmp_path))
    _, intro = _sources(tmp_path, parts={"02_communication_cost": (4, 7, 269, 511)})
    assert "02_communication_cost.ipynb): complete, quick profile; at the paper profile 4 of 7 parts' runs shipped " \
           "(269 of 511 runs)" in intro


def test_a_build_folder_that_is_a_link_is_refused_before_anything_is_written(tmp_path):
    """Before, a `build` symlink sent the book (and the removal of the old one) outside the checkout."""
    from fedlib.safe_files import UnsafePath

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "build").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="symbolic link"):
        book.build(tmp_path / "executed", tmp_path / "build" / "book")
    assert list(elsewhere.iterdir()) == []


LAYOUT_PROBE = """window.addEventListener('load', () => {
  const cells = [...document.querySelectorAll('.bd-article td')];
  const broken = cells.filter(td => getComputedStyle(td).overflowWrap == 'anywhere').length;
  const numbers = cells.filter(td => td.classList.contains('text-right') && td.textContent.trim());
  const lines = td => { const tops = new Set(), walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) { const r = document.createRange(); r.selectNodeContents(n);
      [...r.getClientRects()].forEach(q => tops.add(Math.round(q.top))); } return tops.size; };
  const wrapped = numbers.filter(td => lines(td) > 1).length;
  const wide = [...document.querySelectorAll('.bd-article table')].filter(
    t => t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).length;
  const own = [...document.querySelectorAll('section')].find(s => s.id && s.id.startsWith('our-own-checks'));
  const shown = [...document.querySelectorAll('.bd-article table tbody tr')].filter(
    tr => !tr.closest('details') && !(own && own.contains(tr)));
  const decided = Math.max(0, ...shown.map(tr => tr.getBoundingClientRect().bottom + window.scrollY));
  document.title = ['layout', document.documentElement.scrollWidth, document.documentElement.scrollHeight,
                    numbers.length, wrapped, broken, wide, Math.round(decided), shown.length].join(' ');
});"""


@pytest.mark.slow
def test_the_claims_page_fits_the_window_breaks_no_word_and_no_number(tmp_path, monkeypatch):
    """The committed claims page (figures/claims.md) in the book, at 1,280 x 900: no table wider than the window, no
    rule that breaks words anywhere ("FedC R"), every number cell (right-aligned) on one line; and the headline and
    every decided row (the tables' rows outside a dropdown, before our own checks) within 10 screens. Measured: the
    last decided row 8.9 screens down, the page 10.4 (2026-12-06; 21 screens before the rows not decided, the notes
    and the other regime's words moved to dropdowns, a column and the notes pages; 34 before that)."""
    figures = Path(os.environ["FEDLIB_FIGURES"])
    figures.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parent.parent / "figures"
    for page in root.glob("claims*.md"):
        shutil.copy(page, figures / page.name)
    executed = tmp_path / "executed"
    executed.mkdir()
    _executed(executed, "01_synthetic_separators.ipynb", profile="quick")
    site = book.build(executed, tmp_path / "book").parent
    (site / "figures" / "layout_probe.js").write_text(LAYOUT_PROBE)  # a file of the site: the CSP lets it run
    probe = site / "figures" / "claims_layout_probe.html"
    probe.write_text((site / "figures" / "claims.html").read_text().replace(
        "</body>", '<script src="layout_probe.js"></script></body>'))
    _dom(probe)  # skips (or fails on CI) without Chromium
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    done = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,900",
                           "--virtual-time-budget=10000", "--dump-dom", probe.as_uri()], capture_output=True, text=True,
                          timeout=120)
    found = re.search(r"<title>layout (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)</title>", done.stdout)
    assert found, done.stdout[-300:]
    width, height, numbers, wrapped, broken, wide, decided, shown = map(int, found.groups())
    assert width <= 1280 and wide == 0, (width, wide)
    assert numbers > 100 and wrapped == 0, (numbers, wrapped)
    assert broken == 0
    assert shown > 50 and decided <= 10 * 900, f"the last decided row is {decided / 900:.1f} screens of 1,280 x 900 down"
    assert height <= 14 * 900, f"the claims page is {height / 900:.1f} screens of 1,280 x 900"
