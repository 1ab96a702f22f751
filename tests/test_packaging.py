import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_environment_yml_and_pyproject_name_the_same_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    deps = project["dependencies"] + extras["cluster"] + extras["test"]
    text = (ROOT / "environment.yml").read_text()
    pip_section = text[text.index("- pip:"):]
    env = re.findall(r"^\s+- (\S+)\s*$", pip_section, flags=re.M)
    assert sorted(env) == sorted(deps)


def test_every_notebook_source_has_its_pair():
    for py in (ROOT / "notebooks").glob("[0-9]*.py"):
        assert py.with_suffix(".ipynb").exists(), py
