"""A profile chosen in one test does not reach the next (tests/conftest.py restores fedlib.paths' choice)."""
from fedlib import paths


def test_a_notebook_run_by_hand_chooses_the_lab_profile():
    assert paths.use_profile(paths.LAB) == "quick" and paths._lab


def test_the_next_test_starts_with_no_profile_chosen(monkeypatch):
    """Before, the test above left the LAB choice to every later test of its worker: a claims test after
    tests/test_reliability.py's notebook run by hand found its claims page under build/lab/, not build/quick/."""
    monkeypatch.delenv("FEDLIB_PROFILE", raising=False)
    assert not paths._lab and paths.active_profile() is None
