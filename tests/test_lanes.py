"""The test command's order: its longest files are handed to the workers first (tests/conftest.py, run_tests.sh)."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
conftest = sys.modules.get("conftest") or pytest.importorskip("conftest")


class _Item:
    def __init__(self, nodeid):
        self.nodeid, self.markers = nodeid, []

    def add_marker(self, marker):
        self.markers.append(marker)


def test_the_longest_files_are_collected_first_each_in_its_own_order():
    """Before, the files came in pytest's order (tests/ alphabetically, then notebooks/) and pytest-xdist handed them
    out by their number of tests: test_freshness.py's 646 s started about a third of the way into a clean clone's
    run and one worker waited for it at the end."""
    ids = ["tests/test_algorithms.py::test_a", "tests/test_freshness.py::test_x", "tests/test_algorithms.py::test_b",
           "notebooks/02_communication_cost.ipynb::Cell 0", "tests/test_freshness.py::test_y",
           "notebooks/02_communication_cost.ipynb::Cell 1", "tests/test_zeta.py::test_z"]
    items = [_Item(i) for i in ids]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == [
        "tests/test_freshness.py::test_x", "tests/test_freshness.py::test_y",
        "notebooks/02_communication_cost.ipynb::Cell 0", "notebooks/02_communication_cost.ipynb::Cell 1",
        "tests/test_algorithms.py::test_a", "tests/test_algorithms.py::test_b", "tests/test_zeta.py::test_z"]


def test_every_longest_file_exists_and_the_test_command_keeps_the_collected_order():
    missing = [name for name in conftest.LONGEST_FILES if not (ROOT / name).exists()]
    assert not missing, f"tests/conftest.py's LONGEST_FILES names files that are gone: {missing}"
    assert len(set(conftest.LONGEST_FILES)) == len(conftest.LONGEST_FILES)
    line = next(x for x in (ROOT / "run_tests.sh").read_text().splitlines() if x.strip().startswith("parallel=(-n"))
    assert "--no-loadscope-reorder" in line  # else pytest-xdist reorders the files by their number of tests
