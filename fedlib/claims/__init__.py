"""The claims: every notebook's verdicts on the papers' claims, as rows computed from numbers.

  rules    the rule kinds (each a value, `Rule`) and the test each runs (`decide`)
  ledger   a notebook's rows (`ClaimsLedger`), their kinds and quotes, reading and checking the files
  report   figures/claims.md and claims.csv: the counts per paper and scale, Holm's correction, one table per scale

`python -m fedlib claims` collects every figures/claims/*.csv into figures/claims.csv and figures/claims.md (run_all.sh
does), recomputing every verdict from its row and refusing a file that is damaged or whose verdicts disagree with
its rules.
"""
from . import rules
from .ledger import (COLUMNS, KINDS, PAPER_KINDS, SCALES, Claim, ClaimsError, ClaimsLedger, collect, devices_note,
                     made_on, normalized, parse, read, rejudge)
from .report import holm, with_holm, write_collected
from .rules import (AGREES, BAND, CENSORED, DELTA, DIFFERS, FAILS, HOLDS, IMPRECISE, LEVEL, MIN_SEEDS, MISSING,
                    NOT_JUDGED, NOT_SIGNIFICANT, OBSERVATION, OPPOSITE, PARTLY, REPORTED, REPRODUCED, TIE, TIES,
                    UNRESOLVED, WITHIN, Rule, comparison, decide, equivalence, marker, observation, paired, paired_p, paired_stats,
                    statement, tolerance, unjudged, verdict)

__all__ = ["AGREES", "BAND", "CENSORED", "COLUMNS", "Claim", "ClaimsError", "ClaimsLedger", "DELTA", "DIFFERS", "FAILS",
           "HOLDS", "IMPRECISE", "KINDS", "LEVEL", "MIN_SEEDS", "MISSING", "NOT_JUDGED", "NOT_SIGNIFICANT",
           "OBSERVATION", "OPPOSITE", "PAPER_KINDS", "PARTLY", "REPORTED", "REPRODUCED", "Rule", "SCALES", "TIE", "TIES",
           "UNRESOLVED", "WITHIN", "collect", "comparison", "decide", "devices_note", "equivalence", "holm", "made_on",
           "marker", "normalized", "observation", "paired", "paired_p", "paired_stats", "parse", "read", "rejudge",
           "rules", "statement", "tolerance", "unjudged", "verdict", "with_holm", "write_collected"]
