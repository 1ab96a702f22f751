"""The browsable book: executed notebooks, the claims table and the docs, checked in a real browser."""
import base64
import os
import shutil
import subprocess

import nbformat
import pytest

from fedlib import book

# a 1 x 1 PNG
PIXEL = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0000003010100c9fe92ef0000000049454e44ae426082")).decode()


def _executed(folder, name, failed=False, profile=None):
    nb = nbformat.v4.new_notebook()
    if profile:
        nb.metadata["papermill"] = {"parameters": {"profile": profile}}
    ok = nbformat.v4.new_code_cell("plot()", metadata={"papermill": {"status": "completed"}})
    ok.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PIXEL, "text/plain": "<Figure>"})]
    nb.cells = [ok, nbformat.v4.new_code_cell("more()", metadata={"papermill": {"status": "failed" if failed
                                                                                   else "completed"}})]
    nbformat.write(nb, folder / name)


def _book(tmp_path, failed=False):
    executed = tmp_path / "executed"
    executed.mkdir()
    _executed(executed, "01_synthetic_separators.ipynb")
    _executed(executed, "02_communication_cost.ipynb", failed=failed)
    return book.build(executed, tmp_path / "book")


def test_an_interrupted_notebook_is_marked_and_a_missing_one_listed(tmp_path):
    index = _book(tmp_path, failed=True).read_text()
    assert "02_communication_cost</a> <span class='interrupted'>(interrupted)" in index
    assert "01_synthetic_separators</a></li>" in index
    assert "03_differential_privacy <em>(not run" in index
    assert "was interrupted" in (tmp_path / "book" / "02_communication_cost.html").read_text()


def test_a_run_that_run_all_did_not_see_end_is_interrupted_even_if_every_cell_says_completed(tmp_path):
    (tmp_path / "executed").mkdir()
    (tmp_path / "executed" / "01_synthetic_separators.ipynb.incomplete").touch()  # Ctrl-C: papermill's marks lie
    _executed(tmp_path / "executed", "01_synthetic_separators.ipynb")
    index = book.build(tmp_path / "executed", tmp_path / "book").read_text()
    assert "01_synthetic_separators</a> <span class='interrupted'>(interrupted)" in index


def test_the_contents_say_which_profile_each_notebook_last_ran_in(tmp_path):
    # before: a notebook redrawn in the paper profile and one in the quick profile were listed alike
    (tmp_path / "executed").mkdir()
    _executed(tmp_path / "executed", "01_synthetic_separators.ipynb", profile="quick")
    _executed(tmp_path / "executed", "08_fedprof_client_selection.ipynb", profile="paper")
    index = book.build(tmp_path / "executed", tmp_path / "book").read_text()
    assert "01_synthetic_separators</a> <em>(quick profile)</em>" in index
    assert "08_fedprof_client_selection</a> <em>(paper profile)</em>" in index


def _dom(page):
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chrome is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is missing: .ci/run installs Debian's chromium package")
        pytest.skip("no Chromium here (apt-get install chromium); CI installs it")
    done = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
                           "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    return done.stdout


def test_the_book_renders_in_a_browser_with_its_figures_and_the_claims_table(tmp_path):
    from fedlib import claims

    ledger = claims.ClaimsLedger("01_synthetic_separators", "quick")  # into this test's figures folder (conftest)
    ledger.compare("FedLog", "Fig. 1", "a claim", [1.0, 2.0, 3.0], [0.0, 0.5, 1.0])
    ledger.save()
    claims.write_collected(claims.collect())
    index = _book(tmp_path)
    dom = _dom(index)
    assert "02_communication_cost.html" in dom and 'data-broken-images="0"' in dom
    page = _dom(tmp_path / "book" / "01_synthetic_separators.html")
    assert "<img" in page and 'data-broken-images="0"' in page
    claims = _dom(tmp_path / "book" / "claims.html")
    assert "<table>" in claims and "<td>" in claims
