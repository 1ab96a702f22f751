import shutil

from fedlib import provenance


def _fingerprint_of(tree, monkeypatch):
    monkeypatch.setattr(provenance, "PACKAGE", tree)
    provenance.fingerprint.cache_clear()
    try:
        return provenance.fingerprint()
    finally:
        provenance.fingerprint.cache_clear()


def test_the_fingerprint_follows_what_the_code_computes_not_its_comments(tmp_path, monkeypatch):
    tree = tmp_path / "fedlib"
    shutil.copytree(provenance.PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    base = _fingerprint_of(tree, monkeypatch)
    engine = tree / "engine.py"
    src = engine.read_text()
    engine.write_text(src.replace('"""The engine:', '"""An edited docstring. The engine:', 1) + "\n# a comment\n")
    assert _fingerprint_of(tree, monkeypatch) == base
    (tree / "plots.py").write_text((tree / "plots.py").read_text() + "\nX = 1\n")  # presentation only
    assert _fingerprint_of(tree, monkeypatch) == base
    engine.write_text(src.replace("eps: float = 1e-8", "eps: float = 1e-7", 1))  # one numeric constant
    assert _fingerprint_of(tree, monkeypatch) != base


def test_every_result_records_its_code():
    from fedlib import experiments as ex
    from fedlib.papers import fedlog

    res = ex.run(fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1),
                 cache=False, progress=False)
    assert res["code"]["fingerprint"] == provenance.fingerprint()


def test_tables_name_the_code_and_device_of_their_runs_in_one_sidecar_not_on_every_row(tmp_path, monkeypatch):
    """Before: a "code" and a "device" column on every row of every table, so a rerun that read one run made by other
    code left every table modified with no number changed. Now figures/provenance.json holds them per table."""
    import json

    from fedlib import paths, plots

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")  # a notebook starts: nothing read yet, so nothing recorded
    plots.save_table([{"method": "A"}], "before")
    assert not (tmp_path / "provenance.json").exists()
    provenance.note({"code": {"fingerprint": "abc123", "machine": "x86_64-AVX2"}, "device": "cpu"})
    provenance.note({"code": {"fingerprint": "def456", "machine": "x86_64-AVX512"}, "device": "cuda"})
    written = plots.save_table([{"method": "A", "acc": 98.123456}], "after").attrs["paths"]
    assert written[0].read_text().splitlines() == ["method,acc,profile", "A,98.123456,quick"]
    assert "code" not in written[1].read_text() and "98.12" in written[1].read_text()  # .md by pandas, 4 digits
    assert "abc123" not in written[2].read_text()
    sidecar = json.loads((tmp_path / "provenance.json").read_text())
    assert sidecar == {"after": {"code": "abc123 def456", "device": "cpu:x86_64-AVX2 cuda:x86_64-AVX512"}}
    paths.use_profile("quick")
    assert provenance.read_so_far() == {}


def test_a_table_merged_with_its_old_rows_formats_them_as_fresh_ones(tmp_path, monkeypatch):
    """keep_other reads the old rows back from the CSV: their numbers are formatted as numbers, not as text, so the
    same rows give the same .md whichever way they came."""
    from fedlib import paths, plots

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")
    rows = [{"dataset": "mnist", "acc": 98.123456, "seeds": 5}, {"dataset": "cifar10", "acc": 80.5, "seeds": 3}]
    fresh = plots.save_table(rows, "t").attrs["paths"][1].read_text()
    merged = plots.save_table(rows[:1], "t", keep_other="dataset").attrs["paths"][1].read_text()
    assert merged.splitlines()[2:] == fresh.splitlines()[2:]


def test_no_file_under_papers_enters_the_fingerprint_at_any_depth():
    """The folder rule: fedlib/papers/ and its packages (fedlib/papers/fedprof/...) hold the papers' numbers, plans,
    figures and claims, no numeric code; before, a paper's package files entered the fingerprint (only files directly
    in papers/ were left out), so moving a paper into its package changed every result's recorded code."""
    from fedlib import provenance

    modules = provenance.numeric_modules()
    assert modules and not any("papers" in p.relative_to(provenance.PACKAGE).parts for p in modules)
    assert any(p.name == "engine.py" for p in modules)


def test_a_cell_read_back_as_a_number_only_where_it_writes_back_the_same():
    from fedlib import plots

    assert plots._value("98.123456") == 98.123456 and plots._value("5") == 5 and plots._value("nan") != "nan"
    assert plots._value("86.30") == "86.30" and plots._value("1e-05") == 1e-05 and plots._value("FedLog") == "FedLog"
