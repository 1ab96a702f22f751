"""fedlib.outputs: a saved table is shown the way its files show it, and shown where it is saved."""
import json
import types

import pytest

from fedlib import outputs, paths

ROOT = paths.project_root()


@pytest.fixture
def figures(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    monkeypatch.setattr(paths, "_active", None)
    monkeypatch.delenv("FEDLIB_PROFILE", raising=False)
    return tmp_path


def test_a_number_is_shown_to_two_decimals_and_a_small_one_keeps_its_size():
    assert outputs._cell(7.123456) == "7.12"
    assert outputs._cell(98.41666) == "98.42"
    assert outputs._cell(0.5) == "0.50"
    assert outputs._cell(0.004912) == "0.0049"  # a p-value is not shown as 0.00
    assert outputs._cell(3.14e-5) == "3.1e-05"
    assert outputs._cell(0.0) == "0.00"
    assert outputs._cell(6918912000.0) == "6.92e+09" and outputs._cell(125030.4) == "125030.40"
    assert outputs._cell(3) == "3" and outputs._cell("FedLog") == "FedLog"
    assert outputs._cell(float("nan")) == "-" and outputs._cell(None) == "-"  # before: "nan" in the table (ux_round6)


def test_the_markdown_file_has_no_index_column_and_the_shown_digits(figures):
    table = outputs.save_table([{"method": "FedLog", "accuracy (%)": 7.123456, "p": 0.004912, "seeds": 3}], "t")
    md = (figures / "t.md").read_text()
    assert "7.12 " in md and "7.123" not in md and "0.0049 " in md
    assert md.splitlines()[0].startswith("| method")  # no index column before it
    assert table["accuracy (%)"][0] == 7.123456  # the returned table keeps the numbers


def _kernel(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.get_ipython", lambda: types.SimpleNamespace(kernel=object()))
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    return shown


def test_a_saved_table_is_shown_once_in_a_notebook_as_its_file_shows_it(figures, monkeypatch):
    shown = _kernel(monkeypatch)
    outputs.save_table([{"method": "FedLog", "accuracy (%)": 7.123456}], "t")
    assert len(shown) == 1
    html = shown[0]._repr_html_()
    assert "<table" in html and "7.12<" in html and "7.123" not in html
    assert "<script" not in html and "<style" not in html  # the book publishes table markup only
    assert repr(shown[0]).splitlines()[0] == "t"  # its name first, then the Markdown the .md holds
    assert repr(shown[0]).split("\n", 1)[1].strip() == (figures / "t.md").read_text().strip()


def test_a_table_whose_twin_is_shown_is_saved_without_being_shown(figures, monkeypatch):
    shown = _kernel(monkeypatch)
    outputs.save_table([{"a": 1.0}], "numbers", show=False)
    assert shown == [] and (figures / "numbers.csv").exists()


def test_nothing_is_shown_outside_a_kernel(figures, monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj: shown.append(obj))
    outputs.save_table([{"a": 1.0}], "t")
    assert shown == []


def _tables_shown(notebook: str) -> list[str]:
    nb = json.loads((ROOT / "notebooks" / notebook).read_text())
    names = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data and "<table" in "".join(data["text/html"]):
                names.append("".join(data.get("text/plain", "")).split("\n", 1)[0])
    return names


def test_notebook_06_shows_table_2_and_its_table_1_setting_as_tables():
    """Issue 69: part A showed three 'not drawn' lines and no table although FashionMNIST n1 is shipped; part G
    (FedCR in FedLog's Table 1 setting, shipped) showed nothing."""
    shown = _tables_shown("06_fedcr_common_representation.ipynb")
    assert "fedcr_table2_paper" in shown
    assert "table1_mnist_seed_systems_fedcr_paper" in shown


def test_no_committed_notebook_shows_a_table_twice():
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        shown = _tables_shown(nb.name)
        assert len(shown) == len(set(shown)), (nb.name, shown)


def test_a_count_of_bits_is_shown_in_megabits_and_kept_in_bits(tmp_path, monkeypatch):
    """Tables showed the ledger's raw bits ("34944000") where the papers write Mb and Gb: a `*_bits` column is shown
    in Mb, its header says so, and the CSV keeps the whole bits for code to read."""
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    outputs.save_table([{"method": "FedAvg", "uplink_bits": 34944000, "total_bits": 1061683200.0, "seeds": 3},
                        {"method": "x", "uplink_bits": float("nan"), "total_bits": 2, "seeds": 1}], "t",
                       units={"uplink_bits": "bits"})
    md = (tmp_path / "t.md").read_text()
    assert "uplink_bits (Mb)" in md and "total_bits (Mb)" in md and "(bits)" not in md
    assert "| 34.94 " in md and "| 1061.68 " in md and "34944000" not in md
    assert "34944000" in (tmp_path / "t.csv").read_text()


def test_a_profiles_settings_are_a_short_table_not_a_repr():
    """Notebooks 06 and 08 printed their profile as a 700-character dataclass repr."""
    from fedlib.papers import fedcr, fedprof

    shown = outputs.settings("paper", fedcr.PROFILES["paper"])
    text = repr(shown)
    assert text.startswith("the paper profile's settings\n| setting") and "Profile(" not in text
    assert "| width " in text and "| 1024 " in text and "fashion_mnist 250, mnist 500" in text
    assert "<table" in shown._repr_html_() and "Profile(" not in repr(outputs.settings("paper", fedprof.PROFILES["paper"]))
