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


def test_the_readme_is_one_screen_and_its_links_resolve():
    assert len(README.read_bytes()) <= 8000
    for target in re.findall(r"\]\(([^)#]+)\)", README.read_text()):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target
