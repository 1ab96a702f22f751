"""docs/adding_a_method.md's snippet runs exactly as printed; the README stays one screen."""
import re
from pathlib import Path

from fedlib import algorithms

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGE = ROOT / "docs" / "adding_a_method.md"


def test_the_adding_a_method_snippet_runs_as_printed(monkeypatch, capsys):
    text = PAGE.read_text()
    section = text[text.index("## Adding a method"):]
    end = section.find("\n## ", 3)
    section = section if end < 0 else section[:end]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2
    monkeypatch.setattr(algorithms, "REGISTRY", dict(algorithms.REGISTRY))  # the snippet registers its class
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
    res = namespace["res"]
    assert len(res["rounds"]["acc_mean"]) == 2 and res["rounds"]["acc_mean"][-1] > 0.5
    assert res["rounds"]["up_bits"] == [10 * (10 * 50 + 10) * 32] * 2  # 10 clients send a 10 x 50 head and its bias
    assert str(res.curve()) in capsys.readouterr().out  # the page prints the Result's accessors


def test_the_comparison_on_the_adding_a_method_page_runs_as_printed(monkeypatch, capsys):
    """The page's own method beside FedAvg in a sweep on the worker pool, as a notebook would run it (before, the
    workers did not know a method registered outside fedlib: "unknown method 'head_averaging'")."""
    text = PAGE.read_text()
    first = text[text.index("## Adding a method"):text.index("## Comparing it with the others")]
    section = text[text.index("## Comparing it with the others"):]
    blocks = re.findall(r"```python\n(.*?)```", first, flags=re.S)[:1] + re.findall(r"```python\n(.*?)```", section,
                                                                                    flags=re.S)
    assert len(blocks) == 2
    monkeypatch.setattr(algorithms, "REGISTRY", dict(algorithms.REGISTRY))
    namespace: dict = {}
    exec(compile("from fedlib.papers import fedlog\n" + blocks[0], str(PAGE), "exec"), namespace)
    exec(compile(blocks[1], str(PAGE), "exec"), namespace)
    report = namespace["report"]
    assert report.failures == [] and all(len(r["rounds"]["acc_mean"]) == 2 for r in report.results)
    printed = capsys.readouterr().out
    assert "head_averaging [" in printed and "fedavg [" in printed


def test_the_readme_is_one_screen_and_its_links_resolve():
    assert len(README.read_bytes()) <= 8000
    for target in re.findall(r"\]\(([^)#]+)\)", README.read_text()):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def test_the_adding_a_paper_page_builds_a_package_and_its_notebook_runs_as_printed(tmp_path, monkeypatch):
    """docs/adding_a_paper.md: each block headed `# <module>.py` is written into a package `toy`, then the
    notebook block runs as printed (two-round runs on 1% of MNIST, results and figures in tmp_path)."""
    import sys

    from fedlib import claims

    page = (ROOT / "docs" / "adding_a_paper.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    package = tmp_path / "toy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    modules = {}
    for block in blocks:
        head = re.match(r"# (\w+)\.py\n", block)
        if head:
            modules[head.group(1)] = block
            (package / f"{head.group(1)}.py").write_text(block)
    assert set(modules) == {"reported", "protocol", "plans", "analysis", "figures", "claims"}
    notebook = [b for b in blocks if not re.match(r"# \w+\.py\n", b)]
    assert len(notebook) == 1 and "def " not in notebook[0] and "lambda" not in notebook[0]
    for name, value in (("FEDLIB_RESULTS", tmp_path / "results"), ("FEDLIB_FIGURES", tmp_path / "figures"),
                        ("FEDLIB_SWEEP_BACKEND", "local")):
        monkeypatch.setenv(name, str(value))
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict = {}
    try:
        exec(compile(notebook[0], str(ROOT / "docs" / "adding_a_paper.md"), "exec"), namespace)
    finally:
        for name in [m for m in sys.modules if m == "toy" or m.startswith("toy.")]:
            del sys.modules[name]
        from fedlib.papers import registry

        if "Toy" in registry.PAPERS:  # registered by its claims module: out of every listing again
            registry.unregister("Toy")
    assert len(namespace["table"]) == 2 and len(namespace["ledger"].rows) == 1
    assert namespace["ledger"].rows[0].verdict in (claims.HOLDS, claims.FAILS, claims.WITHIN)
    assert (tmp_path / "figures" / "claims" / "09_toy_smoke.csv").exists()
    plans = namespace["plans"]
    assert len(plans.RUN_SETS[0].runs()) == 10 and plans.RUN_SETS[0].command() == \
        "scripts/paper_runs.py toy_table1 --seeds 0-4"


def test_the_cluster_extra_can_reach_a_ray_address_the_docs_name():
    """docs/running.md documents FEDLIB_RAY_ADDRESS=ray://...; a ray:// address needs Ray's client (grpcio), which the
    `cluster` extra lacked."""
    import tomllib

    from fedlib import paths

    root = paths.project_root()
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    if "ray://" in (root / "docs" / "running.md").read_text():
        assert any(dep.replace(" ", "").startswith("ray[client]") for dep in extras["cluster"])


def test_the_license_is_an_spdx_string_so_the_install_prints_no_licence_warnings():
    """The TOML-table form and the licence classifier made setuptools print about 70 lines of deprecation warnings
    during every install."""
    import tomllib

    from fedlib import paths

    project = tomllib.loads((paths.project_root() / "pyproject.toml").read_text())
    assert project["project"]["license"] == "MIT"
    assert not any(c.startswith("License ::") for c in project["project"]["classifiers"])
    assert project["build-system"]["requires"] == ["setuptools>=77"]  # the first to read an SPDX string


def test_the_measurements_page_is_the_current_measurements_not_a_diary():
    """Before, docs/measurements.md was a 131 KB diary of 1,597 lines; it now holds one table per measure with its
    latest value, date, processor and command (the diary is in docs/history/)."""
    page = ROOT / "docs" / "measurements.md"
    text = page.read_text()
    assert len(text.encode()) < 20_000
    tables = [line for line in text.splitlines() if line.startswith("| measure |") or line.startswith("| run |")]
    assert len(tables) >= 4 and all("date" in t and "processor" in t for t in tables)
