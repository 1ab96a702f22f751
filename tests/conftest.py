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


# The files that take longest in the test command, longest first (the sums of their tests' times in a clean clone's
# run with --durations=50, 2 cores, slots paused, 2026-12-07 at 7688dee: 646, 121, 96, 83, 69, 63, 57, 55, 42 and 42 s
# of about 1,700 s in all). They are collected first, and run_tests.sh keeps that order (--no-loadscope-reorder), so
# that the two workers start on them and the short files fill the end (longest first), where pytest-xdist's own
# order (by number of tests) started test_freshness.py's 646 s about a third of the way in and left one worker idle.
LONGEST_FILES = ("tests/test_freshness.py", "tests/test_reliability.py", "notebooks/02_communication_cost.ipynb",
                 "tests/test_sweep.py", "tests/test_own_method.py", "notebooks/05_convergence.ipynb",
                 "tests/test_config.py", "tests/test_cli.py", "notebooks/08_fedprof_client_selection.ipynb",
                 "tests/test_checkpoint.py")


def pytest_collection_modifyitems(config, items):
    """Mark the tests listed in tests/slow_tests.txt slow (measured), so `pytest -m "not slow"` is the fast lane; and
    collect the LONGEST_FILES first, in their order (each file's tests keep theirs)."""
    for item in items:
        if any(item.nodeid == s or (item.nodeid.startswith(s) and "[" in s) for s in _SLOW):
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(LONGEST_FILES)))  # stable


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
