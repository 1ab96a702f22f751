"""The README's "Adding a method" snippet runs exactly as printed."""
import re
from pathlib import Path

from fedlib import algorithms

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_adding_a_method_snippet_runs_as_printed(monkeypatch, capsys):
    text = README.read_text()
    section = text[text.index("## Adding a method"):]
    section = section[: section.index("\n## ", 3)]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2
    monkeypatch.setattr(algorithms, "REGISTRY", dict(algorithms.REGISTRY))  # the snippet registers its class
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    res = namespace["res"]
    assert len(res["rounds"]["acc_mean"]) == 2 and res["rounds"]["acc_mean"][-1] > 0.5
    assert res["rounds"]["up_bits"] == [10 * (10 * 50 + 10) * 32] * 2  # 10 clients send a 10 x 50 head and its bias
    assert str(res["rounds"]["acc_mean"]) in capsys.readouterr().out
