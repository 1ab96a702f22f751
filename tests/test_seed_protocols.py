"""The seed papers' protocols as configs (fedlib.seed_papers)."""
import pytest

from fedlib import seed_papers as sp


def test_fedrds_protocol_follows_sec_v_a():
    rd = sp.fedrd_config("fashion_mnist", "FedRD", seed=0)
    assert (rd.model, rd.n_clients, rd.participation, rd.pool_split, rd.partition, rd.dirichlet_alpha, rd.rounds,
            rd.optimizer, rd.lr, rd.batch_size, rd.local_epochs) == ("fedrd_proj2_convnet128", 10, 1.0, 0.8,
                                                                     "dirichlet", 0.1, 20, "adam", 0.01, 256, 10)
    nova = sp.fedrd_config("fashion_mnist", "FedNova", seed=0, width=32, lr=0.05)
    assert (nova.model, nova.optimizer, nova.momentum, nova.lr, nova.local_epochs) == ("convnet32", "sgd", 0.9, 0.05, 5)
    assert sp.fedrd_config("mnist", "FedAvg", seed=0).options == {"weighted": True}
    with pytest.raises(ValueError, match="choose from"):
        sp.fedrd_config("mnist", "FedSGD", seed=0)
