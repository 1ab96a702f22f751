"""Notebook 06's numbers made from its reads, which its figures draw and its claims judge: Table 2's runs by column
(`table2_runs`), FedCR's final accuracy at each V and beta (`sweep_finals`), Table 9's runs seed by seed
(`table9_runs`), part G's rows (`seed_system_runs`) and the cross-checks' curves (`against_their_code`). Each names
what is missing with its command when `say` (the figures' call; the claims read the same silently)."""
from __future__ import annotations

import json
from typing import NamedTuple

from .... import experiments as ex
from .. import plans, protocol
from . import final


def table2_runs(n1, n2, say: bool = True) -> tuple[dict, list[dict], dict]:
    """Table 2 from the readings of its n1 and n2 parts: (dataset, partition) -> label -> Results of the methods whose
    runs are all there, None for a column with none of them; the methods with no run in a column that has some; and
    the methods shipped in part, (dataset, partition) -> label -> Results seed by seed (None for a seed not there),
    which the table shows over the seeds there and the claims read as "indicative (k seeds)"."""
    S, table, absent, partial = n1.settings, {}, [], {}
    for d, q in plans.columns_here(S):
        read = n1 if q == "n1" else n2
        by_seed = {lab: read.by_seed((d, lab)) for lab in plans.labels(S, (d, q))}
        table[(d, q)] = {lab: rs for lab, rs in by_seed.items() if None not in rs} or None
        partial[(d, q)] = {lab: rs for lab, rs in by_seed.items() if None in rs and any(r is not None for r in rs)}
        left = [lab for lab, rs in by_seed.items() if None in rs]
        absent += [dict(dataset=protocol.SHOWN[d], partition=q, method=lab) for lab in left
                   if table[(d, q)] and lab not in partial[(d, q)]]
        if left and say:
            print(read.note([(d, lab) for lab in left], f"Table 2 ({protocol.SHOWN[d]} {q})"
                            f"{': ' + ', '.join(left) if table[(d, q)] else ''}",
                            drawn="drawn in part" if partial[(d, q)] else "not drawn"))
    return table, absent, partial


def sweep_finals(dims, betas, say: bool = True) -> dict:
    """Parts C and D: FedCR's final accuracy on n1 at each V and each beta, seed by seed: (name, dataset, value) ->
    [per seed, None for a seed not there], for the values with at least one seed there (a value shipped in part is
    read as far as it is, and named; one with none is named and left out)."""
    out = {}
    for name, read in (("dim", dims), ("beta", betas)):
        short: dict[str, list] = {}  # dataset -> the values with a seed not there: one line each dataset
        for d, v in read.keys():
            rs = read.by_seed((d, v))
            if any(r is None for r in rs):
                short.setdefault(d, []).append((d, v))
            if any(r is not None for r in rs):
                out[(name, d, v)] = [final(r) if r is not None else None for r in rs]
        for d, keys in short.items() if say else ():
            values = ", ".join(f"{v:g}" for _, v in keys)
            print(read.note(keys, f"FedCR at {name} = {values} ({d})",
                            drawn="drawn in part" if any((name, d, v) in out for _, v in keys) else "not drawn"))
    return out


def table9_runs(read, say: bool = True) -> dict:
    """Part F: (k, label) -> its Results seed by seed (None for a seed not there; the claims pair the seeds both
    sides have), for the entries with a seed there."""
    S = read.settings
    if not read.keys():
        return {}
    keys = [(k, lab) for k in S.table9.ks for lab in protocol.NONAGGREGATE]
    table = {key: read.by_seed(key) for key in keys}
    if say and any(None in rs for rs in table.values()):
        print(read.note([key for key in keys if None in table[key]], "Table 9", drawn="drawn in part"))
    return {key: rs for key, rs in table.items() if any(r is not None for r in rs)}


def seed_system_runs(systems, baselines, say: bool = True) -> dict:
    """Part G: label -> Results of FedCR and FedCR-NA in FedLog's MNIST Table 1 setting and of FedAvg, FedPer,
    FedProto and FedLog-C (their shipped paper-setting runs, read for their first rounds); empty unless all there."""
    g, t1 = systems.settings, {}
    if not systems.keys():
        return t1
    for lab in plans.SEED_BASELINE_LABELS:
        rs = baselines[lab]
        t1[lab] = rs if g.over or rs is None else [ex.first_rounds(r, g.rounds) for r in rs]
    for lab in ("FedCR", "FedCR-NA"):
        t1[lab] = systems[lab]
    if any(rs is None for rs in t1.values()):
        for read, what in ((systems, ""), (baselines, ": FedLog's rows")):
            if say and not read.whole():
                print(read.note(what=f"FedCR in FedLog's Table 1 setting{what}"))
        return {}
    return t1


class CrossSetting(NamedTuple):
    """A cross-check's federation and codes, as its script wrote them beside its CSV (.json): the clients, the share
    taking part in a round, the rounds, the other code's commit, our Config in words, and the FedPAC check's width,
    learning rate and local epochs (None where the script does not say)."""
    clients: int
    participation: float
    rounds: int
    authors_commit: str
    our_config: str
    width: int = 1024
    lr: float | None = None
    local_epochs: int | None = None


def against_their_code(path, method: str, metric: str) -> tuple[dict, CrossSetting | dict]:
    """Part H: (the curves in points, the settings) of `method`'s cross-check against another code, from its CSV at
    `path` (and the .json beside it); both empty when the file is missing."""
    from ...fedlog.analysis import crosscheck as xc

    curves = xc.curves(path, model=method, metric=metric)
    if not curves:
        return {}, {}
    written = json.loads(path.with_suffix(".json").read_text())[method]
    return curves, CrossSetting(**{k: v for k, v in written.items() if k in CrossSetting._fields})
