import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    """Every test writes results and figures to its own folder, never to the checkout's caches."""
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path / "figures"))
    torch.manual_seed(0)
