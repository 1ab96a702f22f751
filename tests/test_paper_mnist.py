"""Correctness before speed: the paper's MNIST setting (50 clients, 2 classes each, 5% of the training data)."""
from fedlib import experiments as ex
from fedlib.papers import fedlog


def test_fedlog_reaches_97_percent_within_10_rounds():
    # the paper: 98.15 +- 0.05 after 100 rounds, 97% after about 2 rounds
    res = ex.run(fedlog.paper_config("mnist", "fedlog", rounds=10), cache=False, progress=False)
    assert max(res["rounds"]["acc_mean"]) >= 0.97
    assert res["rounds"]["up_bits"][0] == 50 * 511 * 32


def test_the_paper_setting_is_table_a3s():
    cfg = fedlog.paper_config("mnist", "fedlog")
    assert (cfg.n_clients, cfg.classes_per_client, cfg.train_fraction, cfg.rounds, cfg.local_epochs, cfg.batch_size,
            cfg.lr, cfg.optimizer) == (50, 2, 0.05, 100, 5, 10, 1e-3, "adam")


def test_table1s_standard_errors_are_the_papers_text():
    """fedlog.TABLE1_SE, typed from Table 1's "mean +- SE" (10 seeds): spot checks against the paper's text."""
    from fedlib.papers import fedlog

    assert fedlog.TABLE1_SE["mnist"]["FedLog"] == 0.05 and fedlog.TABLE1_SE["mnist"]["FedLog-C"] == 0.07
    assert fedlog.TABLE1_SE["cifar10"]["CS-FL"] == 1.08 and fedlog.TABLE1_SE["cifar100"]["FedDBE"] == 0.85
    assert all(set(fedlog.TABLE1_SE[d]) == set(fedlog.TABLE1[d]) for d in fedlog.TABLE1)
