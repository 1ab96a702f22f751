"""FedRD: personal projections stay home, synthetic representations travel, the server trains the task model."""
import torch

from fedlib import experiments as ex
from fedlib.config import Config
from fedlib.messages import Ledger
from fedlib.rounds import run_round


def _config(**options):
    return Config(method="fedrd", dataset="fashion_mnist", model="fedrd_proj2_convnet8", partition="dirichlet",
                  dirichlet_alpha=0.1, n_clients=3, train_fraction=0.01, pool_split=0.8, rounds=1, optimizer="adam",
                  lr=0.01, batch_size=16, local_epochs=1,
                  options=dict(dict(dpc=2, iterations=2, real_batch=8, server_epochs=1, server_batch=16), **options))


def test_the_ledger_counts_representations_and_labels_up_and_only_the_task_model_down():
    ctx, alg = ex.setup(_config())
    ledger = Ledger()
    reply_present = None
    original = alg.client_update

    def spy(rnd, down):
        nonlocal reply_present
        reply = original(rnd, down)
        reply_present = reply.up.present["S"]
        assert not any(k.startswith(("body.0.", "body.2.", "body.4.")) for k in down.payload)  # no projection
        return reply

    alg.client_update = spy
    run_round(alg, 0, ledger)
    d = 28 * 28  # one channel of the input's size
    assert ledger.up[0] == 32 * int(reply_present.sum()) * (2 * d + 1)
    task = sum(ctx.population.groups[0].params[k][0].numel() for k in alg.task)
    assert ledger.down[0] == 32 * 3 * task
    assert set(alg.projection) == {f"body.{i}.{p}" for i in (0, 2, 4) for p in ("weight", "bias")}


def test_without_matching_the_clients_send_the_projections_of_real_samples():
    ctx, alg = ex.setup(_config(iterations=0))
    reply = alg.client_update(0, alg.configure(0))
    group = ctx.population.groups[0]
    train = ctx.fed.train
    for i in range(3):
        reps = group.body_features(train.x[i:i + 1, :int(train.counts[i])], train=False, params={
            k: v[i:i + 1] for k, v in group.params.items()}, upto=alg.split)[0]
        for c in range(10):
            if reply.up.present["S"][i, c]:
                for s in reply.up["S"][i, c]:
                    assert bool(((reps - s.flatten()).abs().max(1).values < 1e-5).any())


def test_after_a_round_every_client_shares_the_task_model_and_keeps_its_own_projection():
    ctx, alg = ex.setup(_config())
    run_round(alg, 0, Ledger())
    params = ctx.population.groups[0].params
    for k in alg.task:
        assert bool((params[k] == params[k][0]).all()), k
    assert not torch.equal(params["body.0.weight"][0], params["body.0.weight"][1])


def test_the_server_step_is_deterministic():
    finals = []
    for _ in range(2):
        ctx, alg = ex.setup(_config())
        run_round(alg, 0, Ledger())
        finals.append({k: v.clone() for k, v in alg.global_params.items()})
    assert all(torch.equal(finals[0][k], finals[1][k]) for k in finals[0])


def test_a_resized_representation_travels_at_its_own_size_and_trains():
    for side, resize in ((8, "AdaptiveAvgPool2d"), (40, "Upsample")):
        cfg = _config()
        cfg = Config(**{**cfg.__dict__, "model": f"fedrd_proj1_d{side}_convnet8"})
        ctx, alg = ex.setup(cfg)
        assert type(ctx.population.template.body[alg.split - 1]).__name__ == resize
        ledger = Ledger()
        reply = alg.client_update(0, alg.configure(0))
        assert reply.up["S"].shape[-2:] == (side, side)
        run_round(alg, 1, ledger)
        assert ledger.up[0] == 32 * int(reply.up.present["S"].sum()) * (2 * side * side + 1)


def test_projecting_a_clients_samples_in_chunks_equals_projecting_them_at_once():
    ctx, alg = ex.setup(_config())
    group, x = ctx.population.groups[0], ctx.fed.train.x
    whole = alg.represent(group, x.unsqueeze(1))[:, 0]
    assert torch.allclose(alg.represent_all(group, x, chunk=3), whole, atol=1e-6)
    assert whole.shape == (*x.shape[:2], 1, 28, 28)
