import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_results(tmp_path, monkeypatch):
    """Every test writes results and figures to its own folder, never to the checkout's caches."""
    monkeypatch.setenv("FEDLIB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FEDLIB_FIGURES", str(tmp_path / "figures"))
    # sweeps run in this process, where a test's monkeypatches reach them; tests/test_sweep.py tests the worker pool
    # (the default backend) and the backends' choice explicitly, and the notebooks run under nbval with the default
    monkeypatch.setenv("FEDLIB_SWEEP_BACKEND", "local")
    torch.manual_seed(0)
