"""Every row of the papers' own kinds quotes its paper: each quote of a committed claims file, and each quote the
papers' modules hold, is one of those verified against the papers' text (fedlib/papers/quotes_verified.json, written
by `python -m fedlib.papers.quotes PAPERS_DIR`); where the texts are at hand (../shared/seeds), each is found there again."""
import pytest

from fedlib import claims, paths
from fedlib.papers import quotes


COMMITTED = paths.project_root() / "figures" / "claims"  # the committed ledgers (tests write theirs elsewhere)


def test_every_committed_row_of_the_papers_kinds_has_a_quote_that_was_found_in_its_paper():
    rows = quotes.row_quotes(COMMITTED)
    assert rows and all(q.strip() for _, q in rows)
    unverified = [(p, q) for p, q in rows if quotes.digest(p, q) not in quotes.verified()]
    assert not unverified, f"quotes not verified against their paper (python -m fedlib.papers.quotes): {unverified[:3]}"


def test_every_quote_the_papers_modules_hold_was_found_in_its_paper():
    unverified = [(p, q) for p, q in quotes.code_quotes() if quotes.digest(p, q) not in quotes.verified()]
    assert not unverified, unverified[:3]


def test_a_quote_is_looked_up_ignoring_case_and_runs_of_whitespace(tmp_path):
    for name, f in quotes.paper_files().items():
        (tmp_path / f).write_text("The  results show\nFedLog CAN achieve $\\epsilon \\geq 0.5$ here.")
    pairs = [("FedLog", "the results show fedlog can achieve"), ("FedLog", "$\\epsilon \\geq 0.5$ here"),
             ("FedLog", "the results show FedProto"), ("FedNone", "the results")]
    assert quotes.missing(pairs, tmp_path) == pairs[2:]
    assert quotes.digest("FedLog", "A  b") == quotes.digest("FedLog", "a b") != quotes.digest("FedCR", "a b")


def test_where_the_papers_texts_are_at_hand_every_quote_is_found_again():
    where = quotes.default_papers_dir()
    if not all((where / f).is_file() for f in quotes.paper_files().values()):
        pytest.skip(f"the papers' texts are not at {where} (the digests above still check every quote)")
    assert quotes.missing(sorted(set(quotes.code_quotes() + quotes.row_quotes(COMMITTED))), where) == []


def test_the_ledgers_normalisation_is_the_quotes_one():
    assert claims.normalized is quotes.normalized
