"""Each method file of fedlib/algorithms/ pinned by the digest of its source, beside its `version`: an edit fails
this test until the pin is updated in the same commit, with a version bump if the numbers change, or without one if
they do not, which the freshness replay of that method's shipped runs confirms (`python -m fedlib check`). At run
time a result in the local results cache whose recorded digest differs from its file's is computed again."""
from __future__ import annotations

import json

import pytest

from fedlib import algorithms, cache
from fedlib import experiments as ex

PINNED = {  # method -> (version, source digest of its file)
    "csfl": (4, "a615ed5f07f7c8e8"),  # csfl.py
    "ditto": (1, "52587a5fb02e17df"),  # ditto.py
    "fedavg": (1, "3eac4c6deba4c954"),  # fedavg.py
    "fedbabu": (1, "21cc778b24642b25"),  # fedbabu.py
    "fedcr": (1, "3785dfecc4a8ccec"),  # fedcr.py
    "fedcr_na": (1, "3785dfecc4a8ccec"),  # fedcr.py
    "feddbe": (3, "f3ea1ce9ce547387"),  # feddbe.py
    "feddm": (1, "7d8f895e205abcc3"),  # feddm.py
    "fedlog": (1, "b30d3030eb1b96f4"),  # fedlog.py
    "fedlog_c": (1, "b30d3030eb1b96f4"),  # fedlog.py
    "fednova": (1, "1eeb1a2ebd8970f4"),  # fednova.py
    "fedper": (1, "654bba487c8224b9"),  # fedper.py
    "fedpac": (1, "ebe7d57c7b81a60e"),  # fedpac.py (new: no run shipped yet)
    "fedprof": (1, "35bdfe0fcefae7c8"),  # fedprof.py
    "fedproto": (1, "23b500caf7ddb690"),  # fedproto.py
    "fedprox": (1, "a2901c077441ad0c"),  # fedprox.py
    "fedrd": (1, "3c864e71d11dfa49"),  # fedrd.py
    "fedrep": (1, "df88552ccfeaf4b3"),  # fedrep.py
    "lg_fedavg": (1, "3eac4c6deba4c954"),  # fedavg.py
    "local": (1, "3eac4c6deba4c954"),  # fedavg.py
}


def test_every_method_file_is_pinned_beside_its_version():
    now = {name: (getattr(cls, "version", None), algorithms.source_digest(cls))
           for name, cls in algorithms.REGISTRY.items() if cls.__module__.startswith("fedlib.")}
    moved = {name: (PINNED.get(name), got) for name, got in now.items() if PINNED.get(name) != got}
    assert not moved, (f"edited method files (pinned, now): {moved}; update PINNED in the same commit, bumping the "
                       f"method's version if its numbers change (confirm with `python -m fedlib check` if they do not)")


def _cfg(**kw):
    return ex.Config(**{**dict(method="fedavg", dataset="mnist", n_clients=4, train_fraction=0.005, rounds=2,
                               local_epochs=1, seed=0), **kw})


def test_a_cached_result_whose_method_file_changed_is_computed_again(monkeypatch, capsys):
    """Before, a result cached before an edit of its method's file was served as it was. Now it records the file's
    digest, and a result whose digest is not the file's is computed again (and said so); a result recorded before
    the digest existed is served as it is."""
    cfg = _cfg()
    first = ex.run(cfg, progress=False)
    stored = json.loads(cache.path(cfg).read_text())
    assert stored["method_source"] == algorithms.source_digest(algorithms.REGISTRY["fedavg"])
    cache.path(cfg).write_text(json.dumps({**stored, "method_source": "0" * 16}))
    computed = []
    real = ex._compute
    monkeypatch.setattr(ex, "_compute", lambda *a, **k: computed.append(1) or real(*a, **k))
    again = ex.run(cfg, progress=False)
    assert computed == [1] and again["rounds"]["acc_mean"] == first["rounds"]["acc_mean"]
    assert "has changed since" in capsys.readouterr().err
    unrecorded = {k: v for k, v in json.loads(cache.path(cfg).read_text()).items() if k != "method_source"}
    cache.path(cfg).write_text(json.dumps(unrecorded))
    ex.run(cfg, progress=False)
    assert computed == [1]  # served: recorded before the digest existed


def _one_round(r):  # every per-round list cut to one round: a 1-round run's numbers under a 2-round config
    return {**r, "rounds": {k: v[:1] for k, v in r["rounds"].items()}}


@pytest.mark.parametrize("damage, why", [(_one_round, "one value per round"),
                                         (lambda r: {**r, "client_acc": [0.5]}, "client_acc")])
def test_a_result_of_another_shape_is_not_served(damage, why, capsys):
    """Before, a cached result with this run's config and key but another run's numbers was served: a 1-client run's
    accuracies for a 4-client config, or a round entry that is not a list (KeyError: -1 later)."""
    cfg = _cfg()
    ex.run(cfg, progress=False)
    cache.path(cfg).write_text(json.dumps(damage(json.loads(cache.path(cfg).read_text()))))
    assert cache.load(cfg) is None and why in capsys.readouterr().err
