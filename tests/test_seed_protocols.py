"""The seed papers' protocols as configs (fedlib.papers)."""
import csv

import pytest

from fedlib import paths
from fedlib.papers import fedcr, fedrd


def test_fedrds_protocol_follows_sec_v_a():
    rd = fedrd.config("fashion_mnist", "FedRD", seed=0)
    assert (rd.model, rd.n_clients, rd.participation, rd.pool_split, rd.partition, rd.dirichlet_alpha, rd.rounds,
            rd.optimizer, rd.lr, rd.batch_size, rd.local_epochs) == ("fedrd_proj2_convnet128", 10, 1.0, 0.8,
                                                                     "dirichlet", 0.1, 20, "adam", 0.01, 256, 10)
    nova = fedrd.config("fashion_mnist", "FedNova", seed=0, width=32, lr=0.05, momentum=0.9, local_epochs=5)
    assert (nova.model, nova.optimizer, nova.momentum, nova.lr, nova.local_epochs) == ("convnet32", "sgd", 0.9, 0.05, 5)
    assert fedrd.config("mnist", "FedAvg", seed=0).options == {"weighted": True}
    with pytest.raises(ValueError, match="choose from"):
        fedrd.config("mnist", "FedSGD", seed=0)


def test_the_baselines_frozen_settings_are_the_best_of_the_committed_search():
    with open(paths.project_root() / "figures" / "fedrd_search.csv") as f:
        rows = list(csv.DictReader(f))
    grid = len(fedrd.GRID["lr"]) * len(fedrd.GRID["momentum"]) * len(fedrd.GRID["local_epochs"])
    assert len(rows) == 3 * grid + len(fedrd.MU_GRID) - 1  # FedProx's default mu is a point of its mu grid
    for label in ("FedAvg", "FedProx", "FedNova"):
        best = max((r for r in rows if r["label"] == label), key=lambda r: float(r["final_acc"]))
        want = dict(lr=float(best["lr"]), momentum=float(best["momentum"]), local_epochs=int(best["local_epochs"]))
        if label == "FedProx":
            want["mu"] = float(best["mu"])
        assert fedrd.SEARCHED[label] == want, label
        cfg = fedrd.config("fashion_mnist", label, seed=0)
        assert (cfg.lr, cfg.momentum, cfg.local_epochs) == (want["lr"], want["momentum"], want["local_epochs"])
        assert cfg.options.get("mu") == want.get("mu")
        # the notebook's quick runs are the search's runs, so they come from its cache
        mu = want.get("mu")
        searched = {**fedrd.search_configs("fashion_mnist"),
                    **fedrd.search_configs("fashion_mnist", prox_at={k: want[k] for k in want if k != "mu"})}
        key = (label, want["lr"], want["momentum"], want["local_epochs"], mu)
        assert fedrd.scaled("fashion_mnist", label, "quick", seed=0).key() == searched[key].key()


def test_fedrds_quick_and_paper_cache_keys_are_pinned():
    """Notebook 07's runs stay valid while the code around them changes (a change of their numbers bumps the
    method's version, which changes these keys on purpose). Remade when FedRD's protocol took the engine's fast path
    (Config.fast_engine, 2026-11-25): the same mathematics in other summation orders; no FedRD run was shipped."""
    quick = {"FedAvg": "93787ceef0304f4d", "FedProx": "83d2f6cbe2ff41e7", "FedNova": "54f23eec3b05fb0b",
             "FedDM": "e9e0e13b42f64c47", "FedRD": "62a7054a4a2c118b"}
    paper = {"FedAvg": "76c2e9c69d5ffe03", "FedProx": "fcde2266b5acbd2c", "FedNova": "5bd03fb867ea8cf7",
             "FedDM": "b6ee4ff55dba40dd", "FedRD": "b4fdb34d60ce8041"}
    assert {lab: fedrd.scaled("fashion_mnist", lab, "quick", seed=0).key() for lab in quick} == quick
    assert {lab: fedrd.config("fashion_mnist", lab, seed=0).key() for lab in paper} == paper


def test_fedrd_condenses_30_per_class_on_three_channel_data_in_the_paper_profile():
    # Sec. V.A: 30 on SVHN, CIFAR-10 and CIFAR-100, so that FedRD's uplink equals FedDM's (10 images per class)
    assert fedrd.scaled("cifar10", "FedRD", "paper", seed=0).options["dpc"] == 30
    assert fedrd.scaled("cifar100", "FedRD", "paper", seed=0).options["dpc"] == 30
    assert fedrd.scaled("cifar10", "FedDM", "paper", seed=0).options["dpc"] == 10
    assert fedrd.scaled("fashion_mnist", "FedRD", "paper", seed=0).options["dpc"] == 10  # d = d' = 784
    assert fedrd.scaled("cifar10", "FedRD", "quick", seed=0).options["dpc"] == 10


def test_fedcrs_protocol_gives_each_method_its_authors_rate_and_clips_every_step():
    for label, lr in fedcr.LR.items():
        cfg = fedcr.config("fashion_mnist", label, "n1", seed=0, rounds=2, width=64, dim=8)
        assert (cfg.lr, cfg.clip_grad_norm) == (lr, 10.0), label
    assert fedcr.config("fashion_mnist", "FedAvg", "n1", seed=0, rounds=2, width=64, dim=8).lr == 0.01
    assert fedcr.config("fashion_mnist", "Ditto", "n1", seed=0, rounds=2, width=64, dim=8).final_finetune_epochs == 10
