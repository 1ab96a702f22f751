"""FedPAC (fedlib/algorithms/fedpac.py): one round against a plain per-client loop, the head weights against cases
worked by hand and against an independent solver, and its messages in the ledger."""
import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fedlib import engine
from fedlib import experiments as ex
from fedlib.algorithms import fedpac
from fedlib.messages import Ledger
from fedlib.papers import fedlog
from fedlib.rounds import run_round


def _config(**kw):
    base = dict(n_clients=5, train_fraction=0.01, rounds=3, local_epochs=1, model="cnn_mnist_nodrop", optimizer="sgd",
                lr=0.05)  # SGD, as PFLlib: the per-client loop then agrees to rounding
    return fedlog.paper_config("mnist", "fedpac", **{**base, **kw})


def test_two_clients_head_weights_are_the_closed_form():
    # client 1: min V1 a^2 + (V2 + |h1 - h2|^2) b^2 on a + b = 1, so a = (V2 + d2) / (V1 + V2 + d2); client 2 alike
    V = torch.tensor([1.0, 2.0])
    h = torch.tensor([[[0.0, 0.0]], [[1.0, 1.0]]])  # one class, d = 2: |h1 - h2|^2 = 2
    a = fedpac.head_weights(V, h)
    assert torch.allclose(a, torch.tensor([[4 / 5, 1 / 5], [2 / 5, 3 / 5]], dtype=torch.float64), atol=1e-9)


def test_weights_below_the_authors_threshold_are_zeroed_without_renormalising():
    V = torch.tensor([1.0, 1.0, 1e6])
    h = torch.zeros(3, 2, 4)  # equal statistics: P is diag(V), weights proportional to 1 / V
    a = fedpac.head_weights(V, h)
    raw = (1 / V.double()) / (1 / V.double()).sum()
    assert raw[2] > 0 and a[0, 2] == 0  # 1e-6, below 1e-3
    assert torch.allclose(a[0, :2], raw[:2], atol=1e-9) and a[0].sum() < 1


def test_the_simplex_solver_matches_scipy_on_random_problems():
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    for K in (2, 3, 7, 12):
        A = rng.normal(size=(K, 3))
        P = A @ A.T + np.diag(rng.uniform(0.01, 1.0, K))
        ours = fedpac.simplex_qp(torch.tensor(P)).numpy()
        ref = minimize(lambda a: a @ P @ a, np.full(K, 1 / K), jac=lambda a: 2 * P @ a, method="SLSQP",
                       bounds=[(0, 1)] * K, constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1}],
                       options={"ftol": 1e-15, "maxiter": 1000}).x
        assert ours.min() >= 0 and abs(ours.sum() - 1) < 1e-12
        assert ours @ P @ ours <= ref @ P @ ref + 1e-10
        assert np.abs(ours - ref).max() < 1e-5


def _statistics(model, x, y, C):
    with torch.no_grad():
        model.eval()
        f = model.body(x)
    n = len(y)
    V, h = 0.0, torch.zeros(C, f.shape[1])
    for k in range(C):
        fk = f[y == k]
        if len(fk):
            p = len(fk) / n
            V += p * (fk.pow(2).sum(1).mean()) - p * p * fk.mean(0).pow(2).sum()
            h[k] = p * fk.mean(0)
    return V / n, h


def _loop(model, x, y, idx, valid, names, lr, protos=None, has=None, lam=1.0):
    """One client alone: its own module and torch SGD, one batch at a time, FedPAC's loss."""
    model.train()
    named = dict(model.named_parameters())
    for k, p in named.items():
        p.requires_grad_(k in names)
    opt = torch.optim.SGD([named[k] for k in names], lr)
    for s in range(idx.shape[0]):
        if not valid[s].any():
            break
        sel = idx[s][valid[s]]
        feats = model.body(x[sel])
        loss = F.cross_entropy(model.head(feats), y[sel])
        if protos is not None:
            w = has[y[sel]].float()
            loss = loss + lam * ((feats - protos[y[sel]]).pow(2).mean(1) * w).sum() / len(sel)
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_a_round_equals_each_client_alone_then_the_servers_sums():
    ctx, alg = ex.setup(_config())
    ledger = Ledger()
    run_round(alg, 0, ledger)  # round 1 then aligns to round 0's centroids
    g, data = ctx.groups[0]
    start = [copy.deepcopy(g.module(c)) for c in range(g.n)]
    body = {k: alg.global_params[k].clone() for k in alg.shared}
    protos, has = alg.protos.clone(), alg.has_proto.clone()
    rnd, C, B = 1, ctx.fed.num_classes, ctx.batch_size
    res = run_round(alg, rnd, ledger)
    up = res.up
    lr = float(ctx.lr_at(rnd))
    head_idx, head_valid = engine.batch_schedule(data.counts, B, 1, ctx.generator(rnd, int(g.clients[0])))
    body_idx, body_valid = engine.batch_schedule(data.counts, B, ctx.epochs,
                                                 ctx.generator(rnd + 100_003, int(g.clients[0])))
    heads, bodies = [], []
    for c, m in enumerate(start):
        n = int(data.counts[c])
        x, y = data.x[c, :n], data.y[c, :n]
        m.load_state_dict({**m.state_dict(), **body})
        V, h = _statistics(m, x, y, C)
        assert torch.allclose(up["V"][c], V, rtol=1e-4) and torch.allclose(up["h"][c], h, atol=1e-5)
        _loop(m, data.x[c], data.y[c], head_idx[:, c], head_valid[:, c], g.names("head"), lr)
        _loop(m, data.x[c], data.y[c], body_idx[:, c], body_valid[:, c], g.names("body"), lr, protos, has)
        for k, p in m.named_parameters():
            assert torch.allclose(up[k][c], p.detach(), atol=1e-5), (c, k)
        with torch.no_grad():
            m.eval()
            f = m.body(x)
        for k in range(C):
            if (y == k).any():
                assert torch.allclose(up["protos"][c, k], f[y == k].mean(0), atol=1e-5)
        heads.append({k: p.detach() for k, p in m.named_parameters() if k in g.names("head")})
        bodies.append({k: p.detach() for k, p in m.named_parameters() if k in g.names("body")})
    n = data.counts.double()
    for k in alg.shared:  # bodies averaged by sample count, every client holds the average
        avg = sum(float(n[c] / n.sum()) * bodies[c][k] for c in range(g.n))
        assert torch.allclose(g.params[k], avg.expand_as(g.params[k]), atol=1e-5)
    a = fedpac.head_weights(up["V"], up["h"])
    for c in range(g.n):  # each client's head is its own weighting of the participants' trained heads
        for k in g.names("head"):
            mix = sum(float(a[c, j]) * heads[j][k] for j in range(g.n))
            assert torch.allclose(g.params[k][c], mix, atol=1e-5)
    held = torch.zeros(C, dtype=torch.bool)
    for c in range(g.n):
        held |= torch.bincount(data.y[c, :int(data.counts[c])], minlength=C) > 0
    assert torch.equal(alg.has_proto.cpu(), held)


def test_the_ledger_counts_the_personal_heads_sent_as_the_round_ends():
    ctx, alg = ex.setup(_config(participation=0.6))
    ledger = Ledger()
    res = run_round(alg, 0, ledger)
    g = ctx.population.groups[0]
    K = len(res.up.clients)
    body = sum(g.params[k][0].numel() for k in alg.shared)
    head = sum(g.params[k][0].numel() for k in g.names("head"))
    d, C = g.model.feature_dim, ctx.fed.num_classes
    held = int(res.up.present["protos"].sum())
    assert ledger.up[0] == 32 * K * (body + head + C * d + 2) + 32 * held * (d + 1)  # V, n; centroids and labels
    assert ledger.down[0] == 32 * K * body + 32 * K * head  # the body, then each participant's own head


@pytest.mark.parametrize("bad", [{"lam": -1.0}, {"head_epochs": 0}, {"qp_steps": 0}])
def test_impossible_options_are_refused_before_any_work(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        ex.setup(_config(options=bad))
