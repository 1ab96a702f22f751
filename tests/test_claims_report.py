"""fedlib.claims.report: the claims page (figures/claims.md) from the collected rows."""
from fedlib.claims import report
from fedlib.claims import rules as R


def _row(claim, verdict, seeds="", margin="", kind="marker"):
    return {"paper": "FedLog", "where": "Table 1 (mnist)", "claim": claim, "kind": kind, "quote": "q",
            "verdict": verdict, "seeds": seeds, "rounds": "100", "scale": "paper", "margin": margin, "se": "",
            "p": "", "toward": "", "note": "", "run_set": "", "holm": ""}


def test_a_row_not_run_yet_is_listed_as_waiting_even_when_one_side_has_its_seeds():
    """Table 1's FedDBE rows had FedDBE's 10 seeds and not FedLog-C's: the row read "not run yet" inside the table of
    judged markers, with no margin and no p; it belongs to the one line of rows not judged yet."""
    rows = [_row("FedDBE's accuracy below FedLog-C's (⇓)", R.MISSING, seeds="10"),
            _row("FedAvg's accuracy below FedLog-C's (⇓)", R.AGREES, seeds="10", margin="-5.0")]
    md = "\n".join(report._kind_tables(rows, {}))
    table, waiting = md.split("not judged yet")
    assert "FedAvg's accuracy" in table and "FedDBE's accuracy" not in table
    assert "FedDBE's accuracy" in waiting
