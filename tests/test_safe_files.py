"""fedlib.safe_files and its users: nothing the workbook writes, locks or publishes goes through a symlink planted
in the checkout (round 5 of the reliability review: figures/.tmp-provenance.json, figures/<table>.csv,
figures/<figure>.png and the book's copies of figures/*.png), and two runs at once use files of their own."""
import json
import threading

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from fedlib import book, notebook_run, outputs, plots, safe_files  # noqa: E402


@pytest.fixture
def figs(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path / "figures"))
    monkeypatch.setenv("FEDLIB_PROFILE", "quick")
    monkeypatch.setattr(outputs.provenance, "read_so_far", lambda: {"code": ["abc"], "device": ["cpu"]})
    (tmp_path / "figures").mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    return tmp_path / "figures", outside


def test_a_table_and_its_provenance_are_written_beside_a_planted_symlink_never_through_it(figs):
    out, outside = figs
    for planted in ("t.csv", "t.md", "t.tex", ".tmp-provenance.json"):
        (out / planted).symlink_to(outside)
    outputs.save_table([{"method": "FedLog", "acc": 0.9}], "t")
    assert outside.read_text() == "keep me"
    assert not (out / "t.csv").is_symlink() and "FedLog" in (out / "t.csv").read_text()
    assert json.loads((out / "provenance.json").read_text())["t"] == {"code": ["abc"], "device": ["cpu"]}
    (out / "provenance.json").unlink()
    (out / "provenance.json").symlink_to(outside)  # what it would merge with and publish: refused, named
    with pytest.raises(safe_files.UnsafePath, match="provenance.json is a symbolic link"):
        outputs.save_table([{"method": "FedLog", "acc": 0.9}], "t")
    assert outside.read_text() == "keep me"


def test_a_table_merged_with_its_old_rows_does_not_read_them_through_a_symlink(figs):
    out, outside = figs
    outside.write_text("method,acc,profile\nsecret,1,quick\n")
    (out / "t.csv").symlink_to(outside)
    with pytest.raises(safe_files.UnsafePath, match="t.csv is a symbolic link"):
        outputs.save_table([{"method": "FedLog", "acc": 0.9}], "t", keep_other="method")


def test_a_figure_is_written_beside_a_planted_symlink(figs):
    out, outside = figs
    (out / "f.png").symlink_to(outside)
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    plots.caption(fig, "quick", 1, 2)
    outputs.save_figure(fig, "f")
    plt.close(fig)
    assert outside.read_text() == "keep me" and (out / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_a_lock_planted_as_a_symlink_is_refused_and_its_target_kept(figs):
    out, outside = figs
    (out / ".provenance.json.lock").symlink_to(outside)
    with pytest.raises(safe_files.UnsafePath, match="does not lock through"):
        outputs.record_provenance("t", {"code": ["abc"]})
    assert outside.read_text() == "keep me"


def test_a_damaged_provenance_file_stops_the_write_naming_it_and_is_kept(figs):
    out, _ = figs
    damaged = '{"a": {"code": ["x"]},\n<<<<<<< HEAD\n'
    (out / "provenance.json").write_text(damaged)
    with pytest.raises(ValueError, match="provenance.json cannot be read"):
        outputs.record_provenance("t", {"code": ["abc"]})
    assert (out / "provenance.json").read_text() == damaged


def test_the_book_publishes_no_file_a_symlink_points_at(figs, tmp_path, monkeypatch):
    out, outside = figs
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    (out / "x_paper.png").symlink_to(secret)
    with pytest.raises(safe_files.UnsafePath, match="x_paper.png is a symbolic link"):
        book.assemble(tmp_path / "executed", tmp_path / "src")
    assert not (tmp_path / "src" / "figures" / "x_paper.png").exists()


def test_outputs_kept_in_a_notebook_replace_a_symlink_at_its_name(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    ran = tmp_path / "ran.ipynb"
    nbformat.write(nb, ran)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    committed = tmp_path / "n.ipynb"
    committed.symlink_to(outside)
    (tmp_path / ".n.ipynb.tmp").symlink_to(outside)  # the fixed temporary name it once wrote through
    assert "outputs kept" in notebook_run.keep_outputs(ran, committed)
    assert outside.read_text() == "keep me" and not committed.is_symlink()


def test_every_kernel_has_sockets_of_its_own_outside_the_notebooks_folder():
    """Two ./run_all.sh at once: every kernel's IPC sockets were kernel-ipc-1.. in notebooks/, shared by both
    (ValueError: Invalid Signature)."""
    a, b = notebook_run.IPCKernelManager(), notebook_run.IPCKernelManager()
    assert a.transport == "ipc" and a.ip != b.ip and a.ip.startswith("/") and "notebooks" not in a.ip


def test_two_books_put_in_place_at_once_leave_one_whole_book(tmp_path):
    out = tmp_path / "book"
    made = []
    for k in range(2):
        new = tmp_path / f"new{k}"
        new.mkdir()
        (new / "index.html").write_text(f"book {k}")
        made.append(new)
    threads = [threading.Thread(target=book.swap_in, args=(new, out)) for new in made]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (out / "index.html").read_text() in ("book 0", "book 1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book"]  # nothing left aside
