import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_environment_yml_and_pyproject_name_the_same_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    deps = project["dependencies"] + extras["cluster"] + extras["test"] + extras["book"]
    text = (ROOT / "environment.yml").read_text()
    pip_section = text[text.index("- pip:"):]
    env = re.findall(r"^\s+- (\S+)\s*$", pip_section, flags=re.M)
    assert sorted(env) == sorted(deps)


def test_every_notebook_source_has_its_pair():
    for py in (ROOT / "notebooks").glob("[0-9]*.py"):
        assert py.with_suffix(".ipynb").exists(), py


def test_a_damaged_notebook_is_named_before_the_sync(tmp_path):
    # before: a truncated .ipynb stopped every notebook with a 61-line jupytext traceback naming no file
    import shutil
    import subprocess
    import sys

    for f in ("01_synthetic_separators.py", "01_synthetic_separators.ipynb"):
        shutil.copy(ROOT / "notebooks" / f, tmp_path / f)
    text = (tmp_path / "01_synthetic_separators.ipynb").read_text()
    (tmp_path / "01_synthetic_separators.ipynb").write_text(text[: len(text) // 2])
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_notebook_pairs.py"), str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "01_synthetic_separators.ipynb is not a readable notebook" in done.stderr
