"""The seed papers' protocols as configs (fedlib.papers)."""
import csv

import pytest

from fedlib import paths
from fedlib.papers import fedcr, fedrd

pytestmark = pytest.mark.usefixtures("cpu_keys")  # the CPU's keys, on a GPU machine too


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
    (Config.fast_engine, 2026-11-25), and again when it took Config.skip_finished (its Dirichlet 0.1 clients hold 118 to
    1517 images, so most local steps had clients with nothing left to train): the same mathematics in other
    summation orders; no FedRD run was shipped either time."""
    quick = {"FedAvg": "ce461c00f478bee4", "FedProx": "4fac99351c35dabc", "FedNova": "a91b6a0200c2b030",
             "FedDM": "d8890fd279b5ddd4", "FedRD": "b65564e03ca736fc"}
    paper = {"FedAvg": "66deed885a1e92c7", "FedProx": "2d49c239e2cf670c", "FedNova": "0d5665ae91a72b02",
             "FedDM": "b2cff10f4878ace0", "FedRD": "586dac3c8cb8d240"}
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
        cfg = fedcr.config("mnist", label, "n1", seed=0, rounds=2, width=64, dim=8)
        assert (cfg.lr, cfg.clip_grad_norm) == (lr, 10.0), label
        cfg = fedcr.config("fashion_mnist", label, "n1", seed=0, rounds=2, width=64, dim=8)  # Ditto's screened there
        assert (cfg.lr, cfg.clip_grad_norm) == (fedcr.TUNED_LR.get((label, "fashion_mnist"), lr), 10.0), label
    assert fedcr.config("fashion_mnist", "FedAvg", "n1", seed=0, rounds=2, width=64, dim=8).lr == 0.1  # screened
    assert fedcr.config("mnist", "FedAvg", "n1", seed=0, rounds=2, width=64, dim=8).lr == 0.01  # the README's
    assert fedcr.config("fashion_mnist", "Ditto", "n1", seed=0, rounds=2, width=64, dim=8).final_finetune_epochs == 10
