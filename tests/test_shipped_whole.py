"""Every run set, once shipped whole, gives its tables' claims a verdict.

Each notebook's paper profile is run in this process (its .py, as the redraw runs it), with every run of its sets
that is not shipped yet standing in as a made-up result (`cache.load` answers for those keys; shipped runs are read
as they are). Each table or figure a set names must then get at least one row that is judged. Before, notebooks
stopped or drew nothing in the paper profile once a set would land: notebook 06 asked Table 2 for methods its sets
do not run and formatted Ditto's lambda None in a caption, 07 stopped at Table I, 02 stopped on FashionMNIST and read
it at 10 seeds against its set's 5. Run sets are declared in the papers' plans (`fedlib.papers.RUN_SETS`)."""
import os
import runpy
import warnings
from dataclasses import asdict
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest

from fedlib import cache, claims, papers, paths
from fedlib import experiments as ex

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted({s.notebook for s in papers.RUN_SETS.values()})


def made_up(cfg) -> dict:
    """A run's result with the fields a notebook reads, its numbers drawn from the config's key (so seeds differ)."""
    rng = np.random.default_rng(int(cfg.key()[:8], 16))
    acc = np.clip(np.linspace(0.5, 0.9, cfg.rounds) + rng.normal(0, 0.01, cfg.rounds), 0, 1).tolist()
    n, rounds = cfg.n_clients, cfg.rounds
    out = {"config": asdict(cfg), "key": cfg.key(), "wall_s": 1.0, "device": "cpu",
           "rounds": {"acc_mean": acc, "acc_all": acc, "loss": [1 - a for a in acc], "train_loss": [1 - a for a in acc],
                      "up_bits": [1e6] * rounds, "down_bits": [1e6] * rounds, "seconds": [1.0] * rounds,
                      "participants": [max(1, int(n * cfg.participation))] * rounds},
           "client_acc": np.clip(acc[-1] + rng.normal(0, 0.02, n), 0, 1).tolist()}
    if cfg.final_finetune_epochs:
        out["final"] = {"acc_mean": acc[-1] + 0.01, "acc_all": acc[-1] + 0.01, "client_acc": out["client_acc"],
                        "loss": 0.1, "train_loss": 0.1, "up_bits": 0, "down_bits": 0}
    if "flexible" in cfg.model:
        out["client_kind"] = ["small" if i % 2 else "large" for i in range(n)]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_run_set_shipped_whole_gives_its_claims_a_verdict(notebook, monkeypatch, tmp_path):
    if not (ex.dataset_available("mnist") and ex.dataset_available("fashion_mnist")):
        pytest.skip("MNIST and FashionMNIST are needed (python -m fedlib fetch-data)")
    sets = [s for s in papers.RUN_SETS.values() if s.notebook == notebook]
    keys = {cfg.key() for s in sets for _, cfg in s.runs()}
    real = cache.load
    monkeypatch.setattr(cache, "load", lambda cfg: real(cfg) or (made_up(cfg) if cfg.key() in keys else None))
    for knob in ("FEDLIB_COMPUTE", "FEDLIB_DATASETS", "FEDLIB_SEEDS", "FEDLIB_PARTS", "FEDLIB_METHODS"):
        monkeypatch.delenv(knob, raising=False)
    monkeypatch.setenv("FEDLIB_PROFILE", "paper")
    monkeypatch.chdir(ROOT / "notebooks")  # where papermill runs them
    for name in ("_active", "_lab"):  # the notebook's `paths.use_profile` sets them: restored for the tests after this
        monkeypatch.setattr(paths, name, getattr(paths, name))
    with warnings.catch_warnings(), matplotlib.rc_context():  # and its `plots.style()`
        warnings.simplefilter("ignore")
        runpy.run_path(str(ROOT / "notebooks" / f"{notebook}.py"), run_name="__main__")
    plt.close("all")
    rows = [r for path in (Path(os.environ["FEDLIB_FIGURES"]) / "claims").glob(f"{notebook}_*.csv")
            for r in claims.read(path)]
    checked = 0
    for s in sets:  # each claim names the run set it reads (its part column), never found by its table's name
        named = [r for r in rows if r["part"] == s.name and not r["note"].startswith(claims.NOT_JUDGED)]
        if named:  # a set some claim reads (the augmentation ablation and FedDBE's kappa probe name none)
            checked += 1
            assert any(r["verdict"] != claims.MISSING for r in named), \
                f"{s.name}: no judged row with its runs all there"
    assert checked, f"{notebook}: no claim reads any of its run sets"
