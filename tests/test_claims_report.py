"""fedlib.claims.report: the claims page (figures/claims.md) from the collected rows."""
from fedlib.claims import report
from fedlib.claims import rules as R


def _row(claim, verdict, seeds="", margin="", kind="marker"):
    return {"paper": "FedLog", "where": "Table 1 (mnist)", "claim": claim, "kind": kind, "quote": "q",
            "verdict": verdict, "seeds": seeds, "rounds": "100", "scale": "paper", "margin": margin, "se": "",
            "p": "", "toward": "", "note": "", "part": "", "holm": ""}


def test_a_row_not_run_yet_is_listed_as_waiting_even_when_one_side_has_its_seeds():
    """Table 1's FedDBE rows had FedDBE's 10 seeds and not FedLog-C's: the row read "not run yet" inside the table of
    judged markers, with no margin and no p; it belongs to the one line of rows not judged yet."""
    rows = [_row("FedDBE's accuracy below FedLog-C's (⇓)", R.MISSING, seeds="10"),
            _row("FedAvg's accuracy below FedLog-C's (⇓)", R.AGREES, seeds="10", margin="-5.0")]
    md = "\n".join(report._kind_tables(rows, {}))
    table, waiting = md.split("::::{dropdown}")
    assert "FedAvg's accuracy" in table and "FedDBE's accuracy" not in table
    assert "FedDBE's accuracy" in waiting


def test_a_tables_tex_and_html_cells_read_as_text_on_the_page():
    assert report._plain("$98.18 \\pm 0.06^{\\Downarrow}$") == "98.18 ± 0.06⇓"
    assert report._plain("$4.81 \\pm 0.31 \\text{Mb}^{\\uparrow}$") == "4.81 ± 0.31 Mb↑"
    assert report._plain("$0.16\\pm0.07\\mathrm{Gb}^{\\uparrow}$") == "0.16±0.07Gb↑"
    assert report._plain("89.76±0.69 <sup>↓</sup>") == "89.76±0.69 ↓"
    assert report._plain("$93.01 {\\pm} 0.26^{\\pitchfork}$") == "93.01 ± 0.26⋔"


def test_waiting_claims_with_the_same_ablation_verdict_share_one_line_and_the_direction_column_is_short():
    waiting = [dict(_row(f"{m}'s accuracy below FedLog-C's (⇓)", R.MISSING), note="without augmentation: agrees")
               for m in ("FedAvg", "FedPer")] + [dict(_row("FedRep 1's accuracy below FedLog-C's (⇓)", R.MISSING),
                                                      note="without augmentation: opposite")]
    lines = [x for x in report._kind_tables(waiting, {}) if x.startswith("- ")]
    assert lines == ["- Table 1 (mnist), **not run: missing data** (without augmentation: agrees): FedAvg's accuracy "
                     "below FedLog-C's (⇓); FedPer's accuracy below FedLog-C's (⇓)",
                     "- Table 1 (mnist), **not run: missing data** (without augmentation: opposite): FedRep 1's "
                     "accuracy below FedLog-C's (⇓)"]
    assert report._toward({"toward": "9/10 seeds, smallest +0.17"}) == "9/10, +0.17"
    assert report._toward({"toward": ""}) == "-"


def test_a_tables_name_is_written_once_for_a_run_of_its_rows():
    rows = [_row(f"{m}'s accuracy below FedLog-C's (⇓)", R.AGREES, seeds="10", margin="-1.0") for m in ("A", "B")]
    rows.append({**_row("C's accuracy below FedLog-C's (⇓)", R.AGREES, seeds="10", margin="-1.0"),
                 "where": "Table A.1 (mnist, 3 classes per client)"})
    table = [x for x in report._kind_tables(rows, {}) if x.startswith("| ") and "accuracy below" in x]
    assert [x.split(" | ")[0] for x in table] == ["| Table 1 (mnist)", "| ", "| Table A.1 (mnist, 3 classes per client)"]


def test_the_other_regimes_verdict_has_its_own_column_and_the_cell_says_when_they_differ():
    """Table 1's main claim had the note "the strongest other entry: FedProto; depends on augmentation: with it within
    noise, without it does not hold". The regime words once filled the verdict cell (3-9 lines a row, 21 screens of
    the page); now the verdict cell says the verdict and that it depends on augmentation, the other regime's verdict
    stands in its own column, and the rest of the note goes to the paper's notes page."""
    regime = "depends on augmentation: with it within noise, without it does not hold"
    row = dict(_row("FedLog-C is more accurate than the strongest other entry (best round)", R.WITHIN, seeds="10",
                    margin="0.008", kind="claim"), note=f"the strongest other entry: FedProto; {regime}")
    assert report._verdict_cell(row, {}) == f"{R.WITHIN}; depends on augmentation"
    assert report._other_regime(row) == f"without augmentation: {R.FAILS}"
    assert report._other_regime(dict(row, verdict=R.FAILS)) == f"with crop-and-flip: {R.WITHIN}"
    assert report._long_note(row) == "the strongest other entry: FedProto"
    short = dict(row, note="without augmentation: agrees")  # a short regime note: the column, not the cell
    assert report._verdict_cell(short, {}) == R.WITHIN and report._other_regime(short) == short["note"]
    assert report._long_note(short) == ""
    other = dict(row, note="x" * 70)  # a long note with no regime part goes to the notes page
    assert report._verdict_cell(other, {}) == R.WITHIN and report._long_note(other) == "x" * 70
    assert report._other_regime(other) == ""
    table = [x for x in report._rows_table("*t*", [row, short], {}) if x.startswith("| ")]
    assert table[0].split(" | ")[3] == "without augmentation"  # the regime named once, in the header
    assert table[1].split(" | ")[3] == R.FAILS and table[2].split(" | ")[3] == "agrees"


def test_a_row_both_regimes_fail_names_the_other_reading_and_keeps_both_on_the_notes_page():
    both = ("not reproduced in either regime: with crop-and-flip +0.008 ± 0.029 (95% CI -0.06 to +0.07) (not "
            "reproduced (a tie)), without augmentation -0.159 ± 0.036 (95% CI -0.24 to -0.08) (does not hold)")
    row = dict(_row("FedLog-C is more accurate", R.FAILS, seeds="10", margin="-0.159", kind="claim"),
               note=f"the strongest other entry: LG-FedAvg 2; {both}")
    assert report._verdict_cell(row, {}) == f"{R.FAILS}; not reproduced in either regime"
    assert report._other_regime(row).startswith("with crop-and-flip +0.008 ± 0.029 (95% CI")
    assert report._other_regime(dict(row, margin="0.008")).startswith("without augmentation -0.159")
    assert report._long_note(row) == "the strongest other entry: LG-FedAvg 2"
    assert f"- {report._md(both)} (Table 1 (mnist)" in "\n".join(report._details([row], {}))  # whole, on its page


def test_only_decided_rows_stand_in_the_tables_and_the_rest_fold_into_one_dropdown_per_scale():
    """The claims page was 21 screens of 1,280 x 900; a reader scans for what holds and what does not. Rows that hold
    or differ stand in the tables; rows not decided (within noise, indicative, ...) and those not judged yet are in one
    dropdown per scale that counts them, in tables of the same form."""
    rows = [_row("A's accuracy below FedLog-C's (⇓)", R.AGREES, seeds="10", margin="-1.0"),
            _row("B's accuracy below FedLog-C's (⇓)", R.NOT_SIGNIFICANT, seeds="10", margin="-0.1"),
            _row("C's accuracy below FedLog-C's (⇓)", R.MISSING),
            _row("D is more accurate", R.WITHIN, seeds="10", margin="0.1", kind="claim")]
    md = "\n".join(report._kind_tables(rows, {}))
    shown, folded = md.split("::::{dropdown}")
    assert "A's accuracy" in shown and not any(f"{x}'s accuracy" in shown for x in "BC") and "D is" not in shown
    assert folded.splitlines()[0] == (" Not decided at this scale: 1 statement not decided; 1 significance marker not "
                                      "decided; 1 significance marker not judged yet")
    assert "| B's accuracy" in folded and "C's accuracy" in folded and "| D is" in folded
    assert md.count("::::") == 2 and md.rstrip().endswith("::::")


def test_a_table_whose_rows_share_their_seeds_and_rounds_says_them_once_above_it():
    rows = [_row(f"{m}'s accuracy below FedLog-C's (⇓)", R.AGREES, seeds="10", margin="-1.0") for m in "AB"]
    md = report._rows_table("*t*", rows, {})
    assert "*t*; every row 10 x 100 (seeds x rounds)" in md and "seeds x rounds |" not in md[md.index(":::{table}"):]
    mixed = report._rows_table("*t*", [rows[0], dict(rows[1], seeds="5")], {})
    assert "*t*" in mixed and any(x.endswith("| seeds x rounds |") for x in mixed)


def test_claims_that_read_alike_cut_show_the_words_where_they_differ():
    start = "trained to the local optimum before each aggregation, FedLog and FedLog-C converge faster than LG-FedAvg "
    rows = [dict(_row(start + f"({d}; mean accuracy over rounds, the lower of ours)", R.HOLDS, kind="claim"))
            for d in ("mnist", "fashion_mnist")]
    shown = [report._short_claim(r) for r in report._unique_short(rows)]
    assert shown[0] != shown[1] and "(mnist;" in shown[0] and "(fashion_mnist;" in shown[1]
    assert all(len(x) <= report.SHORT_CLAIM + 6 for x in shown)


def test_a_row_not_run_yet_lists_no_note_below_the_table_and_a_judged_one_does():
    """The notes of rows whose set is shipped in part ("from grid epsilon 5; its runs ... are not all cached or
    shipped") explained no number and took the claims page past its size test. Now only their verdict line stands
    (k of n runs shipped), and claims.csv keeps the note; a judged row's long note and a not-judged row's reason stay."""
    sets = {"dp_fashion_mnist": {"have": 10, "n": 125}}
    waiting = dict(_row("central DP is back", R.MISSING, kind="claim"), part="dp_fashion_mnist",
                   note="from grid epsilon 0.5; its runs are not all cached or shipped" + " x" * 40)
    judged = dict(_row("local DP costs", R.REPORTED, seeds="5", margin="-3.0", kind="claim"),
                  part="dp_fashion_mnist", note="matched epsilon 2.81; from grid epsilon 5" + " y" * 40)
    unfair = dict(_row("central DP on MNIST", R.NOT_JUDGED, kind="claim"), part="dp_fashion_mnist",
                  note=f"{R.NOT_JUDGED}: MNIST's 3,000 records")
    md = "\n".join(report._details([waiting, judged, unfair], sets))
    assert "its runs are not all cached" not in md and "matched epsilon 2.81" in md and "3,000 records" in md
    assert report._verdict(waiting, sets) == "not run yet (10 of 125 runs shipped)"
    shipped = {"dp_fashion_mnist": {"have": 125, "n": 125}}  # a set whole: a missing row's note says why again
    assert "its runs are not all cached" in "\n".join(report._details([waiting], shipped))


def test_a_not_judged_row_is_told_by_its_verdict_not_by_how_its_note_begins():
    """A row of rule `unjudged` whose note gives its reason in plain words (a researcher's own ledger) is shown as not
    judged, with the reason below the table; before, only a note beginning "not judged at this scale: " was."""
    row = dict(_row("DP recovers at the paper's epsilon", R.NOT_JUDGED, kind="claim"),
               note="3,000 records carry 17 times the paper's noise per record")
    assert report._verdict(row, {}) == f"{R.NOT_JUDGED} (why: below)"
    assert report._verdict_cell(row, {}) == f"{R.NOT_JUDGED} (why: below)"
    assert report._long_note(row) == row["note"]


def _full(**kw):
    base = {"paper": "FedLog", "where": "Table 1 (mnist)", "claim": "c", "kind": "claim", "quote": "the words",
            "paper_value": "", "ours": "[98.0, 98.1, 98.2]", "reference": "[97.0, 97.1, 97.0]",
            "rule": '{"kind":"paired","op":">","value":0.0}', "verdict": R.HOLDS, "notebook": "02", "profile": "paper",
            "seeds": "3", "rounds": "100", "scale": "paper", "part": "", "margin": "1.07", "se": "0.03", "p": "0.001",
            "toward": "", "borderline": "False", "says": "", "note": ""}
    return base | kw


def test_the_quotes_and_notes_move_to_a_page_per_paper_and_the_regime_is_said_once(tmp_path):
    """Before, every paper's quotes and notes were folded under its tables on claims.md, which outgrew its 45,000
    bytes; now each paper's are on figures/claims_<paper>.md, linked from its section. A reproduction row shows ours
    and the paper's number beside the difference; the note part that says which regime decides stands once under its
    section's heading."""
    decided = f"{report.REGIME_LINE} Table 1 (mnist) is decided without augmentation: because"
    rows = [_full(note=f"the strongest: X; {decided}"), _full(claim="d", note=decided),
            _full(claim="FedAvg's accuracy is reproduced", kind="reproduction", ours="[93.9, 94.0, 93.9]",
                  reference="[89.76, 0.4]", rule='{"kind":"equivalence","op":"","value":0.5}', margin="4.18",
                  se="0.4", verdict=R.DIFFERS, note="a long note " * 10)]
    written = report.write_collected(rows, tmp_path)
    page, notes = (tmp_path / "claims.md").read_text(), (tmp_path / "claims_fedlog.md").read_text()
    assert tmp_path / "claims_fedlog.md" in written and "(claims_fedlog.md)" in page
    assert "<details>" not in page and '"the words"' not in page and '"the words"' in notes
    assert "a long note" in notes and "a long note" not in page
    assert page.count(decided.split(":")[0]) == 1
    assert "93.94 vs 89.76: +4.18 ± 0.40" in page
