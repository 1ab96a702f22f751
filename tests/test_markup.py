"""Text from data reaches a Markdown page as text (`fedlib.markup.text`): no MyST role, link, image, math, code,
substitution or raw HTML survives it, on the MyST parser's own inline rules."""
from __future__ import annotations

import pytest

from fedlib import markup

PAYLOADS = ["{download}`../../../../etc/hostname`", "[x](../../../../etc/hostname)", "![x](/etc/hostname)",
            "<img src=x onerror=alert(1)>", "$\\href{javascript:alert(1)}{x}$", "{{ secret }}", "`code`",
            "{eval-rst}`.. raw:: html`", "line\n```{raw} html\n<script>alert(1)</script>\n```", "a | b",
            "[x]: ../../etc/hostname", "\\`{download}`x`"]


def _tokens(md: str) -> set[str]:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    parser = MarkdownIt("commonmark").enable("table").use(myst_role_plugin).use(dollarmath_plugin)
    found = set()
    for tok in parser.parse(md):
        found.add(tok.type)
        found.update(child.type for child in tok.children or [])
    return found


@pytest.mark.parametrize("payload", PAYLOADS)
def test_data_in_a_cell_or_a_list_item_stays_text(payload):
    """Before, `claims/report.py`'s cells escaped HTML only: a claim's text holding ``{download}`path` `` made the
    book copy that file from outside the checkout into its _downloads and link it."""
    bad = {"myst_role", "math_inline", "math_block", "link_open", "image", "html_inline", "html_block",
           "code_inline", "fence"}
    assert _tokens(f"| a | b |\n|---|---|\n| {markup.text(payload)} | x |\n") & bad == set()
    assert _tokens(f"- {markup.text(payload)}\n") & bad == set()


def test_the_payloads_unescaped_are_markup():
    """The check above can fail: without `markup.text` the roles, links, images, math, code and HTML are parsed."""
    kinds = set().union(*(_tokens(f"- {p}\n") for p in PAYLOADS))
    assert {"myst_role", "link_open", "image", "html_block", "math_inline", "code_inline", "fence"} <= kinds


def test_the_text_reads_as_written():
    """What a reader sees is the data: the parser's text nodes give the string back."""
    from markdown_it import MarkdownIt

    s = "FedLog-C's 98.41 ± 0.07 (p < 0.01) & [sic] $x_1$ {a}"
    inline = [t for t in MarkdownIt("commonmark").parseInline(markup.text(s))[0].children if t.type == "text"]
    assert "".join(t.content for t in inline) == s


def test_a_markdown_cell_keeps_its_prose_and_loses_what_could_run_or_pull_a_file():
    """Before, `book.publishable` cleaned outputs only: a markdown cell's raw HTML, a role or a local link reached
    the page as markup. `markup.prose` keeps emphasis, math, code and web links."""
    cell = ("# Title\n\nSome *prose* with $\\pm$ math, `code`, [a site](https://example.org).\n\n"
            "<img src=x onerror=alert(1)>\n\n{download}`../../etc/hostname`\n\n[x](../../etc/hostname)\n\n"
            "![y](/etc/hostname)\n\n```{raw} html\n<script>alert(1)</script>\n```\n\n{{ secret }}\n")
    kinds = _tokens(markup.prose(cell))
    assert {"myst_role", "html_block", "html_inline", "image", "fence"} & kinds == set()
    assert {"math_inline", "code_inline", "em_open", "link_open"} <= kinds  # the prose, and the one web link
    from markdown_it import MarkdownIt

    links = [t.attrs.get("href") for tok in MarkdownIt("commonmark").parse(markup.prose(cell))
             for t in tok.children or [] if t.type == "link_open"]
    assert links == ["https://example.org"]


def test_the_book_publishes_no_cell_metadata_but_tags_and_cleans_markdown_cells():
    import nbformat

    from fedlib import book

    nb = nbformat.v4.new_notebook(metadata={"mystnb": {"execution_mode": "force"}, "kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [nbformat.v4.new_markdown_cell("<script>alert(1)</script>", metadata={"tags": ["t"]}),
                nbformat.v4.new_code_cell("x = 1", metadata={"mystnb": {"figure": {"caption": "<img onerror=x>"}},
                                                             "tags": ["parameters"]})]
    out = book.publishable(nb)
    assert out.metadata == {"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    assert out.cells[1].metadata == {"tags": ["parameters"]} and out.cells[0].metadata == {"tags": ["t"]}
    assert "<script>" not in out.cells[0].source


def test_a_claims_row_names_a_known_paper_and_counts_its_seeds(tmp_path):
    """Before, the headline printed a ledger's `paper` column raw (an <img onerror> there ran in the page) and no
    column but kind, quote and scale was checked: now a row's paper is one of the registered papers (a word), and its
    seeds and rounds are counts; a file that breaks either is refused, naming its line."""
    import csv

    from fedlib import claims, papers  # noqa: F401  (registers the papers)
    from fedlib.claims import ledger as L

    assert "FedLog" in L.KNOWN_PAPERS
    good = dict.fromkeys(L.COLUMNS, "") | dict(paper="FedLog", where="W", claim="c", kind="extension", ours="1",
                                                reference="1", rule='{"kind":"comparison","op":"<=","value":0.0}',
                                                verdict="holds", scale="quick", seeds="3", rounds="250 (x)")
    for bad in (dict(paper="<img src=x onerror=alert(1)>"), dict(paper="FedUnknown"), dict(seeds="3; x"),
                dict(rounds="{download}`x`")):
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        with open(folder / "x_quick.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=L.COLUMNS)
            w.writeheader()
            w.writerows([good, good | bad])
        with pytest.raises(claims.ClaimsError, match="line 3"):
            claims.collect(folder)
