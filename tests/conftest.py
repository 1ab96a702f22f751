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
    # the profile a test chooses (paths.use_profile, as a notebook's first cell does) ends with it: one that ran a
    # notebook "by hand" (LAB) left its figures under build/lab/ for the tests after it in its worker
    from fedlib import paths

    monkeypatch.setattr(paths, "_active", paths._active)
    monkeypatch.setattr(paths, "_lab", paths._lab)
    torch.manual_seed(0)
    yield
    # whether a dataset is here is kept once a process and data folder (`experiments.data_here`): a test that patched
    # the answer (`dataset_available`) must not leave it to the tests after it in its worker (one left MNIST "not
    # here", and a later paper read of notebook 02 left its unaugmented runs out)
    __import__("fedlib.experiments", fromlist=["_data_here"])._data_here.cache_clear()  # (under a patch)


# the made-up paper the claims tests record rows of ("P"), registered beside the workbook's own (fedlib.papers registers
# those as it is imported)
__import__("fedlib.papers")
__import__("fedlib.claims.ledger", fromlist=["register_papers"]).register_papers("P")

_SLOW = [line.strip() for line in (__import__("pathlib").Path(__file__).parent / "slow_tests.txt").read_text().splitlines()
         if line.strip() and not line.startswith("#")]


def pytest_collection_modifyitems(config, items):
    """Mark the tests listed in tests/slow_tests.txt slow (measured), so `pytest -m "not slow"` is the fast lane."""
    for item in items:
        if any(item.nodeid == s or (item.nodeid.startswith(s) and "[" in s) for s in _SLOW):
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config):
    if "not slow" in (config.getoption("-m") or ""):
        return "the fast lane: every test but those marked slow (tests/slow_tests.txt and @pytest.mark.slow)"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if "not slow" in (config.getoption("-m") or ""):
        ran = sum(len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "error", "skipped"))
        left = len(terminalreporter.stats.get("deselected", []))
        if getattr(config.option, "numprocesses", None) and not left:  # xdist's workers deselect: not counted here
            terminalreporter.write_line(f"fast lane: {ran} tests run; the slow ones (tests/slow_tests.txt) left out")
            return
        terminalreporter.write_line(f"fast lane: {ran} tests run, {left} slow ones left out "
                                    f"({100 * ran / max(ran + left, 1):.0f}% of the unit tests)")


@pytest.fixture
def cpu_keys(monkeypatch):
    """The pinned cache keys and the shipped runs are the CPU's: a key includes the device type, so on a GPU machine
    (FEDLIB_DEVICE=cuda, scripts/gpu_check.sh) these tests look up the CPU's keys, not a GPU run's."""
    monkeypatch.setenv("FEDLIB_DEVICE", "cpu")
