"""Distribution matching (Zhao and Bilen, WACV 2023), batched over clients: what FedDM and FedRD share.

A client condenses its data into a small synthetic set, `dpc` samples per class it holds, by moving the synthetic
samples until their mean embedding matches the mean embedding of its real samples, class by class (FedRD's Eq. 5):

    L = sum_c || mean_{x in B_c} psi(x) - mean_{s in S_c} psi(s) ||^2

under embedders psi drawn afresh every iteration (DM: randomly initialised ConvNets without their last layer; FedDM:
the global model perturbed within a radius rho). Every client's S is one row of a tensor [n, C, dpc, ...], so all
clients take their steps together; the loss is a sum of per-client terms, so one backward gives each its own
gradient. The server then trains a model on the union of the synthetic sets (`train_on`).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from . import engine
from .data import ClientData
from .models import InstanceNorm


def class_rows(data: ClientData, num_classes: int) -> list[list[torch.Tensor]]:
    """Per client and class, the rows of its samples of that class."""
    y, valid = data.y.cpu(), data.valid().cpu()
    return [[torch.nonzero((y[i] == c) & valid[i]).flatten() for c in range(num_classes)]
            for i in range(data.n_clients)]


def class_batches(data: ClientData, num_classes: int, batch: int, g: torch.Generator, rows=None):
    """Per client and class, up to `batch` of its samples of that class drawn without replacement: indices
    [n, C, batch] into the client's rows and a validity mask [n, C, batch] (False past the class's count).
    `rows`: `class_rows(data, num_classes)`, when the caller draws many batches."""
    rows = class_rows(data, num_classes) if rows is None else rows
    idx = torch.zeros(data.n_clients, num_classes, batch, dtype=torch.long)
    mask = torch.zeros(data.n_clients, num_classes, batch, dtype=torch.bool)
    for i, per_class in enumerate(rows):
        for c, r in enumerate(per_class):
            take = r[torch.randperm(len(r), generator=g)[:batch]]
            idx[i, c, :len(take)], mask[i, c, :len(take)] = take, True
    return idx, mask


def real_init(data: ClientData, num_classes: int, dpc: int, g: torch.Generator):
    """DM's "real" initialisation: `dpc` random real samples per class a client holds (repeated if it has fewer).
    Returns (samples [n, C, dpc, ...], present [n, C])."""
    idx, mask = class_batches(data, num_classes, dpc, g)
    present = mask.any(-1)
    counts = mask.sum(-1, keepdim=True).clamp(min=1)
    idx = torch.gather(idx, 2, torch.arange(dpc).expand_as(idx) % counts)  # wrap around a class with < dpc
    rows = torch.arange(data.n_clients)[:, None, None]
    x = data.x[rows, idx.to(data.x.device)]
    return x * present.to(x.device, x.dtype).view(*present.shape, *[1] * (x.dim() - 2)), present


def initial_set(samples: torch.Tensor, present: torch.Tensor, init: str, g: torch.Generator) -> torch.Tensor:
    """S before matching: the given real samples [n, C, dpc, ...] ("real") or N(0, 1) noise of their shape
    ("random"), zero for the classes a client does not hold (present [n, C])."""
    if init == "random":
        samples = torch.randn(samples.shape, generator=g).to(samples.device, samples.dtype)
    return samples * present.to(samples.device, samples.dtype).view(*present.shape, *[1] * (samples.dim() - 2))


def pack(idx: torch.Tensor, mask: torch.Tensor):
    """class_batches' [n, C, B] layout without its padding: per client, its drawn samples first, padded only to the
    largest client's count L (a client holding few classes or few samples no longer costs C x B embeddings).
    Returns rows [n, L] into the client's samples, their classes [n, L] and a validity mask [n, L]."""
    n, C, B = idx.shape
    flat = mask.flatten(1)
    L = max(int(flat.sum(1).max()), 1)
    order = torch.argsort((~flat).to(torch.int8), dim=1, stable=True)[:, :L]  # valid slots first, in draw order
    classes = torch.arange(C).repeat_interleave(B).expand(n, -1)
    return idx.flatten(1).gather(1, order), classes.gather(1, order), flat.gather(1, order)


def class_means(emb: torch.Tensor, classes: torch.Tensor, valid: torch.Tensor, num_classes: int) -> torch.Tensor:
    """Per client and class, the mean of the valid embeddings emb [n, L, F] of that class -> [n, C, F] (zero for a
    class with none)."""
    onehot = torch.nn.functional.one_hot(classes.to(emb.device), num_classes).to(emb.dtype)
    onehot = onehot * valid.to(emb.device, emb.dtype).unsqueeze(-1)  # [n, L, C]
    return (onehot.transpose(1, 2) @ emb) / onehot.sum(1).clamp(min=1).unsqueeze(-1)


def dm_loss(real_mean: torch.Tensor, syn_emb: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
    """Eq. 5 per client: the real class means [n, C, F] (`class_means`) against the synthetic samples' embeddings
    [n, C, dpc, F], over the classes the client holds (present [n, C]): the squared distance of the class means,
    summed over present classes -> [n]."""
    gap = ((real_mean - syn_emb.mean(2)) ** 2).sum(-1)
    return (gap * present.to(gap.dtype)).sum(-1)


def random_params(body: nn.Sequential, n: int, g: torch.Generator, device=None) -> dict[str, torch.Tensor]:
    """n freshly initialised copies of `body`'s parameters, stacked [n, ...] and named as a model's ("body.0.weight"),
    with torch's default initialisation
    (convolutions and linear layers uniform in +-1/sqrt(fan_in), normalisation weight 1 and bias 0): DM's random
    embedders, one per client."""
    params = {}
    for name, layer in body.named_modules():
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            w = layer.weight
            bound = 1.0 / math.sqrt(w[0].numel())
            params[f"body.{name}.weight"] = (torch.rand(n, *w.shape, generator=g) * 2 - 1) * bound
            if layer.bias is not None:
                params[f"body.{name}.bias"] = (torch.rand(n, *layer.bias.shape, generator=g) * 2 - 1) * bound
        elif isinstance(layer, InstanceNorm):
            params[f"body.{name}.weight"] = torch.ones(n, *layer.weight.shape)
            params[f"body.{name}.bias"] = torch.zeros(n, *layer.bias.shape)
    return {k: v.to(device) for k, v in params.items()}


def perturbed(params: dict[str, torch.Tensor], rho: float, g: torch.Generator) -> dict[str, torch.Tensor]:
    """FedDM's neighbourhood: per client (row), the parameters plus a random direction u of norm min(rho, ||u||)
    over all of them (u ~ N(0, I))."""
    u = {k: torch.randn(v.shape, generator=g).to(v.device, v.dtype) for k, v in params.items()}
    norm = torch.sqrt(sum((t ** 2).flatten(1).sum(1) for t in u.values()))
    scale = torch.clamp(rho / norm, max=1.0)
    return {k: v + scale.view(-1, *[1] * (v.dim() - 1)) * u[k] for k, v in params.items()}


def embed(group: engine.Group, x: torch.Tensor, params: dict[str, torch.Tensor]) -> torch.Tensor:
    """Body features of samples x [n, C, k, ...] under stacked params -> [n, C, k, F]."""
    n, C, k = x.shape[:3]
    return group.body_features(x.reshape(n, C * k, *x.shape[3:]), train=False, params=params).view(n, C, k, -1)


def condense(group: engine.Group, data: ClientData, syn: torch.Tensor, present: torch.Tensor, embedders, *,
             iterations: int, lr: float, momentum: float, batch: int, g: torch.Generator,
             match_logits: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Every client's synthetic set syn [n, C, dpc, ...] after `iterations` steps of Eq. 5: each step draws fresh
    embedders (`embedders()` -> stacked parameters of `group`'s model, one row per client) and a real batch per class,
    and moves S by SGD (`momentum` 0: the paper's plain step). `match_logits` adds the same loss on the logits
    (FedDM). `data` lives in S's space (FedRD passes its projected samples). Returns (S, the last step's loss per client)."""
    num_classes = syn.shape[1]
    rows = class_rows(data, num_classes)
    clients = torch.arange(data.n_clients)[:, None]
    syn = syn.detach().clone().requires_grad_(True)
    velocity = torch.zeros_like(syn)
    loss = torch.zeros(data.n_clients)
    for _ in range(iterations):
        params = embedders()
        drawn = class_batches(data, num_classes, batch, g, rows)
        if group.fast_engine:  # every client at its own size: no padding between clients, present classes only
            loss = _unpadded_loss(group, data, syn, present, params, *drawn, match_logits)
        else:
            rows_drawn, classes, valid = pack(*drawn)
            real = data.x[clients, rows_drawn.to(data.x.device)].unsqueeze(1)  # [n, 1, L, ...]
            with torch.no_grad():  # the real side is the target: no graph
                real_mean = class_means(embed(group, real, params)[:, 0], classes, valid, num_classes)
            syn_emb = embed(group, syn, params)
            loss = dm_loss(real_mean, syn_emb, present)
            if match_logits:  # the head is affine, so the logits' class means are the logits of the class means
                logits = lambda e: group.model.head_logits(e.flatten(1, -2), params, train=False).view(*e.shape[:-1], -1)  # noqa: E731
                loss = loss + dm_loss(logits(real_mean), logits(syn_emb), present)
        (grad,) = torch.autograd.grad(loss.sum(), [syn])
        with torch.no_grad():
            velocity = momentum * velocity + grad
            syn -= lr * velocity
    return syn.detach(), loss.detach()


def _unpadded_loss(group: engine.Group, data: ClientData, syn: torch.Tensor, present: torch.Tensor, params: dict,
                   idx: torch.Tensor, mask: torch.Tensor, match_logits: bool) -> torch.Tensor:
    """Eq. 5 per client as `condense`'s stacked step computes it, client by client: each embeds its own drawn real
    samples (no padding to the largest client's count) and its synthetic samples of the classes it holds (none for
    the others), under its own row of the embedders. The same draws and the same loss; other summation orders."""
    num_classes, B = idx.shape[1:]
    losses = []
    for i in range(data.n_clients):
        own = {k: v[i:i + 1] for k, v in params.items()}
        taken = mask[i].flatten()
        real = data.x[i, idx[i].flatten()[taken].to(data.x.device)].unsqueeze(0)  # [1, L_i, ...]
        classes = torch.arange(num_classes).repeat_interleave(B)[taken].unsqueeze(0)
        held = torch.nonzero(present[i].cpu()).flatten()
        if len(held) == 0 or real.shape[1] == 0:
            losses.append(syn[i].sum().unsqueeze(0) * 0)  # a client holding nothing: no loss, a zero gradient
            continue
        with torch.no_grad():  # the real side is the target: no graph
            emb = group.body_features(real, train=False, params=own)
            real_mean = class_means(emb, classes, torch.ones_like(classes, dtype=torch.bool), num_classes)[:, held]
        s = syn[i, held.to(syn.device)]  # [P, dpc, ...]
        syn_emb = group.body_features(s.reshape(1, -1, *s.shape[2:]), train=False, params=own).view(
            1, len(held), s.shape[1], -1)
        every = torch.ones(1, len(held), dtype=torch.bool, device=syn.device)
        loss = dm_loss(real_mean, syn_emb, every)
        if match_logits:
            logits = lambda e: group.model.head_logits(e.flatten(1, -2), own, train=False).view(*e.shape[:-1], -1)  # noqa: E731
            loss = loss + dm_loss(logits(real_mean), logits(syn_emb), every)
        losses.append(loss)
    return torch.cat(losses)


def train_on(group: engine.Group, samples: torch.Tensor, labels: torch.Tensor, *, epochs: int, batch: int, lr: float,
             optimizer: str, g: torch.Generator, trainable: list[str] | None = None) -> torch.Tensor:
    """The server's step: train the one-row `group` (a model) on samples [M, ...] with labels [M] for `epochs`;
    returns the mean training loss."""
    data = ClientData(samples.unsqueeze(0), labels.unsqueeze(0), torch.tensor([len(labels)]))
    stats = engine.train(group, data, trainable=trainable or list(group.params), optimizer=optimizer, lr=lr,
                         epochs=epochs, batch_size=batch, generator=g)
    return stats.loss[0]
