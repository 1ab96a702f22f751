"""Distribution matching, batched over clients (fedlib.distill): the loss, its batches, its embedders."""
import torch

from fedlib import distill, engine, models
from fedlib.data import ClientData


def _data():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(30, 1, 28, 28, generator=g)
    y = torch.tensor([0, 1, 2] * 10)
    y[:12] = torch.tensor([0, 1] * 6)  # client 0 holds classes 0 and 1 only
    return ClientData.from_parts(x, y, [torch.arange(12), torch.arange(12, 30)])


def test_class_batches_draw_each_class_from_its_own_samples_without_replacement():
    data = _data()
    idx, mask = distill.class_batches(data, 3, 8, torch.Generator().manual_seed(1))
    assert idx.shape == mask.shape == (2, 3, 8)
    assert mask[0, 2].sum() == 0 and mask[0, 0].sum() == 6 and mask[1, 2].sum() == 6
    for i in range(2):
        for c in range(3):
            taken = idx[i, c][mask[i, c]]
            assert len(set(taken.tolist())) == len(taken) and bool((data.y[i, taken] == c).all())


def test_packing_drops_the_padding_and_keeps_every_drawn_sample_with_its_class():
    data = _data()
    idx, mask = distill.class_batches(data, 3, 8, torch.Generator().manual_seed(1))
    rows, classes, valid = distill.pack(idx, mask)
    assert rows.shape == (2, 18) and valid[0].sum() == 12 and bool(valid[1].all())  # client 1: 6 of each class
    for i in range(2):
        drawn = {(int(r), c) for c in range(3) for r in idx[i, c][mask[i, c]]}
        assert {(int(r), int(c)) for r, c, v in zip(rows[i], classes[i], valid[i]) if v} == drawn
        assert bool((data.y[i, rows[i][valid[i]]] == classes[i][valid[i]]).all())


def test_class_means_of_the_packed_samples_equal_the_masked_means_of_the_padded_layout():
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 20, (2, 3, 4), generator=g)
    mask = torch.rand(2, 3, 4, generator=g) < 0.6
    mask[0, 1] = False  # a class with no sample: mean 0
    emb = torch.randn(2, 20, 5, generator=g)
    rows, classes, valid = distill.pack(idx, mask)
    packed = distill.class_means(emb.gather(1, rows.unsqueeze(-1).expand(-1, -1, 5)), classes, valid, 3)
    padded = emb.gather(1, idx.flatten(1).unsqueeze(-1).expand(-1, -1, 5)).view(2, 3, 4, 5)
    w = mask.float().unsqueeze(-1)
    assert torch.allclose(packed, (padded * w).sum(2) / w.sum(2).clamp(min=1), atol=1e-6)


def test_the_dm_loss_is_zero_when_the_class_means_agree_and_ignores_absent_classes():
    g = torch.Generator().manual_seed(0)
    syn = torch.randn(2, 3, 4, 5, generator=g)
    present = torch.ones(2, 3, dtype=torch.bool)
    assert torch.allclose(distill.dm_loss(syn.mean(2), syn, present), torch.zeros(2))
    assert bool((distill.dm_loss(syn.mean(2) + 1, syn, present) == 15).all())  # 3 classes x 5 features x 1^2
    present[1, 2] = False
    far = syn.mean(2).clone()
    far[1, 2] += 100  # an absent class must not count
    assert distill.dm_loss(far, syn, present)[1] < 1e-8


def test_a_step_moves_only_the_synthetic_samples_and_lowers_the_loss():
    data = _data()
    model = models.build("convnet8", (1, 28, 28), 3)
    group = engine.Population.create([model, model], same_init=True).groups[0]
    before = {k: v.clone() for k, v in group.params.items()}
    g = torch.Generator().manual_seed(2)
    syn, present = distill.real_init(data, 3, 2, g)
    assert syn.shape == (2, 3, 2, 1, 28, 28) and present.tolist() == [[True, True, False], [True, True, True]]
    syn = syn.clone().requires_grad_(True)
    rows, classes, valid = distill.pack(*distill.class_batches(data, 3, 6, g))
    real = data.x[torch.arange(2)[:, None], rows].unsqueeze(1)
    emb = distill.random_params(model.body, 2, g)
    real_mean = distill.class_means(distill.embed(group, real, emb)[:, 0], classes, valid, 3)
    losses = []
    for _ in range(5):
        loss = distill.dm_loss(real_mean, distill.embed(group, syn, emb), present)
        (grad,) = torch.autograd.grad(loss.sum(), [syn])
        with torch.no_grad():
            syn -= 1.0 * grad
        losses.append(loss.detach())
    assert bool((losses[-1] < losses[0]).all())
    assert all(torch.equal(v, before[k]) for k, v in group.params.items())


def test_the_perturbed_models_lie_at_distance_rho():
    params = {"a": torch.zeros(3, 40, 50), "b": torch.ones(3, 50)}
    moved = distill.perturbed(params, 5.0, torch.Generator().manual_seed(0))
    dist = torch.sqrt(sum(((moved[k] - v) ** 2).flatten(1).sum(1) for k, v in params.items()))
    assert torch.allclose(dist, torch.full((3,), 5.0), atol=1e-4)
    assert not torch.equal(moved["a"][0], moved["a"][1])  # every client its own direction


def test_random_embedders_differ_per_client_and_follow_torchs_initialisation_bounds():
    body = models.build("convnet8", (1, 28, 28), 3).body
    emb = distill.random_params(body, 2, torch.Generator().manual_seed(0))
    assert set(emb) == {f"body.{k}" for k, _ in body.named_parameters()}
    w = emb["body.0.weight"]
    assert not torch.equal(w[0], w[1]) and float(w.abs().max()) <= 1 / 3  # fan_in 9


def test_the_fast_engines_unpadded_matching_takes_the_same_steps_as_the_stacked_one():
    """Client by client, each at its own size and only over the classes it holds: the same draws, the same loss and
    the same synthetic sets, to float rounding (FedDM's logit matching included)."""
    data = _data()
    out = {}
    for fast in (False, True):
        torch.manual_seed(0)
        model = models.build("convnet8", (1, 28, 28), 3)
        group = engine.Population.create([model, model], same_init=True, fast_engine=fast).groups[0]
        g = torch.Generator().manual_seed(2)
        syn, present = distill.real_init(data, 3, 2, g)
        base = {k: v.clone() for k, v in group.params.items()}  # FedDM's: the global model, perturbed
        out[fast] = distill.condense(group, data, syn, present, lambda: distill.perturbed(base, 0.5, g),
                                     iterations=3, lr=1.0, momentum=0.5, batch=6, g=g, match_logits=True)
        rd = distill.condense(group, data, syn, present, lambda: distill.random_params(model.body, 2, g),
                              iterations=2, lr=1.0, momentum=0.0, batch=6, g=g)  # FedRD's and DM's: random bodies
        out[(fast, "random")] = rd
    assert torch.allclose(out[True][0], out[False][0], atol=1e-5)
    assert torch.allclose(out[True][1], out[False][1], rtol=1e-4)
    assert torch.allclose(out[(True, "random")][0], out[(False, "random")][0], atol=1e-5)
    assert not torch.equal(out[True][0], distill.real_init(data, 3, 2, torch.Generator().manual_seed(2))[0])
