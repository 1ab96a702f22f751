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


def test_tables_name_the_code_and_device_of_the_runs_they_were_read_from(tmp_path, monkeypatch):
    from fedlib import paths, plots

    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path))
    paths.use_profile("quick")  # a notebook starts: nothing read yet, so no columns
    assert "code" not in plots.save_table([{"method": "A"}], "before").attrs["paths"][0].read_text()
    provenance.note({"code": {"fingerprint": "abc123", "machine": "x86_64-AVX2"}, "device": "cpu"})
    provenance.note({"code": {"fingerprint": "def456", "machine": "x86_64-AVX512"}, "device": "cuda"})
    header, row = plots.save_table([{"method": "A"}], "after").attrs["paths"][0].read_text().splitlines()
    assert header == "method,profile,code,device"
    assert row == "A,quick,abc123 def456,cpu:x86_64-AVX2 cuda:x86_64-AVX512"
    paths.use_profile("quick")
    assert provenance.read_so_far() == {}


def test_no_file_under_papers_enters_the_fingerprint_at_any_depth():
    """The folder rule: fedlib/papers/ and its packages (fedlib/papers/fedprof/...) hold the papers' numbers, plans,
    figures and claims, no numeric code; before, a paper's package files entered the fingerprint (only files directly
    in papers/ were left out), so moving a paper into its package changed every result's recorded code."""
    from fedlib import provenance

    modules = provenance.numeric_modules()
    assert modules and not any("papers" in p.relative_to(provenance.PACKAGE).parts for p in modules)
    assert any(p.name == "engine.py" for p in modules)
