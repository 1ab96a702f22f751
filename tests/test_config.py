"""fedlib.config: bad settings are refused when a Config is built, before any data is loaded, with a message that
names the field or option; every other setting runs. And the cache keys: what separates them, and the fields added
later that leave old keys as they were (the pinned keys of the paper settings are in test_reference_numbers.py)."""
import json
import random
from dataclasses import fields

import pytest
import torch

from fedlib import algorithms, config, data
from fedlib import experiments as ex
from fedlib.papers import fedlog

TINY = dict(dataset="mnist", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1)


@pytest.mark.parametrize("field,value", [("rounds", 0), ("rounds", -3), ("batch_size", 0), ("lr", -1.0),
                                         ("lr", float("nan")), ("local_epochs", 0), ("optimizer", "foo"),
                                         ("partition", "foo"), ("model", "foo"), ("train_fraction", 0.0),
                                         ("seed", -1), ("same_init", "yes"), ("device", "gpu7"), ("n_clients", 2.5)])
def test_bad_fields_are_refused_by_name_before_any_data_is_loaded(field, value, monkeypatch):
    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: pytest.fail("data loaded before validation"))
    with pytest.raises(ValueError, match=f"Config.{field}"):
        ex.Config(method="fedavg", **{**TINY, field: value})


@pytest.mark.parametrize("method,options,name", [("fedlog", {"head_solver": "foo"}, "head_solver"),
                                                 ("fedlog_c", {"alpha": -1.0}, "alpha"), ("fedlog", {"nu": -5.0}, "nu"),
                                                 ("fedavg", {"weighted": "yes"}, "weighted"),
                                                 ("fedlog", {"dp": "local", "clip_b": -1.0}, "clip_b"),
                                                 ("fedlog", {"epsilon": "1.0"}, "epsilon"),
                                                 ("lg_fedavg", {"global_layers": 0}, "global_layers")])
def test_bad_method_options_are_refused_by_name_before_training(method, options, name, monkeypatch):
    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: pytest.fail("data loaded before validation"))
    with pytest.raises(ValueError, match=f"{method}: option {name}"):
        ex.Config(method=method, options=options, **TINY)


def test_model_and_data_must_fit():
    with pytest.raises(ValueError, match="Config.model='cnn_cifar' does not fit mnist"):
        ex.Config(method="fedavg", model="cnn_cifar", **TINY)
    with pytest.raises(ValueError, match="Config.augment"):
        ex.Config(method="fedlog", dataset="circle", model="mlp_flexible", augment=True)


# ----------------------------------------------------------------------------- 200 random configs

VALID = {
    "method": sorted(algorithms.REGISTRY),
    "dataset": ["mnist"] * 5 + ["fashion_mnist", "fashion_mnist", "circle", "cifar10", "sent140"],
    "model": ["auto"] * 6 + ["cnn_mnist", "cnn_mnist_flexible", "mlp2", "mlp3", "cnn_cifar", "cnn_mnist_vib_v8"],  # the
    # last one: other methods must refuse it
    "partition": ["pathological", "dirichlet", "dirichlet_client", "iid"], "n_clients": [1, 2, 3, 4], "classes_per_client": [1, 2, 5],
    "dirichlet_alpha": [0.3, 1.0], "train_fraction": [0.005, 0.01], "n_train": [0, 40], "rounds": [1],
    "local_epochs": [1], "local_optimum": [False, True], "augment": [False, False, True], "batch_size": [5, 10],
    "optimizer": ["adam", "sgd"], "lr": [1e-3, 1e-3, 0.05, 1e5], "same_init": [True, False], "seed": [0, 1],
    "device": ["auto", "cpu"], "participation": [1.0, 1.0, 0.5], "lr_decay": [1.0, 0.9], "momentum": [0.0] * 3 + [0.5],
    "weight_decay": [0.0, 1e-4], "final_finetune_epochs": [0, 1], "pool_split": [0.0] * 3 + [0.7],
    "server_fraction": [0.0] * 3 + [0.1], "options": [{}],
}
INVALID = {"method": ["fedfoo"], "dataset": ["imagenet"], "model": ["resnet"], "partition": ["shards"],
           "n_clients": [-1, 1.5], "classes_per_client": [0, 11], "dirichlet_alpha": [0.0, -1.0],
           "train_fraction": [0.0, 2.0], "n_train": [-5], "rounds": [0, -2], "local_epochs": [0],
           "local_optimum": ["no"], "augment": [1], "batch_size": [0], "optimizer": ["rmsprop"], "lr": [0.0, -0.1],
           "same_init": [None], "seed": [-1], "device": ["tpu"], "participation": [0.0, 1.2], "lr_decay": [0.0, 2.0],
           "momentum": [1.0, -0.5], "weight_decay": [-1.0], "final_finetune_epochs": [-1],
           "pool_split": [1.0, -0.2], "server_fraction": [1.0], "options": [{"bogus": 1}, {"lam": -1.0}]}
NAMES = [f.name for f in fields(ex.Config)] + sorted({o for c in algorithms.REGISTRY.values() for o in c.defaults})


def _documented(err: Exception, cfg_kw: dict) -> bool:
    text = str(err)
    if isinstance(err, data.DatasetNotFound):
        return "put" in text.lower() or "download" in text.lower() or "missing" in text.lower()
    if isinstance(err, ex.DivergenceError):
        return cfg_kw["method"] in text and "round" in text
    return isinstance(err, ValueError) and any(name in text for name in NAMES)


def test_random_configs_run_one_round_or_raise_a_documented_error():
    rng = random.Random(20261121)
    outcomes, reasons = {"ran": 0, "refused": 0}, []
    for _ in range(240):  # about a fifth run (every method has its share), the rest are refused
        kw = {k: rng.choice(v) for k, v in VALID.items()}
        if kw["method"].startswith("fedcr"):  # FedCR needs a body with a Gaussian layer; "auto" checks the refusal
            kw["model"] = rng.choice(["cnn_mnist_vib_v8", "cnn_mnist_vib_v8", "auto"])
        if kw["method"] in ("feddm", "fedrd"):  # their paper defaults (1000 matching steps) are GPU work
            kw["options"] = dict(iterations=1, real_batch=4, server_epochs=1)
            if kw["method"] == "fedrd":  # a projection before the task model; "auto" checks the refusal
                kw["model"] = rng.choice(["fedrd_proj1_convnet8", "fedrd_proj1_convnet8", "auto"])
        if kw["method"] == "fedprof":  # it scores clients against the server's own validation set
            kw["server_fraction"] = 0.1
        for k in rng.sample(list(INVALID), rng.choice([0, 0, 0, 1, 2])):
            kw[k] = rng.choice(INVALID[k])
        try:
            cfg = ex.Config(**kw)
            res = ex.run(cfg, cache=False, progress=False)
        except (ValueError, ex.DivergenceError, data.DatasetNotFound) as err:
            assert _documented(err, kw), (kw, repr(err))
            outcomes["refused"] += 1
            reasons.append(str(err)[:60])
            continue
        assert len(res["rounds"]["acc_mean"]) == 1 and torch.isfinite(torch.tensor(res["rounds"]["loss"])).all()
        outcomes["ran"] += 1
    assert outcomes["ran"] >= 40 and outcomes["refused"] >= 40, (outcomes, sorted(reasons))
    assert config.DATASETS  # the list the messages refer to


def test_building_a_config_leaves_torchs_random_state_alone():
    torch.manual_seed(3)
    expected = torch.rand(3)
    torch.manual_seed(3)
    ex.Config(method="fedavg", model="cnn_mnist_flexible", **TINY)  # the model/data fit is checked with a model
    assert torch.equal(torch.rand(3), expected)


def test_a_config_changed_after_it_was_built_is_checked_again_before_running():
    # before: cfg.lr = -0.1 after construction ran and cached garbage
    from fedlib import experiments as ex
    from fedlib.papers import fedlog

    cfg = fedlog.paper_config("mnist", "fedavg", n_clients=4, train_fraction=0.01, rounds=1, local_epochs=1)
    cfg.lr = -0.1
    with pytest.raises(ValueError, match="Config.lr"):
        ex.run(cfg, cache=False, progress=False)


@pytest.mark.parametrize("method", ["feddm", "fedrd"])
@pytest.mark.parametrize("option", [{"server_lr": -0.01}, {"syn_lr": 0.0}, {"syn_momentum": 1.5}])
def test_distillation_options_out_of_range_are_refused_by_name(method, option):
    # before: a negative server learning rate of FedDM / FedRD was accepted and ran
    from fedlib import algorithms

    with pytest.raises(ValueError, match=f"option {next(iter(option))}"):
        algorithms.make(method, **option)


def test_a_train_fraction_that_leaves_clients_a_few_samples_warns():
    # before: a tiny train_fraction silently left 2 samples per client
    from fedlib import experiments as ex
    from fedlib.papers import fedlog

    with pytest.warns(UserWarning, match="only .* training sample"):
        ex.setup(fedlog.paper_config("mnist", "fedavg", n_clients=50, train_fraction=0.002, rounds=1))


def _cfg(seed=0, **kw):
    return ex.Config(**{**dict(method="fedlog", dataset="mnist", n_clients=6, train_fraction=0.005, rounds=2,
                               local_epochs=1, seed=seed), **kw})


def _tiny(method, **kw):
    base = dict(n_clients=10, train_fraction=0.02, rounds=1, local_epochs=1)
    return fedlog.paper_config("mnist", method, **{**base, **kw})


# ----------------------------------------------------------------------------- cache keys

def test_config_hash_separates_settings():
    assert _cfg().key() == _cfg().key()
    assert _cfg().key() != _cfg(seed=1).key()
    assert _cfg().key() != _cfg(options={"head_solver": "gradient"}).key()


def test_fields_added_later_keep_old_cache_keys_until_they_are_used():
    import hashlib
    from dataclasses import asdict

    from fedlib import engine

    cfg = ex.Config(method="fedlog", seed=3)
    legacy = {k: v for k, v in asdict(cfg).items() if k not in config.ADDED_FIELDS}
    legacy.update(device=engine.resolve_device("auto").type, cache_version=config.CACHE_VERSION)
    old_key = hashlib.sha256(json.dumps(legacy, sort_keys=True).encode()).hexdigest()[:16]
    assert cfg.key() == old_key  # the key a config had before the new fields existed
    assert ex.Config(method="fedlog", seed=3, local_optimum=True).key() != old_key
    assert ex.Config(method="fedlog", seed=3, augment=True).key() != old_key
    assert ex.Config(method="csfl").key() != ex.Config(method="fedavg").key()


@pytest.mark.parametrize("field,value", [("participation", 0.0), ("participation", 1.5), ("lr_decay", 0.0),
                                         ("momentum", 1.0), ("pool_split", 1.0), ("server_fraction", -0.1),
                                         ("final_finetune_epochs", -1)])
def test_new_fields_are_validated_with_their_name(field, value):
    with pytest.raises(ValueError, match=f"Config.{field}"):
        _tiny("fedavg", optimizer="sgd", **{field: value})


def test_new_fields_at_their_defaults_keep_old_cache_keys():
    cfg = _tiny("fedavg")
    assert cfg.key() == _tiny("fedavg", participation=1.0, lr_decay=1.0, momentum=0.0, weight_decay=0.0,
                              final_finetune_epochs=0, pool_split=0.0, server_fraction=0.0).key()
    assert cfg.key() != _tiny("fedavg", participation=0.5).key()


# ----------------------------------------------------------------------------- 320 random configs, every option

NONFINITE = [float("nan"), float("inf"), -float("inf")]
HUGE = {"n_clients": 10 ** 9, "rounds": 10 ** 9, "local_epochs": 10 ** 9, "batch_size": 10 ** 12, "n_train": 10 ** 12,
        "final_finetune_epochs": 10 ** 9, "seed": 10 ** 30, "classes_per_client": 10 ** 6, "lr": 1e300,
        "weight_decay": 1e300, "clip_grad_norm": 1e300, "dirichlet_alpha": 1e300}
WRONG_TYPE = {"rounds": "3", "lr": "0.1", "n_clients": 2.0, "options": "x", "device": 3, "batch_size": None,
              "seed": 1.5, "optimizer": 1, "corruption": ["blur"], "momentum": "0"}


def _option_value(rng, default):
    """A value for a method option: its default, an edge, out of range, non-finite, huge or of the wrong type."""
    pool = [default, 0, 1, -1, 10 ** 12, 1e12, "x", None, [1]] + NONFINITE
    if isinstance(default, float):
        pool += [0.5, 1e-9]
    return rng.choice(pool)


def _draw(rng) -> dict:
    kw = {k: rng.choice(v) for k, v in VALID.items()}
    kw.update(n_clients=rng.choice([2, 3, 4]), train_fraction=0.005, local_epochs=1, rounds=1)
    method = kw["method"]
    if method.startswith("fedcr"):
        kw["model"] = "cnn_mnist_vib_v8"
    if method in ("feddm", "fedrd"):
        kw["options"] = dict(iterations=1, real_batch=4, server_epochs=1)
        if method == "fedrd":
            kw["model"] = "fedrd_proj1_convnet8"
    if method == "fedprof":
        kw["server_fraction"] = 0.1
    defaults = algorithms.REGISTRY[method].defaults
    if defaults and rng.random() < 0.5:  # one of the method's options, at any kind of value
        name = rng.choice(sorted(defaults))
        kw["options"] = {**kw.get("options", {}), name: _option_value(rng, defaults[name])}
    kind = rng.choice(["none"] * 5 + ["invalid", "nonfinite", "huge", "wrong type"])
    if kind == "invalid":
        k = rng.choice(sorted(INVALID))
        kw[k] = rng.choice(INVALID[k])
    elif kind == "nonfinite":
        kw[rng.choice(["lr", "dirichlet_alpha", "train_fraction", "participation", "momentum", "weight_decay",
                       "clip_grad_norm", "lr_decay"])] = rng.choice(NONFINITE)
    elif kind == "huge":
        k = rng.choice(sorted(HUGE))
        kw[k] = HUGE[k]
    elif kind == "wrong type":
        k = rng.choice(sorted(WRONG_TYPE))
        kw[k] = WRONG_TYPE[k]
    return kw


@pytest.mark.slow
def test_320_random_configs_over_every_option_run_or_are_refused_in_one_line(monkeypatch):
    """Each draw runs one round on a tiny slice with the cache off, or is refused with a one-line ValueError naming
    the field, the option or the cap; a refusal for a bad value comes before any data is loaded. No other exception
    type escapes (a huge value in range would otherwise exhaust memory or never finish)."""
    rng = random.Random(20261123)
    loads = []
    real_load = data.load_dataset
    monkeypatch.setattr(data, "load_dataset", lambda *a, **k: (loads.append(a), real_load(*a, **k))[1])
    outcomes = {"ran": 0, "refused": 0, "refused after loading": 0}
    for i in range(320):
        kw = _draw(rng)
        loads.clear()
        try:
            cfg = ex.Config(**kw)
        except ValueError as err:
            assert _documented(err, kw) or "cap" in str(err), (i, kw, repr(err))
            assert "\n" not in str(err).strip(), (i, kw, str(err))
            assert not loads, (i, kw)
            outcomes["refused"] += 1
            continue
        try:
            res = ex.run(cfg, cache=False, progress=False)
        except (ValueError, ex.DivergenceError, data.DatasetNotFound) as err:
            assert _documented(err, kw), (i, kw, repr(err))
            outcomes["refused after loading"] += 1
            continue
        assert len(res["rounds"]["acc_mean"]) == 1, (i, kw)
        outcomes["ran"] += 1
    print(outcomes)
    assert outcomes["ran"] >= 25 and outcomes["refused"] >= 100, outcomes


@pytest.mark.parametrize("field,value", [("batch_size", 10 ** 12), ("rounds", 10 ** 9), ("seed", 10 ** 30),
                                         ("n_clients", 10 ** 9)])
def test_values_beyond_a_resource_cap_are_refused_naming_the_cap(field, value):
    # before: batch_size 10**12 passed and the run died allocating 8 TB (RuntimeError); seed 10**30 overflowed torch
    with pytest.raises(ValueError, match=rf"Config.{field}=.*cap of .*CAPS"):
        ex.Config(method="fedavg", **{**TINY, field: value})


def test_an_option_beyond_its_cap_or_of_a_type_its_rule_cannot_compare_is_refused_by_name():
    with pytest.raises(ValueError, match="server_batch is beyond fedlib's cap of 65,536"):
        ex.Config(method="feddm", options={"server_batch": 10 ** 12}, **TINY)
    with pytest.raises(ValueError, match="option phase2_lr must be"):  # before: TypeError from the rule's '>'
        ex.Config(method="csfl", options={"phase2_lr": "x"}, **TINY)


@pytest.mark.parametrize("field,value,setting", [("dirichlet_alpha", 0.1, {}), ("dominant_share", 0.8, {}),
                                                 ("classes_per_client", 5, {"partition": "iid"}),
                                                 ("n_train", 40, {})])
def test_a_field_the_setting_ignores_is_accepted_with_a_warning_and_keeps_its_key(field, value, setting):
    # before: accepted silently (pathological partition ignores dirichlet_alpha, MNIST ignores n_train, ...)
    base = dict(method="fedavg", **TINY, **setting)
    with pytest.warns(UserWarning, match=f"Config.{field}=.*has no effect"):
        cfg = ex.Config(**base, **{field: value})
    assert cfg.key() != ex.Config(**base).key()  # a different field value is a different key, as before
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ex.Config(**base)  # the defaults warn about nothing


def test_every_method_option_has_a_rule():
    # before: FedLog's chi and FedCR's sigma_shift had none (only the type of their default)
    lacking = {name: [k for k in cls.defaults if k not in cls.rules and not isinstance(cls.defaults[k], bool)]
               for name, cls in algorithms.REGISTRY.items()}
    assert not {n: ks for n, ks in lacking.items() if ks}, lacking


def test_a_configs_key_is_computed_once_and_again_after_any_field_changes(monkeypatch):
    """A paper read asked the same Config for its key 3 or more times (6,732 keys for 556 runs), each a deep copy and a
    hash. The key is remembered beside the Config with what it was made from: asked again, it is not computed;
    after a field, an option or the device type changes, it is; a Config built from another's fields is keyed as
    that one; a method defined outside fedlib (keyed by code an edit of a helper changes) is never remembered."""
    made = []
    original = config.Config._compute_key
    monkeypatch.setattr(config.Config, "_compute_key", lambda self, d: made.append(d) or original(self, d))
    cfg = fedlog.paper_config("mnist", "fedavg", rounds=3)
    first = cfg.key()
    assert cfg.key() == first and len(made) == 1
    cfg.rounds = 4
    assert cfg.key() != first and len(made) == 2
    cfg.options["weighted"] = False  # a dict field changed in place
    changed = cfg.key()
    assert changed == config.Config(**cfg.__dict__).key() and len(made) == 4
    assert cfg.key("cuda") != changed and cfg.key() == changed and len(made) == 6

    class Outside(algorithms.REGISTRY["fedavg"]):  # defined here, outside fedlib: keyed by its code
        name = "outside_fedavg_for_a_test"

    monkeypatch.setattr(algorithms, "REGISTRY", {**algorithms.REGISTRY, Outside.name: Outside})
    own = fedlog.paper_config("mnist", Outside.name, rounds=3)
    before = len(made)
    own.key(), own.key()
    assert len(made) == before + 2
