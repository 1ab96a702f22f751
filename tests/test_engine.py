import copy

import pytest
import torch

from fedlib import data, engine, models


def _federation(n_clients=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    counts = [23, 17, 30, 9, 26][:n_clients]  # unequal, so clients stop at different steps
    parts = []
    start = 0
    for c in counts:
        parts.append(torch.arange(start, start + c))
        start += c
    x = torch.randn(start, 1, 28, 28, generator=g)
    y = torch.randint(0, 10, (start,), generator=g)
    return data.ClientData.from_parts(x, y, parts)


def _train_both(model_name, optimizer, lr, epochs, fast=True, counts=None, skip_finished=False):
    cd = _federation()
    if counts is not None:
        cd = data.ClientData(cd.x, cd.y, torch.tensor(counts))
    torch.manual_seed(1)
    ms = [models.build(model_name, (1, 28, 28), 10) for _ in range(cd.n_clients)]
    refs = [copy.deepcopy(m) for m in ms]
    pop = engine.Population.create(ms, same_init=False, unify_head=False)
    g = pop.groups[0]
    g.fast = fast
    trainable = list(g.params)
    engine.train(g, cd, trainable=trainable, optimizer=optimizer, lr=lr, epochs=epochs, batch_size=4,
                 generator=torch.Generator().manual_seed(5), skip_finished=skip_finished)
    idx, valid = engine.batch_schedule(cd.counts, 4, epochs, torch.Generator().manual_seed(5))
    err = 0.0
    for c, m in enumerate(refs):
        engine.train_loop(m, cd.x[c], cd.y[c], idx[:, c], valid[:, c], trainable=trainable, optimizer=optimizer, lr=lr)
        for k, p in m.named_parameters():
            err = max(err, (p - g.params[k][c]).abs().max().item())
    return err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_skipping_finished_clients_trains_on_a_gpu_as_on_the_cpu():
    """Config.skip_finished on CUDA: the group's client ids stay on the CPU while the rows still training are on
    the GPU (indexing one with the other failed there, 2026-11-26)."""
    cd = _federation()
    cd = data.ClientData(cd.x, cd.y, torch.tensor([23, 17, 30, 9, 26]))
    out = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(1)
        ms = [models.build("mlp3", (1, 28, 28), 10) for _ in range(cd.n_clients)]
        pop = engine.Population.create(ms, same_init=False, unify_head=False, device=torch.device(device))
        g = pop.groups[0]
        here = cd.to(torch.device(device))  # as a run moves its federation
        engine.train(g, here, trainable=list(g.params), optimizer="sgd", lr=0.05, epochs=2, batch_size=4,
                     generator=torch.Generator().manual_seed(5), skip_finished=True)
        out[device] = {k: v.detach().cpu() for k, v in g.params.items()}
    assert max((out["cpu"][k] - out["cuda"][k]).abs().max().item() for k in out["cpu"]) < 1e-3


@pytest.mark.parametrize("model_name", ["cnn_mnist_nodrop", "mlp3", "convnet8"])
@pytest.mark.parametrize("fast", [True, False])
def test_batched_sgd_equals_each_client_alone(model_name, fast):
    assert _train_both(model_name, "sgd", 0.05, epochs=2, fast=fast) < 1e-5


@pytest.mark.parametrize("model_name", ["cnn_mnist_nodrop", "mlp3", "convnet8"])
def test_skipping_finished_clients_still_trains_each_client_as_alone(model_name):
    """Config.skip_finished: a step computes only the clients still training (counts 23, 17, 30, 9, 26 at batch 4:
    the client with 9 samples sits out most steps); each client's parameters are still its own loop's."""
    assert _train_both(model_name, "sgd", 0.05, epochs=2, skip_finished=True) < 1e-5
    if model_name == "cnn_mnist_nodrop":  # Adam: within one learning rate, as test_batched_adam_training_tracks...
        assert _train_both(model_name, "adam", 1e-3, epochs=2, skip_finished=True) < 1e-3


def test_skipping_finished_clients_computes_fewer_rows_and_reports_the_same_losses(monkeypatch):
    """Before, a finished client's empty batch went through the model at every step; with skip_finished the steps
    after it finished compute only the others' rows, and each client's mean loss and step count stay the same."""
    seen = []
    forward = engine.Group.forward
    monkeypatch.setattr(engine.Group, "forward", lambda self, x, **kw: seen.append(x.shape[0]) or forward(self, x, **kw))
    stats = {}
    for skip in (False, True):
        cd = _federation()
        torch.manual_seed(1)
        pop = engine.Population.create([models.build("mlp3", (1, 28, 28), 10)] * 5, same_init=True)
        seen.clear()
        stats[skip] = engine.train(pop.groups[0], cd, trainable=list(pop.groups[0].params), optimizer="sgd", lr=0.05,
                                   epochs=1, batch_size=4, generator=torch.Generator().manual_seed(5),
                                   skip_finished=skip)
        rows = list(seen)
        if skip:
            assert min(rows) == 1 and sum(rows) == int(((cd.counts + 3) // 4).sum())  # one row per client-step
        else:
            assert set(rows) == {5}
    assert torch.equal(stats[True].steps, stats[False].steps)
    assert torch.allclose(stats[True].loss, stats[False].loss, atol=1e-5)


def test_a_loss_that_keeps_state_per_row_sees_every_row_even_with_skip_finished(monkeypatch):
    """FedDBE's loss keeps a running mean per row across steps; given only the rows still training it would mix
    up rows (its state is [n, d]). A loss not marked rowwise trains every row at every step, skip or not."""
    seen = []
    forward = engine.Group.forward
    monkeypatch.setattr(engine.Group, "forward", lambda self, x, **kw: seen.append(x.shape[0]) or forward(self, x, **kw))
    state = {}

    def stateful(feats, logits, y, valid, clients, params):
        state["mean"] = feats.detach().mean(1) if "mean" not in state else 0.5 * state["mean"] + 0.5 * feats.detach().mean(1)
        return engine.masked_cross_entropy(logits, y, valid)

    cd = _federation()
    pop = engine.Population.create([models.build("mlp3", (1, 28, 28), 10)] * 5, same_init=True)
    engine.train(pop.groups[0], cd, trainable=list(pop.groups[0].params), optimizer="sgd", lr=0.05, epochs=1,
                 batch_size=4, generator=torch.Generator().manual_seed(5), loss_fn=stateful, skip_finished=True)
    assert set(seen) == {5} and state["mean"].shape[0] == 5


@pytest.mark.parametrize("fast", [True, False])
def test_batched_gradients_are_each_clients_own_gradients(fast):
    cd = _federation()
    torch.manual_seed(1)
    ms = [models.build("cnn_mnist_nodrop", (1, 28, 28), 10) for _ in range(cd.n_clients)]
    pop = engine.Population.create([copy.deepcopy(m) for m in ms], same_init=False, unify_head=False)
    g = pop.groups[0]
    g.fast = fast
    params = {k: v.requires_grad_(True) for k, v in g.params.items()}
    x, y, valid = cd.x[:, :9], cd.y[:, :9], cd.valid()[:, :9]
    loss = engine.masked_cross_entropy(g.forward(x, train=True, params=params)[1], y, valid)
    grads = torch.autograd.grad(loss.sum(), list(params.values()))
    for c, m in enumerate(ms):
        n = int(valid[c].sum())
        m.zero_grad()
        torch.nn.functional.cross_entropy(m(x[c, :n]), y[c, :n]).backward()
        for (k, p), gb in zip(m.named_parameters(), grads):
            assert torch.allclose(p.grad, gb[c], rtol=1e-4, atol=1e-6), k


def test_stacked_adam_matches_torch_adam_with_masks():
    torch.manual_seed(0)
    start = torch.randn(4, 3, 5)
    stacked = {"w": start.clone()}
    opt = engine.Adam(stacked, lr=1e-2)
    refs = [start[c].clone().requires_grad_(True) for c in range(4)]
    ref_opts = [torch.optim.Adam([r], lr=1e-2) for r in refs]
    for step in range(12):
        grads = torch.randn(4, 3, 5)
        active = torch.tensor([True, step < 5, True, step % 2 == 0])
        opt.step(stacked, {"w": grads}, active)
        for c in range(4):
            if active[c]:
                refs[c].grad = grads[c].clone()
                ref_opts[c].step()
    for c in range(4):
        assert torch.allclose(stacked["w"][c], refs[c].detach(), atol=1e-6)


def _adam_per_tensor(params, grads, state, active, lr, wd, b1=0.9, b2=0.999, eps=1e-8):
    """engine.Adam's step as it was written before it took torch's foreach operations: one tensor at a time."""
    state["t"] += 1 if active is None else active.float()
    bc1, bc2 = 1 - b1 ** state["t"], 1 - b2 ** state["t"]
    for k, p in params.items():
        g = grads[k] if not wd else grads[k] + wd * p
        shape = (-1,) + (1,) * (p.dim() - 1)
        m = state["m"][k].lerp(g, 1 - b1)
        v = state["v"][k].mul(b2).addcmul_(g, g, value=1 - b2)
        denom = (v.sqrt() / bc2.sqrt().view(shape)).add_(eps)
        new_p = p - (lr / bc1).view(shape) * m / denom
        if active is None:
            state["m"][k], state["v"][k] = m, v
            p.copy_(new_p)
        else:
            mask = active.view(shape)
            state["m"][k], state["v"][k] = torch.where(mask, m, state["m"][k]), torch.where(mask, v, state["v"][k])
            p.copy_(torch.where(mask, new_p, p))


@pytest.mark.parametrize("wd", [0.0, 1e-3])
def test_adam_over_every_tensor_at_once_gives_the_bits_of_one_tensor_at_a_time(wd):
    """The foreach form (one operation over every tensor) against the per-tensor form it replaced, on the MNIST CNN's
    shapes for 50 clients, one Linear weight laid out column-major as the fast engine trains it, with and without
    masks: equal bit for bit, so no shipped number moves."""
    torch.manual_seed(0)
    n = 50
    shapes = {"c1w": (n, 10, 1, 5, 5), "c1b": (n, 10), "c2w": (n, 20, 10, 5, 5), "c2b": (n, 20), "fw": (n, 50, 320),
              "fb": (n, 50), "hw": (n, 10, 50), "hb": (n, 10)}
    ours = {k: torch.randn(s) for k, s in shapes.items()}
    ours["fw"] = engine.column_major(ours["fw"])
    theirs = {k: v.clone(memory_format=torch.preserve_format) for k, v in ours.items()}
    opt = engine.Adam(ours, lr=1e-3, weight_decay=wd)
    state = {"m": {k: torch.zeros_like(v) for k, v in theirs.items()},
             "v": {k: torch.zeros_like(v) for k, v in theirs.items()}, "t": torch.zeros(n)}
    with torch.no_grad():
        for step in range(30):
            grads = {k: torch.randn(v.shape) for k, v in ours.items()}
            active = None if step % 3 else torch.rand(n) > 0.3
            opt.step(ours, grads, active)
            _adam_per_tensor(theirs, grads, state, active, 1e-3, wd)
    assert all(torch.equal(ours[k], theirs[k]) for k in ours)
    assert ours["fw"].stride() == theirs["fw"].stride()  # updated in place, its layout kept


def test_adam_step_allocates_nothing_the_size_of_the_parameters():
    """The step's intermediates (denominator, update) live in buffers the optimizer keeps: a step of every client
    allocates a few bytes (its bias corrections), where making them anew took twice the parameters' bytes (13 MB a
    step here; page faults on every step with glibc's allocator)."""
    from torch.profiler import ProfilerActivity, profile

    n = 50
    params = {k: torch.randn(s) for k, s in {"w": (n, 50, 320), "c": (n, 10, 1, 5, 5), "b": (n, 10)}.items()}
    grads = {k: torch.randn(v.shape) for k, v in params.items()}
    opt = engine.Adam(params, lr=1e-3)
    opt.step(params, grads)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        opt.step(params, grads)
    allocated = sum(e.cpu_memory_usage for e in prof.events() if e.cpu_memory_usage > 0)
    assert allocated < 0.01 * sum(v.numel() * v.element_size() for v in params.values())


def test_batched_adam_training_tracks_each_client_alone():
    # Adam divides by sqrt(v) + 1e-8, so float rounding in near-zero gradients can move a weight by a fraction of
    # the learning rate; over two epochs the batched run must stay within one learning rate of the reference loop
    assert _train_both("cnn_mnist_nodrop", "adam", 1e-3, epochs=2) < 1e-3


def test_batched_training_really_trains_each_client():
    err_if_untrained = _train_both("mlp3", "sgd", 0.0, epochs=1)
    assert err_if_untrained == 0.0
    cd = _federation()
    pop = engine.Population.create([models.build("mlp3", (1, 28, 28), 10)] * 5, same_init=True)
    before = {k: v.clone() for k, v in pop.groups[0].params.items()}
    engine.train(pop.groups[0], cd, trainable=list(before), optimizer="adam", lr=1e-2, epochs=1, batch_size=4,
                 generator=torch.Generator().manual_seed(0))
    moved = (pop.groups[0].params["body.1.weight"] - before["body.1.weight"]).flatten(1).norm(dim=1)
    assert torch.all(moved > 0)
    # clients started equal but saw different data, so they end different
    assert not torch.allclose(pop.groups[0].params["body.1.weight"][0], pop.groups[0].params["body.1.weight"][1])


def _adam_steps(**train_kw):
    cd = _federation()
    pop = engine.Population.create([models.build("mlp2", (1, 28, 28), 10)] * 5, same_init=True)
    g = pop.groups[0]
    seen = {}
    original = engine.Adam.step

    def spy(self, params, grads, active=None):
        original(self, params, grads, active)
        seen["t"] = self.t.clone()

    engine.Adam.step = spy
    try:
        engine.train(g, cd, trainable=list(g.params), optimizer="adam", batch_size=4,
                     generator=torch.Generator().manual_seed(0), **train_kw)
    finally:
        engine.Adam.step = original
    return seen["t"], ((cd.counts + 3) // 4).float()


def test_step_masks_stop_each_client_after_its_own_batches():
    t, per_epoch = _adam_steps(lr=1e-3, epochs=3)
    assert torch.equal(t, 3 * per_epoch)


def test_training_to_the_local_optimum_stops_each_client_when_its_loss_stops_improving():
    t, per_epoch = _adam_steps(lr=1e-3, epochs=6, until_converged=True, tol=1.0)  # nothing improves by 100%
    assert torch.equal(t, per_epoch)  # every client stops after its first epoch
    t, per_epoch = _adam_steps(lr=1e-3, epochs=6, until_converged=True, tol=-float("inf"))  # everything improves
    assert torch.equal(t, 6 * per_epoch)  # the cap
    t, per_epoch = _adam_steps(lr=0.0, epochs=6, until_converged=True)  # a frozen model's epoch loss never drops 1%
    assert torch.equal(t, 2 * per_epoch)
    t, per_epoch = _adam_steps(lr=1e-2, epochs=40, until_converged=True)
    assert torch.all(t % per_epoch == 0) and torch.all(t >= 2 * per_epoch)
    assert bool((t < 40 * per_epoch).any())  # somebody reached its optimum before the cap


def test_batch_schedule_visits_every_sample_once_per_epoch():
    counts = torch.tensor([5, 12, 1])
    idx, valid = engine.batch_schedule(counts, 4, 2, torch.Generator().manual_seed(0))
    for c, n in enumerate(counts.tolist()):
        seen = idx[:, c][valid[:, c]].tolist()
        assert len(seen) == 2 * n
        assert sorted(seen[:n]) == list(range(n)) and sorted(seen[n:]) == list(range(n))


def test_the_step_hook_sees_every_step_with_each_clients_epoch():
    """engine.train's on_step: one call per step, after the loss, with the samples the step used and the epoch each
    client is in (batch_schedule's: a client's epoch e covers its steps e*ceil(n/B) .. (e+1)*ceil(n/B) - 1)."""
    cd = _federation(3)  # 23, 17 and 30 samples: 6, 5 and 8 steps an epoch at batch 4
    torch.manual_seed(1)
    pop = engine.Population.create([models.build("mlp3", (1, 28, 28), 10) for _ in range(3)], same_init=False)
    seen = []
    engine.train(pop.groups[0], cd, trainable=list(pop.groups[0].params), optimizer="sgd", lr=0.01, epochs=2,
                 batch_size=4, generator=torch.Generator().manual_seed(5), on_step=seen.append)
    idx, valid = engine.batch_schedule(cd.counts, 4, 2, torch.Generator().manual_seed(5))
    assert len(seen) == idx.shape[0] == 16 and all(s.epochs == 2 and not s.feats.requires_grad for s in seen)
    for s, step in enumerate(seen):
        assert torch.equal(step.valid, valid[s]) and torch.equal(step.y, cd.y[torch.arange(3)[:, None], idx[s]])
        assert step.epoch.tolist() == [min(s // k, 1) for k in (6, 5, 8)], s
    last = sum(int((st.valid & (st.epoch == 1)[:, None]).sum()) for st in seen)
    assert last == 23 + 17 + 30  # the last epoch visits every sample once


def test_a_server_model_is_a_copy_read_back_by_row():
    torch.manual_seed(0)
    pop = engine.Population.create([models.build("mlp3", (1, 28, 28), 10) for _ in range(2)], same_init=True)
    params = pop.groups[0].row(0)
    server = engine.server_group(pop.groups[0].model, params)
    assert server.n == 1 and all(torch.equal(server.row(0)[k], v) for k, v in params.items())
    next(iter(server.params.values())).add_(1.0)  # training the server's copy leaves the source alone
    assert all(torch.equal(params[k], pop.groups[0].params[k][0]) for k in params)


def test_fast_and_vmap_forward_agree():
    torch.manual_seed(0)
    pop = engine.Population.create([models.build("cnn_mnist", (1, 28, 28), 10) for _ in range(3)], same_init=False)
    g = pop.groups[0]
    x = torch.randn(3, 6, 1, 28, 28)
    fast = g.forward(x, train=False)[1]
    g.fast = False
    assert torch.allclose(fast, g.forward(x, train=False)[1], atol=1e-5)


def test_groups_split_architectures_and_share_one_head():
    torch.manual_seed(0)
    pop = engine.Population.create([models.build(a, (2,), 2) for a in ("mlp3", "mlp2", "mlp3", "mlp2")],
                                   same_init=False)
    assert [g.clients.tolist() for g in pop.groups] == [[0, 2], [1, 3]]
    heads = pop.gather("head.weight")
    assert heads.shape == (4, 2, 2) and torch.equal(heads[0], heads[3])  # unified at start
    pop.set_all("head.bias", torch.tensor([1.0, -1.0]))
    assert torch.equal(pop.gather("head.bias"), torch.tensor([1.0, -1.0]).expand(4, 2))
    with pytest.raises(ValueError, match="same number of features"):
        engine.Population.create([models.build("cnn_mnist", (1, 28, 28), 10), models.build("mlp2", (1, 28, 28), 10)],
                                 same_init=False)


def test_evaluate_counts_only_each_clients_own_samples():
    cd = _federation()
    pop = engine.Population.create([models.build("mlp2", (1, 28, 28), 10)] * 5, same_init=True)
    ev = engine.evaluate_population(pop, cd)
    assert ev["count"].tolist() == cd.counts.float().tolist()
    # the reference: each client's model alone on its own samples
    g = pop.groups[0]
    for c in range(5):
        n = int(cd.counts[c])
        logits = g.forward(cd.x[c:c + 1, :n], train=False, params={k: v[c:c + 1] for k, v in g.params.items()})[1][0]
        assert int(ev["correct"][c]) == int((logits.argmax(1) == cd.y[c, :n]).sum())


def test_crop_flip_moves_and_mirrors_each_image_without_inventing_pixels():
    x = torch.arange(6 * 16.0).reshape(2, 3, 1, 4, 4)
    torch.manual_seed(0)
    mirrored_only = engine.crop_flip(x, pad=0)
    for a, b in zip(x.reshape(-1, 4, 4), mirrored_only.reshape(-1, 4, 4)):
        assert torch.equal(b, a) or torch.equal(b, a.flip(-1))
    flips = sum(not torch.equal(a, b) for a, b in zip(x.reshape(-1, 4, 4), mirrored_only.reshape(-1, 4, 4)))
    assert 0 < flips < 6
    shifted = engine.crop_flip(x, pad=1)
    assert shifted.shape == x.shape
    for a, b in zip(x.reshape(-1, 4, 4), shifted.reshape(-1, 4, 4)):
        assert set(b.flatten().tolist()) <= set(a.flatten().tolist())  # edge padding repeats existing pixels


@pytest.mark.parametrize("main,tol", [("sgd", 1e-5), ("adam", 1e-3)])
def test_parameters_with_an_optimizer_of_their_own_follow_it_in_the_same_batched_call(main, tol):
    """FedDBE's bias is stepped by SGD while the model's optimizer steps the rest, after one backward pass."""
    cd = _federation()
    torch.manual_seed(1)
    ms = [models.build("cnn_mnist_nodrop", (1, 28, 28), 10) for _ in range(cd.n_clients)]
    refs = [copy.deepcopy(m) for m in ms]
    g = engine.Population.create(ms, same_init=False, unify_head=False).groups[0]
    trainable, own = list(g.params), {"head.bias": ("sgd", 0.5), "head.weight": ("sgd", 0.5)}
    main_lr = 0.05 if main == "sgd" else 1e-3
    engine.train(g, cd, trainable=trainable, optimizer=main, lr=main_lr, epochs=2, batch_size=4,
                 generator=torch.Generator().manual_seed(5), own_optimizer=own)
    idx, valid = engine.batch_schedule(cd.counts, 4, 2, torch.Generator().manual_seed(5))
    err = 0.0
    for c, m in enumerate(refs):
        named = dict(m.named_parameters())
        rest = [p for k, p in named.items() if k not in own]
        opts = [torch.optim.SGD(rest, main_lr) if main == "sgd" else torch.optim.Adam(rest, main_lr),
                torch.optim.SGD([named[k] for k in own], 0.5)]
        for s in range(idx.shape[0]):
            if not valid[s, c].any():
                break
            sel = idx[s, c][valid[s, c]]
            for o in opts:
                o.zero_grad()
            torch.nn.functional.cross_entropy(m(cd.x[c][sel]), cd.y[c][sel]).backward()
            for o in opts:
                o.step()
        err = max(err, max((p - g.params[k][c]).abs().max().item() for k, p in named.items()))
    assert err < tol


def test_an_own_optimizer_for_a_parameter_not_trained_is_refused():
    cd = _federation()
    g = engine.Population.create([models.build("mlp3", (1, 28, 28), 10) for _ in range(cd.n_clients)],
                                 same_init=True).groups[0]
    with pytest.raises(ValueError, match="not trained"):
        engine.train(g, cd, trainable=g.names("body"), optimizer="adam", lr=1e-3, epochs=1, batch_size=4,
                     generator=torch.Generator().manual_seed(0), own_optimizer={"head.bias": ("sgd", 0.1)})


def test_the_convnet_ends_at_4_by_4_for_28_and_32_pixel_inputs_and_normalises_each_instance():
    for shape in [(1, 28, 28), (3, 32, 32)]:
        m = models.build("convnet8", shape, 10)
        assert m.feature_dim == 8 * 4 * 4 and m(torch.randn(2, *shape)).shape == (2, 10)
    norm = models.InstanceNorm(3)
    x = torch.randn(4, 3, 5, 5) * 7 + 2
    out = norm(x)
    assert torch.allclose(out.mean((2, 3)), torch.zeros(4, 3), atol=1e-5)
    assert torch.allclose(out.var((2, 3), unbiased=False), torch.ones(4, 3), atol=1e-3)


def test_clipping_bounds_each_clients_step_norm_and_leaves_small_gradients_alone():
    # before: engine.train had no clipping, and a 100-round FedCR-NA run diverged (the authors clip at 10)
    from fedlib import experiments as ex
    from fedlib.papers import fedlog

    cfg = fedlog.paper_config("mnist", "fedavg", model="cnn_mnist_nodrop", n_clients=3, train_fraction=0.01,
                             optimizer="sgd", lr=1.0, batch_size=4)
    ctx, _ = ex.setup(cfg)
    group, data = ctx.groups[0]
    data.x[0] *= 50.0  # client 0's gradient is huge, the others' ordinary
    steps = {}
    for clip in (0.0, 0.5, 1e6):
        g = group.subset(torch.arange(group.n))
        before = {k: v.clone() for k, v in g.params.items()}
        engine.train(g, data, trainable=list(g.params), optimizer="sgd", lr=1.0, epochs=1, batch_size=1000,
                     generator=torch.Generator().manual_seed(0), clip_norm=clip)
        steps[clip] = torch.sqrt(sum((g.params[k] - before[k]).flatten(1).pow(2).sum(1) for k in g.params))
    assert bool((steps[0.0] > 0.5).all())  # one step each (batch 1000 > any client's data): unclipped, all large
    assert bool((steps[0.5] <= 0.5 * (1 + 1e-4)).all())  # each client's step norm is lr * 0.5 at most
    assert torch.equal(steps[1e6], steps[0.0])  # a bound above every norm changes nothing


# ----------------------------------------------------------------------------------------------- the fast engine
def _wide_group(fast_engine, n=4, width=64, seed=3):
    torch.manual_seed(seed)
    ms = [models.build(f"fedcr_mlp{width}", (1, 28, 28), 10) for _ in range(n)]
    return engine.Population.create(ms, same_init=False, unify_head=False, fast_engine=fast_engine).groups[0]


@pytest.mark.parametrize("clip", [0.0, 0.5])
@pytest.mark.parametrize("prox", [False, True])
def test_the_fast_engine_computes_what_the_reference_path_does(clip, prox):
    """Column-major Linear weights, the fused clip and SGD step and the cut padded steps are the same mathematics:
    equal to float rounding after 2 epochs of clipped SGD (with a proximal term against a row-major anchor, as Ditto's
    and FedProx's), on clients of unequal sizes."""
    cd = _federation(4)
    anchor = {k: v[0].clone() for k, v in _wide_group(False).params.items()}
    out = {}
    for fast in (False, True):
        g = _wide_group(fast)
        loss_fn = engine.default_loss if not prox else (
            lambda f, lo, y, v, c, p: engine.masked_cross_entropy(lo, y, v)
            + 0.05 * engine.squared_distance(p, anchor, list(anchor)))
        engine.train(g, cd, trainable=list(g.params), optimizer="sgd", lr=0.05, epochs=2, batch_size=6,
                     generator=torch.Generator().manual_seed(5), clip_norm=clip, loss_fn=loss_fn)
        out[fast] = g
    for k, v in out[False].params.items():
        assert torch.allclose(out[True].params[k], v, atol=2e-6, rtol=1e-5), k
    assert out[True].params["body.1.weight"].stride()[1] == 1  # trained column-major
    ev = {fast: engine.evaluate(g, cd, chunk_samples=28) for fast, g in out.items()}  # chunks of 7 pad 30 to 35
    assert torch.equal(ev[True]["correct"], ev[False]["correct"])
    assert torch.allclose(ev[True]["loss"], ev[False]["loss"], rtol=1e-5)


def test_the_fast_engine_is_a_config_field_whose_default_keeps_every_key():
    from fedlib.config import Config

    assert Config(method="fedavg", fast_engine=False).key() == Config(method="fedavg").key()
    assert Config(method="fedavg", fast_engine=True).key() != Config(method="fedavg").key()


def test_even_evaluation_chunks_cover_every_sample_without_padding():
    g = _wide_group(True, n=100)
    cd = data.ClientData(torch.zeros(100, 210, 1, 28, 28), torch.zeros(100, 210, dtype=torch.long),
                         torch.full((100,), 210))
    assert engine._chunk(g, cd, 4096) == 35 and engine._chunk(_wide_group(False, n=100), cd, 4096) == 40


def test_gather_of_some_clients_copies_only_theirs_and_equals_the_full_gather():
    torch.manual_seed(0)
    ms = [models.build("cnn_mnist_flexible".replace("_flexible", "_small") if i % 2 else "cnn_mnist", (1, 28, 28), 10)
          for i in range(6)]
    pop = engine.Population.create(ms, same_init=False)
    for name in ("head.weight", "head.bias"):
        full = pop.gather(name)
        for pick in ([4, 1, 2], [5], [0, 0, 3]):
            assert torch.equal(pop.gather(name, torch.tensor(pick)), full[torch.tensor(pick)])


@pytest.mark.parametrize("shape", [(7, 5, 8, 8), (3, 4, 9, 7), (2, 6, 3, 5)])
def test_the_2x2_max_pool_without_autograd_is_max_pool2d_to_the_bit(shape):
    torch.manual_seed(0)
    x = torch.randn(*shape).relu()  # zeros tie in many windows
    x[..., :4, :4] = 1.5  # and equal positive values
    x[0, 0, 0, 0] = -0.0
    ours, theirs = engine.max_pool_2x2(x), torch.nn.functional.max_pool2d(x, 2)
    assert ours.shape == theirs.shape and torch.equal(ours, theirs)


def test_a_stacked_forward_without_autograd_pools_as_nn_maxpool2d_does(monkeypatch):
    torch.manual_seed(0)
    pop = engine.Population.create([models.build("convnet16", (1, 28, 28), 10) for _ in range(3)], same_init=False)
    g = pop.groups[0]
    assert engine._halves(torch.nn.MaxPool2d(2)) and not engine._halves(torch.nn.MaxPool2d(3, 2))
    assert not engine._halves(torch.nn.MaxPool2d(2, padding=1)) and not engine._halves(torch.nn.MaxPool2d(2, ceil_mode=True))
    x = torch.randn(3, 6, 1, 28, 28)
    used = []
    monkeypatch.setattr(engine, "max_pool_2x2", lambda t: used.append(1) or torch.nn.functional.max_pool2d(t, 2) * 0)
    with torch.no_grad():
        g.forward(x, train=False)
    assert len(used) == 3  # the ConvNet's three pools take the no-autograd path
    used.clear()
    g.forward(x.clone().requires_grad_(), train=True)  # under autograd (as in training): nn.MaxPool2d itself
    assert used == []
    monkeypatch.undo()
    with torch.no_grad():
        fast = g.forward(x, train=False)[1]
    monkeypatch.setattr(engine, "_halves", lambda layer: False)
    with torch.no_grad():
        assert torch.equal(fast, g.forward(x, train=False)[1])


@pytest.mark.parametrize("optimizer,kw", [("adam", {}), ("sgd", {"momentum": 0.9})])
def test_an_optimizer_kept_from_the_last_training_restarts_as_a_fresh_one(optimizer, kw):
    """`train` keeps its optimizer on the group and restarts it in place the next time the same tensors train (so a
    captured step's buffers stay where they are); the numbers are those of a new optimizer each time."""
    cd = _federation()
    torch.manual_seed(1)
    ms = [models.build("cnn_mnist", (1, 28, 28), 10) for _ in range(cd.n_clients)]
    groups = [engine.Population.create(copy.deepcopy(ms), same_init=False, unify_head=False).groups[0]
              for _ in range(2)]
    for rnd in range(3):
        for i, g in enumerate(groups):
            if i == 1:
                g.optimizers.clear()  # a new optimizer every time, as before
            torch.manual_seed(rnd)
            engine.train(g, cd, trainable=list(g.params), optimizer=optimizer, lr=1e-2 / (rnd + 1), epochs=1,
                         batch_size=4, generator=torch.Generator().manual_seed(rnd), optimizer_kw=kw)
    assert len(groups[0].optimizers) == 1
    for k in groups[0].params:
        assert torch.equal(groups[0].params[k], groups[1].params[k]), k
