"""fedlib.papers.fedlog.analysis.convergence: the measured quantities of Thms. 3-5 against direct computations on one client."""
import torch

from fedlib.papers.fedlog.analysis import convergence
from fedlib import experiments as ex


def _circle(**kw):
    cfg = ex.Config(method="fedlog", dataset="circle", model="mlp2", n_clients=2, rounds=2, local_epochs=3,
                    batch_size=40, optimizer="sgd", lr=0.01, **kw)
    return cfg, *ex.setup(cfg)


def _client_loss(ctx, client):
    g = ctx.population.groups[0]
    model = g.module(int((g.clients == client).nonzero()))
    n = int(ctx.fed.train.counts[client])
    x, y = ctx.fed.train.x[client, :n], ctx.fed.train.y[client, :n]
    return model, lambda: torch.nn.functional.cross_entropy(model(x), y)


def test_gradient_norms_and_smoothness_are_those_of_each_clients_own_loss():
    _, ctx, _ = _circle()
    norms = convergence.body_gradient_norms(ctx)
    smooth = convergence.body_smoothness(ctx, iterations=200)
    for c in range(2):
        model, loss = _client_loss(ctx, c)
        body = [p for p in model.body.parameters()]
        grads = torch.autograd.grad(loss(), body)
        assert torch.isclose(norms[c], torch.sqrt(sum(g.pow(2).sum() for g in grads)), rtol=1e-4)
        shapes = [p.shape for p in body]
        flat = torch.cat([p.detach().flatten() for p in body])

        def loss_of(v):
            out, i = [], 0
            for s in shapes:
                out.append(v[i:i + s.numel()].view(s))
                i += s.numel()
            params = dict(zip([k for k, _ in model.body.named_parameters()], out))
            feats = torch.func.functional_call(model.body, params, (ctx.fed.train.x[c, :int(ctx.fed.train.counts[c])],))
            return torch.nn.functional.cross_entropy(model.head(feats), ctx.fed.train.y[c, :int(ctx.fed.train.counts[c])])

        hessian = torch.autograd.functional.hessian(loss_of, flat)
        exact = torch.linalg.eigvalsh(hessian).abs().max()
        assert torch.isclose(smooth[c], exact, rtol=0.05), (float(smooth[c]), float(exact))


def test_trace_splits_each_round_into_local_training_and_the_head_step():
    cfg, _, _ = _circle()
    tr = convergence.trace(cfg)
    assert len(tr.loss_before) == len(tr.loss_local) == len(tr.loss_after) == 2 and tr.diverged_round is None
    assert tr.loss_before[1] == tr.loss_after[0]  # nothing happens between two rounds
    assert convergence.fraction_decreased(tr.loss_before, tr.loss_local, 2) == 1.0  # small SGD steps descend
    assert convergence.trace_of(convergence.trace_value(cfg)) == tr  # its JSON, read back (no diverged_round: None)
    assert convergence.inside_bound(tr, 0.01) == 1.0 and convergence.inside_bound(tr, 1e6) == 0.0
