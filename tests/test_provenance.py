import shutil

from fedlib import outputs, provenance


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

    from fedlib import paths

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")  # a notebook starts: nothing read yet, so nothing recorded
    outputs.save_table([{"method": "A"}], "before")
    assert not (tmp_path / "provenance.json").exists()
    provenance.note({"code": {"fingerprint": "abc123", "machine": "x86_64-AVX2"}, "device": "cpu"})
    provenance.note({"code": {"fingerprint": "def456", "machine": "x86_64-AVX512"}, "device": "cuda"})
    written = outputs.save_table([{"method": "A", "acc": 98.123456}], "after").attrs["paths"]
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
    from fedlib import paths

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")
    rows = [{"dataset": "mnist", "acc": 98.123456, "seeds": 5}, {"dataset": "cifar10", "acc": 80.5, "seeds": 3}]
    fresh = outputs.save_table(rows, "t").attrs["paths"][1].read_text()
    merged = outputs.save_table(rows[:1], "t", keep_other="dataset").attrs["paths"][1].read_text()
    assert merged.splitlines()[2:] == fresh.splitlines()[2:]


def test_a_table_of_no_rows_writes_nothing_and_keeps_the_files_there(tmp_path, monkeypatch):
    """A part whose runs are all missing (the paper profile computes none) saves no rows: before, save_table failed
    on rows[0]; now it writes nothing and the table drawn from shipped runs before stays."""
    from fedlib import paths

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")
    written = outputs.save_table([{"dataset": "mnist", "acc": 98.1}], "t").attrs["paths"]
    before = [p.read_text() for p in written]
    assert outputs.save_table([], "t") is None
    assert [p.read_text() for p in written] == before


def test_of_the_papers_only_their_analysis_enters_the_fingerprint():
    """The folder rule: fedlib/papers/<paper>/ holds the paper's numbers, plans, figures and claims, no numeric code,
    except its `analysis` (a module, or a folder of them), which computes (FedLog's Fig. 1 rounds, Thms. 3-5
    measured, FedCR's Fig. 2 views) and is fingerprinted wherever it lies."""
    from fedlib import provenance

    modules = {str(p.relative_to(provenance.PACKAGE)) for p in provenance.numeric_modules()}
    assert "engine.py" in modules and "algorithms/fedlog.py" in modules
    in_papers = {m for m in modules if m.startswith("papers/")}
    assert in_papers and all("/analysis" in m for m in in_papers), in_papers
    assert {"papers/fedlog/analysis/convergence.py", "papers/fedcr/analysis/__init__.py", "papers/fedcr/analysis/tables.py"} <= in_papers
    assert not modules & {"papers/fedlog/claims.py", "papers/fedprof/claims.py", "papers/fedlog/figures.py"}


def test_every_module_the_fingerprint_leaves_out_by_name_exists_and_writes_no_number(tmp_path, monkeypatch):
    """The hand list had drifted: `book` and `notebook_run` (which run no federated code) were fingerprinted. Every
    name left out is a module that exists, and editing a paper's analysis changes the fingerprint while editing its
    claims does not."""
    top = {p.stem for p in provenance.PACKAGE.glob("*.py")} | {p.parent.name for p in provenance.PACKAGE.glob("*/__init__.py")}
    assert provenance.NOT_NUMERIC <= top, provenance.NOT_NUMERIC - top
    assert {"book", "notebook_run", "outputs"} <= provenance.NOT_NUMERIC
    tree = tmp_path / "fedlib"
    shutil.copytree(provenance.PACKAGE, tree, ignore=shutil.ignore_patterns("__pycache__"))
    base = _fingerprint_of(tree, monkeypatch)
    claims = tree / "papers" / "fedlog" / "claims.py"
    claims.write_text(claims.read_text() + "\nX = 1\n")
    assert _fingerprint_of(tree, monkeypatch) == base
    analysis = tree / "papers" / "fedlog" / "analysis" / "synthetic.py"
    analysis.write_text(analysis.read_text() + "\nX = 1\n")
    assert _fingerprint_of(tree, monkeypatch) != base


def test_a_cell_read_back_as_a_number_only_where_it_writes_back_the_same():

    assert outputs._value("98.123456") == 98.123456 and outputs._value("5") == 5 and outputs._value("nan") != "nan"
    assert outputs._value("86.30") == "86.30" and outputs._value("1e-05") == 1e-05 and outputs._value("FedLog") == "FedLog"
