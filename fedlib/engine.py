"""The engine: a population of clients trained together.

Clients that share an architecture form a `Group` whose parameters are stacked ([n, ...]).
One forward/backward serves the whole group:

* fast path (`nn.Sequential` bodies of Conv2d / Linear / pooling / dropout / elementwise
  layers): activations keep the clients inside the channel dimension ([B, n*C, H, W]), so a
  convolution is one grouped convolution and a linear layer one batched matmul, with no
  transposes between layers;
* any other module: `torch.func.vmap` over `functional_call` (same mathematics, slower).

Since the per-client losses are summed and no parameter is shared, the gradient of the sum
is every client's own gradient. Optimizers are per client (Adam, SGD) and take a step mask,
so a client whose batches are used up stops exactly. `train_loop` below is the plain
per-client loop that the tests and the benchmark compare against.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, vmap

from .data import ClientData
from .models import BodyHead

ELEMENTWISE = (nn.ReLU, nn.Tanh, nn.Sigmoid, nn.GELU, nn.Hardtanh, nn.LeakyReLU, nn.ELU, nn.Softplus, nn.Identity)
POOLS = (nn.MaxPool2d, nn.AvgPool2d, nn.AdaptiveAvgPool2d, nn.Upsample)


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """"auto": `$FEDLIB_DEVICE` if set (the switch scripts/gpu_check.sh and the tests use), else the GPU when there
    is one. The resolved device's type is part of every cache key, so runs made on a GPU are kept apart."""
    if str(device) == "auto":
        forced = os.environ.get("FEDLIB_DEVICE", "")
        if forced:
            try:
                chosen = torch.device(forced)
            except (RuntimeError, ValueError):
                raise ValueError(f"FEDLIB_DEVICE={forced!r} is not a device; use cpu or cuda[:k]") from None
            if chosen.type == "cuda" and not torch.cuda.is_available():
                raise ValueError(f"FEDLIB_DEVICE={forced!r}, but this machine has no CUDA device; unset it or use cpu")
            if chosen.type not in ("cpu", "cuda"):
                raise ValueError(f"FEDLIB_DEVICE={forced!r}: fedlib runs on cpu or cuda")
            return chosen
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def full_fp32(device: torch.device) -> None:
    """On a GPU, the arithmetic of the CPU runs: fp32 without TF32 (matrix products and cuDNN's convolutions, which
    PyTorch lets use TF32 by default: a 10-bit mantissa, differences of 1e-3 seen on an H200), and cuDNN's
    deterministic algorithms, so a run repeats bit for bit on its device. Nothing on a CPU. bf16 and TF32 stay out
    of the paper numbers (issue 43); every run on CUDA is set up through here (experiments.setup, and
    Population.create for what builds a population directly)."""
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


# ----------------------------------------------------------------------------- stacked forward

def supports_stacked(body: nn.Module) -> bool:
    """Whether every layer of `body` has a stacked form: the layers below, or a module with its own
    `stacked_forward(x, params)` (x in the flat layout [n, B, F], params stacked [n, ...])."""
    if not isinstance(body, nn.Sequential):
        return False
    ok = (nn.Conv2d, nn.Linear, nn.Flatten, nn.Dropout, nn.Dropout2d, nn.Sequential) + ELEMENTWISE + POOLS
    return all((isinstance(m, ok) or hasattr(m, "stacked_forward"))
               and (not isinstance(m, nn.Sequential) or supports_stacked(m)) for m in body)


def _halves(layer: nn.Module) -> bool:
    """Whether `layer` is nn.MaxPool2d(2): a 2 x 2 window, stride 2, no padding, dilation or ceil mode."""
    pair = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v, v)  # noqa: E731
    return (isinstance(layer, nn.MaxPool2d) and pair(layer.kernel_size) == (2, 2) and pair(layer.stride) == (2, 2)
            and pair(layer.padding) == (0, 0) and pair(layer.dilation) == (1, 1) and not layer.ceil_mode
            and not layer.return_indices)


def max_pool_2x2(x: torch.Tensor) -> torch.Tensor:
    """max_pool2d(x, 2) as the maximum of each window's four strided quarters: the same values (a maximum is exact;
    an odd last row or column is dropped, as max_pool2d drops it), 6x faster on one CPU thread than the NCHW kernel
    (8.7 ms against 51.5 ms for 320 x 32 x 28 x 28; ConvNet-32's forward 1.75x faster). Without autograd only: its
    gradient would split ties where max_pool2d gives all to the first maximum."""
    x = x[..., : x.shape[-2] // 2 * 2, : x.shape[-1] // 2 * 2]
    return torch.maximum(torch.maximum(x[..., 0::2, 0::2], x[..., 0::2, 1::2]),
                         torch.maximum(x[..., 1::2, 0::2], x[..., 1::2, 1::2]))


def _children_params(params: dict, name: str) -> dict:
    return {k[len(name) + 1:]: v for k, v in params.items() if k.startswith(name + ".")}


def _stacked_sequential(seq: nn.Sequential, params: dict, x: torch.Tensor, n: int, train: bool, conv: bool):
    """x is [B, n*C, H, W] when `conv`, else [n, B, F]. Returns (x, conv)."""
    for name, layer in seq.named_children():
        if isinstance(layer, nn.Conv2d):
            w, b = params[f"{name}.weight"], params.get(f"{name}.bias")
            x = F.conv2d(x, w.reshape(-1, *w.shape[2:]), None if b is None else b.reshape(-1), layer.stride,
                         layer.padding, layer.dilation, n * layer.groups)
        elif isinstance(layer, nn.Linear):
            w, b = params[f"{name}.weight"], params.get(f"{name}.bias")
            x = torch.bmm(x, w.transpose(1, 2)) if b is None else torch.baddbmm(b.unsqueeze(1), x, w.transpose(1, 2))
        elif hasattr(layer, "stacked_forward"):  # a module that says how it acts on stacked clients
            x = layer.stacked_forward(x, _children_params(params, name))
        elif isinstance(layer, nn.Flatten):
            if conv:
                x, conv = x.reshape(x.shape[0], n, -1).transpose(0, 1), False
            else:
                x = x.flatten(2)
        elif isinstance(layer, nn.Dropout2d):
            x = F.dropout2d(x, layer.p, train)  # a channel of the stacked layout is one client's channel
        elif isinstance(layer, nn.Dropout):
            x = F.dropout(x, layer.p, train)
        elif isinstance(layer, nn.Sequential):
            x, conv = _stacked_sequential(layer, _children_params(params, name), x, n, train, conv)
        elif _halves(layer) and not (torch.is_grad_enabled() and x.requires_grad):  # evaluation, DM's real side
            x = max_pool_2x2(x)
        else:  # elementwise and pooling layers act per channel, so per client
            x = layer(x)
    return x, conv


@dataclass
class Group:
    """Clients of one architecture. params[name] is [n, *shape]; `model` is the template (on the meta device)."""
    model: BodyHead
    clients: torch.Tensor
    params: dict[str, torch.Tensor]
    buffers: dict[str, torch.Tensor] = field(default_factory=dict)
    fast_engine: bool = False  # Config.fast_engine: the wide-layer fast path of `train` and `evaluate` (last bits move)
    # (kind, names) -> the optimizer `train` used last, kept with its state's buffers for the next training of the
    # same tensors (restarted in place: every round's step then reads and writes the same addresses)
    optimizers: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __getstate__(self):  # a checkpoint keeps no optimizer (each training restarts its own)
        return {k: v for k, v in self.__dict__.items() if k != "optimizers"}

    def __setstate__(self, state):
        self.__dict__.update(state, optimizers={})

    def __post_init__(self):
        self.fast = supports_stacked(self.model.body) and not self.buffers
        self.normalises = any(type(m).__name__ == "InstanceNorm" for m in self.model.body.modules())

    @property
    def n(self) -> int:
        return len(self.clients)

    def module(self, row: int) -> BodyHead:
        """A standalone copy of the model of the group's `row`-th client (for inspection and plots)."""
        device = next(iter(self.params.values())).device
        m = copy.deepcopy(self.model).to_empty(device=device)
        m.load_state_dict({**{k: v[row] for k, v in self.params.items()}, **{k: v[row] for k, v in self.buffers.items()}})
        return m.eval()

    def names(self, part: str) -> list[str]:
        return [k for k in self.params if k.startswith(part + ".")]

    def row(self, i: int, names: list[str] | None = None) -> dict[str, torch.Tensor]:
        """Copies of the parameters (`names`, default all) of the group's `i`-th row, unbatched."""
        return {k: self.params[k][i].clone() for k in (self.params if names is None else names)}

    def subset(self, rows: torch.Tensor) -> "Group":
        """A group of the clients at `rows` (positions in this group), with copies of their parameters."""
        rows = torch.as_tensor(rows, dtype=torch.long)
        on = lambda t: rows.to(t.device)  # noqa: E731
        return Group(self.model, self.clients[rows], {k: v[on(v)].clone() for k, v in self.params.items()},
                     {k: v[on(v)].clone() for k, v in self.buffers.items()}, self.fast_engine)

    def assign(self, rows: torch.Tensor, sub: "Group") -> None:
        """Write the parameters of `sub` (made by `subset(rows)`) back into their rows."""
        rows = torch.as_tensor(rows, dtype=torch.long)
        for store, new in ((self.params, sub.params), (self.buffers, sub.buffers)):
            for k, v in new.items():
                store[k][rows.to(v.device)] = v

    def append_body_module(self, module: nn.Module) -> str:
        """Append `module` to every client's body, its parameters copied into every row; returns its name in the
        body. The fast path stays on if the module has a stacked form (see `supports_stacked`)."""
        index = str(len(self.model.body))
        device = next(iter(self.params.values())).device
        for k, v in module.named_parameters():
            self.params[f"body.{index}.{k}"] = v.detach().to(device).expand(self.n, *v.shape).clone()
        self.model.body.append(module.to("meta"))
        self.fast = supports_stacked(self.model.body) and not self.buffers
        return index

    def body_features(self, x: torch.Tensor, train: bool, params: dict | None = None,
                      upto: int | None = None) -> torch.Tensor:
        """x [n, B, ...] -> features [n, B, m-1]; with `upto`, the output of body[:upto] (conv outputs flattened)."""
        params = self.params if params is None else params
        n, B = x.shape[:2]
        body_module = self.model.body if upto is None else self.model.body[:upto]
        body = {k[5:]: v for k, v in params.items() if k.startswith("body.")}
        bufs = {k[5:]: v for k, v in self.buffers.items() if k.startswith("body.")}
        if upto is not None:  # only the parameters and buffers of the layers kept
            kept = tuple(f"{name}." for name, _ in body_module.named_children())
            body = {k: v for k, v in body.items() if k.startswith(kept)}
            bufs = {k: v for k, v in bufs.items() if k.startswith(kept)}
        if self.fast:
            conv = x.dim() == 5
            h = x.transpose(0, 1).reshape(B, n * x.shape[2], *x.shape[3:]) if conv else x
            if conv and h.device.type == "cpu" and not (self.fast_engine and self.normalises):
                # oneDNN's grouped convolutions run ~2.5x faster channels-last; instance norm (group_norm) runs 2.5x
                # slower so, and the fast engine keeps a body that has it in NCHW
                h = h.contiguous(memory_format=torch.channels_last)
            h, conv = _stacked_sequential(body_module, body, h, n, train, conv)
            if conv:  # a body that ends in a conv layer: flatten per client
                h = h.reshape(B, n, -1).transpose(0, 1)
            return h
        body_module.train(train)
        call = lambda p, b, xi: functional_call(body_module, {**p, **b}, (xi,))  # noqa: E731
        out = vmap(call, randomness="different" if train else "error")(body, bufs, x)
        return out if upto is None else out.flatten(2)

    def forward(self, x: torch.Tensor, train: bool, params: dict | None = None):
        """Returns (features [n, B, m-1], logits [n, B, classes]); the model's `head_logits` is the head step."""
        params = self.params if params is None else params
        feats = self.body_features(x, train, params)
        return feats, self.model.head_logits(feats, params, train)


def server_group(model: BodyHead, params: dict[str, torch.Tensor], fast_engine: bool = False) -> Group:
    """A model the server holds (`params` unbatched, copied) as a group of one row, so that the engine's batched
    training and features apply to it as to a client's."""
    return Group(model, torch.tensor([0]), {k: v.unsqueeze(0).clone() for k, v in params.items()},
                 fast_engine=fast_engine)


def functional_group(model: BodyHead, clients: torch.Tensor, fast_engine: bool = False) -> Group:
    """A group of `model`'s architecture holding no parameters, for code that supplies them per call (FedDM's and
    FedRD's randomly drawn embedders)."""
    return Group(model, clients, {}, fast_engine=fast_engine)


class Population:
    """All clients, as groups of equal architecture. Client ids are global (0..N-1)."""

    def __init__(self, groups: list[Group], n_clients: int):
        self.groups, self.n_clients = groups, n_clients

    @staticmethod
    def create(models: list[BodyHead], same_init: bool, unify_head: bool = True,
               device: torch.device | str = "cpu", fast_engine: bool = False) -> "Population":
        """`models[i]` is client i's freshly initialised model. With `same_init`, every client of an architecture
        starts from the first such client's weights (Table 1); with `unify_head`, every head starts equal.
        `fast_engine`: the groups' training and evaluation take the wide-layer fast path (`train`). On a GPU it
        computes in full fp32 (`full_fp32`), built through `experiments.setup` or directly (the benchmarks)."""
        full_fp32(torch.device(device))
        by_arch: dict[str, list[int]] = {}
        for i, m in enumerate(models):
            key = repr(m)
            by_arch.setdefault(key, []).append(i)
        first_head = {k: v.detach().clone() for k, v in models[0].head.state_dict().items()}
        groups = []
        for clients in by_arch.values():
            members = [models[clients[0]]] * len(clients) if same_init else [models[i] for i in clients]
            params = {k: torch.stack([dict(m.named_parameters())[k].detach() for m in members]).to(device).clone()
                      for k, _ in members[0].named_parameters()}
            if unify_head:
                for k, v in first_head.items():
                    if params[f"head.{k}"].shape[1:] != v.shape:
                        raise ValueError(f"clients' heads differ in shape ({tuple(params[f'head.{k}'].shape[1:])} vs "
                                         f"{tuple(v.shape)}): every body must output the same number of features")
                    params[f"head.{k}"][:] = v.to(device)
            buffers = {k: torch.stack([dict(m.named_buffers())[k] for m in members]).to(device)
                       for k, _ in members[0].named_buffers()}
            template = models[clients[0]].to("meta")
            groups.append(Group(template, torch.tensor(clients), params, buffers, fast_engine))
        return Population(groups, len(models))

    @property
    def template(self) -> BodyHead:
        """The architecture of client 0 (on the meta device: shapes and layers, no numbers)."""
        return self.groups[0].model

    def param_names(self) -> list[str]:
        """Parameter names of client 0's model, in order."""
        return list(self.groups[0].params)

    def append_to_bodies(self, make: Callable[[Group], nn.Module]) -> list[str]:
        """Append `make(group)` to the body of every client (e.g. a clipping layer, FedDBE's bias); returns the
        module's name in each group's body."""
        return [g.append_body_module(make(g)) for g in self.groups]

    def set_all(self, name: str, value: torch.Tensor) -> None:
        """Write the same tensor into parameter `name` of every client (a downlink that every client loads)."""
        for g in self.groups:
            g.params[name].copy_(value.to(g.params[name].device).expand_as(g.params[name]))

    def receive(self, down, names) -> None:
        """A downlink `down` (a Message) loaded by its clients: parameter k of each becomes down[k], for k in `names`."""
        for k in names:
            self.set_clients(k, down[k], down.clients)

    def set_clients(self, name: str, value: torch.Tensor, clients: torch.Tensor) -> None:
        """Write the same tensor into parameter `name` of the given clients only (a downlink to participants)."""
        if len(clients) == self.n_clients:
            return self.set_all(name, value)
        wanted = torch.as_tensor(clients)
        for g in self.groups:
            rows = torch.nonzero(torch.isin(g.clients, wanted)).flatten().to(g.params[name].device)
            g.params[name][rows] = value.to(g.params[name].device)

    def scatter(self, name: str, values: torch.Tensor, clients: torch.Tensor) -> None:
        """Write each client's own tensor: parameter `name` of clients[i] becomes values[i] (a per-client downlink)."""
        position = torch.full((self.n_clients,), -1, dtype=torch.long)
        position[torch.as_tensor(clients).cpu()] = torch.arange(len(clients))
        for g in self.groups:
            pos = position[g.clients.cpu()]
            rows = torch.nonzero(pos >= 0).flatten()
            if len(rows):
                dev = g.params[name].device
                g.params[name][rows.to(dev)] = values[pos[rows].to(values.device)].to(dev)

    def gather(self, name: str, clients: torch.Tensor | None = None) -> torch.Tensor:
        """Parameter `name` of the given clients (default all) in that order [K, ...]; every group must have it,
        with the same shape."""
        parts = [(g.clients, g.params[name]) for g in self.groups]
        if clients is None or len(clients) == self.n_clients and torch.equal(torch.as_tensor(clients),
                                                                              torch.arange(self.n_clients)):
            if len(parts) == 1 and torch.equal(parts[0][0], torch.arange(self.n_clients)):
                return parts[0][1].clone()  # one group in client order: a copy, as the scatter below gives
            out = parts[0][1].new_empty((self.n_clients, *parts[0][1].shape[1:]))
            for ids, value in parts:
                out[ids.to(out.device)] = value
            return out
        wanted = torch.as_tensor(clients).cpu()  # only the requested rows are copied (not every client's)
        position = torch.full((self.n_clients,), -1, dtype=torch.long)  # each client's row in its group
        owner = torch.empty(self.n_clients, dtype=torch.long)  # and its group
        for gi, (ids, _) in enumerate(parts):
            position[ids], owner[ids] = torch.arange(len(ids)), gi
        if len(parts) == 1:
            value = parts[0][1]
            return value[position[wanted].to(value.device)]
        out = parts[0][1].new_empty((len(wanted), *parts[0][1].shape[1:]))
        for gi, (_, value) in enumerate(parts):
            mine = torch.nonzero(owner[wanted] == gi).flatten()
            if len(mine):
                out[mine.to(out.device)] = value[position[wanted[mine]].to(value.device)]
        return out


# ----------------------------------------------------------------------------- optimizers

class Adam:
    """Adam on stacked parameters, one state per client; `active` [n] masks whole clients out of a step.

    Each arithmetic step is one `torch._foreach_*` operation over every tensor (on a GPU, a few kernel launches for
    all of them; on the CPU one call that loops in C++), not one operation per tensor: a FedAvg step of the MNIST
    CNN (8 tensors) issued about 14 operations a tensor here (`benchmarks/bench_ops.py`). Element by element the
    arithmetic is the same as torch's per-tensor operations in the same order, so the results are bit for bit those
    of the per-tensor form (tests/test_engine.py keeps that form and checks it, with and without a mask).

    The step's two intermediates (the denominator and the update) live in buffers the optimizer keeps, like its
    moments, rather than in tensors made anew each step: each is the size of the parameters (4.4 MB at 50 MNIST
    CNNs), and a fresh one cost page faults on every step (glibc's allocator hands such sizes back to the kernel).
    The step then reads and writes the same memory every time (what a captured graph needs); the bits are the same
    (the update is m times the rate where it was the rate times m, an exact commutation). The price: the optimizer
    holds four copies of the parameters' size between steps, not two (the peak within a step is unchanged)."""

    def __init__(self, params: dict[str, torch.Tensor], lr: float, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0):
        self.lr, self.b1, self.b2, self.eps, self.wd = lr, betas[0], betas[1], eps, weight_decay
        self.names = list(params)
        self.m = [torch.zeros_like(v) for v in params.values()]
        self.v = [torch.zeros_like(v) for v in params.values()]
        self.denom = [torch.empty_like(v) for v in params.values()]
        self.update = [torch.empty_like(v) for v in params.values()]
        n = next(iter(params.values())).shape[0]
        self.t = torch.zeros(n, device=next(iter(params.values())).device)

    def restart(self, lr: float) -> None:
        """A fresh optimizer's state (zero moments, step 0) in the buffers this one holds, at learning rate `lr`."""
        self.lr = lr
        torch._foreach_zero_([*self.m, *self.v, self.t])

    @torch.no_grad()
    def step(self, params: dict, grads: dict, active: torch.Tensor | None = None) -> None:
        all_active = active is None  # the caller passes a mask only when some client sits out (no host sync here)
        self.t += 1 if all_active else active.float()
        bc1, bc2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        ps = [params[k] for k in self.names]
        gs = [grads[k] for k in self.names]
        if self.wd:
            gs = torch._foreach_add(gs, torch._foreach_mul(ps, self.wd))
        root, rate = bc2.sqrt(), self.lr / bc1  # a client's factors, shaped below for each number of dimensions
        per_client = {d: (root.view((-1,) + (1,) * (d - 1)), rate.view((-1,) + (1,) * (d - 1)))
                      for d in {p.dim() for p in ps}}
        if all_active:  # the moments in place (their buffers stay where they are from step to step)
            m, v = self.m, self.v
            torch._foreach_lerp_(m, gs, 1 - self.b1)
            torch._foreach_mul_(v, self.b2)
        else:
            m, v = torch._foreach_lerp(self.m, gs, 1 - self.b1), torch._foreach_mul(self.v, self.b2)
        torch._foreach_addcmul_(v, gs, gs, value=1 - self.b2)
        denom, update = self.denom, self.update
        torch._foreach_copy_(denom, v)
        torch._foreach_sqrt_(denom)
        torch._foreach_div_(denom, [per_client[p.dim()][0] for p in ps])
        torch._foreach_add_(denom, self.eps)
        torch._foreach_copy_(update, m)
        torch._foreach_mul_(update, [per_client[p.dim()][1] for p in ps])
        torch._foreach_div_(update, denom)
        if all_active:
            torch._foreach_sub_(ps, update)
            return
        new = torch._foreach_sub(ps, update)
        masks = [active.view((-1,) + (1,) * (p.dim() - 1)) for p in ps]
        torch._foreach_copy_(self.m, [torch.where(k, a, b) for k, a, b in zip(masks, m, self.m)])
        torch._foreach_copy_(self.v, [torch.where(k, a, b) for k, a, b in zip(masks, v, self.v)])
        torch._foreach_copy_(ps, [torch.where(k, a, b) for k, a, b in zip(masks, new, ps)])


class SGD:
    """SGD on stacked parameters. `fused` (the fast engine): without momentum or weight decay the step is one in-place
    `addcmul_`/`add_` per tensor, with no temporaries (the last bits differ from `p - lr * g`)."""

    def __init__(self, params: dict[str, torch.Tensor], lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 fused: bool = False):
        self.lr, self.mu, self.wd = lr, momentum, weight_decay
        self.fused = fused and not momentum and not weight_decay
        self.buf: dict[str, torch.Tensor] = {}

    @torch.no_grad()
    def step(self, params: dict, grads: dict, active: torch.Tensor | None = None) -> None:
        if self.fused:
            return self._fused_step(params, grads, active)
        for k, p in params.items():
            g = grads[k] if not self.wd else grads[k] + self.wd * p
            if self.mu:
                buf = g.clone() if k not in self.buf else self.buf[k] * self.mu + g
                if active is not None and k in self.buf:
                    buf = torch.where(active.view((-1,) + (1,) * (p.dim() - 1)), buf, self.buf[k])
                self.buf[k] = buf
                g = buf
            if active is not None:
                g = g * active.view((-1,) + (1,) * (p.dim() - 1)).to(g.dtype)
            lr = self.lr.view((-1,) + (1,) * (p.dim() - 1)) if torch.is_tensor(self.lr) else self.lr  # per client
            p.sub_(lr * g)

    def restart(self, lr: float) -> None:
        """A fresh optimizer's state (no momentum yet) at learning rate `lr`."""
        self.lr, self.buf = lr, {}

    def _fused_step(self, params: dict, grads: dict, active: torch.Tensor | None) -> None:
        rate = None
        if torch.is_tensor(self.lr) or active is not None:  # one factor per client: -lr, 0 for a client sitting out
            first = next(iter(params.values()))
            rate = -(self.lr.to(first) if torch.is_tensor(self.lr) else torch.full((first.shape[0],), self.lr,
                                                                                      dtype=first.dtype,
                                                                                      device=first.device))
            if active is not None:
                rate = rate * active.to(rate.dtype)
        for k, p in params.items():
            if rate is None:
                p.add_(grads[k], alpha=-self.lr)
            else:
                p.addcmul_(grads[k], rate.view((-1,) + (1,) * (p.dim() - 1)))


def make_optimizer(kind: str, params: dict, lr: float, fused: bool = False, **kw):
    if kind == "adam":
        return Adam(params, lr, **kw)
    if kind == "sgd":
        return SGD(params, lr, fused=fused, **kw)
    raise ValueError(f"unknown optimizer {kind!r}; choose adam or sgd")


# ----------------------------------------------------------------------------- batches

def steps_per_epoch(counts: torch.Tensor, batch_size: int, drop_last: bool = False) -> torch.Tensor:
    """Each client's batches per local epoch: ceil(n_c / B), or floor(n_c / B) with `drop_last`."""
    if drop_last:
        return counts // batch_size  # as the DataLoader: a client with fewer than B samples takes no step
    return (counts + batch_size - 1) // batch_size


def batch_schedule(counts: torch.Tensor, batch_size: int, epochs: int, generator: torch.Generator,
                   drop_last: bool = False):
    """Every client shuffles its own samples each epoch and walks them in batches (the last one partial; with
    `drop_last`, only full batches, as torch's DataLoader(drop_last=True): the samples left over sit out that epoch).
    Returns idx [S, n, B] and valid [S, n, B]; client c is active in the first epochs*steps_per_epoch steps."""
    n, n_max = len(counts), int(counts.max())
    per_epoch = steps_per_epoch(counts, batch_size, drop_last)  # [n]
    steps = int((per_epoch * epochs).max())
    keys = torch.rand(epochs, n, n_max, generator=generator)
    keys[:, torch.arange(n_max)[None, :] >= counts[:, None]] = 2.0  # padding sorts last
    perms = keys.argsort(dim=2)  # [E, n, n_max]: a permutation of the valid samples first
    s = torch.arange(steps)[:, None]
    epoch = (s // per_epoch.clamp(min=1)[None, :]).clamp(max=epochs - 1)  # [S, n]
    pos = (s % per_epoch.clamp(min=1)[None, :])[:, :, None] * batch_size + torch.arange(batch_size)  # [S, n, B]
    valid = (pos < counts[None, :, None]) & (s < (per_epoch * epochs)[None, :])[:, :, None]
    idx = perms[epoch[:, :, None], torch.arange(n)[None, :, None], pos.clamp(max=n_max - 1)]
    return torch.where(valid, idx, 0), valid


def masked_cross_entropy(logits: torch.Tensor, y: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Per-client mean cross-entropy over the valid samples: logits [n, B, C] -> [n]."""
    ce = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(y.shape)
    w = valid.to(ce.dtype)
    return (ce * w).sum(1) / w.sum(1).clamp(min=1)


def squared_distance(params: dict, anchor: dict, names) -> torch.Tensor:
    """Per client, ||params - anchor||^2 over `names` (stacked params [n, ...], anchor one unstacked model): the
    proximal terms of FedProx and Ditto. A weight the fast engine laid out column-major (`column_major`) meets an
    anchor laid out the same way, and is summed without a flattening copy."""
    total = 0
    for k in names:
        p, a = params[k], anchor[k].to(params[k].device)
        if _is_column_major(p):
            a = a.transpose(-1, -2).contiguous().transpose(-1, -2) if a.dim() >= 2 and a.stride()[-1] == 1 else a
            total = total + ((p - a) ** 2).sum(dim=tuple(range(1, p.dim())))
        else:
            total = total + ((p - a) ** 2).flatten(1).sum(1)
    return total


def _is_column_major(t: torch.Tensor) -> bool:
    """A stacked matrix [n, rows, cols] whose rows are the fast index (the fast engine's Linear weights)."""
    return t.dim() == 3 and t.shape[1] > 1 and t.shape[2] > 1 and t.stride()[1] == 1


def column_major(t: torch.Tensor) -> torch.Tensor:
    """A copy of a stacked matrix [n, out, in] laid out so that `t.transpose(1, 2)` is contiguous: a linear layer's
    `x @ w.T` then reads its weight in order, and autograd returns the weight's gradient in the weight's own layout
    (with a row-major weight it comes back transposed, and every elementwise pass over the two crosses orders)."""
    return t.transpose(1, 2).contiguous().transpose(1, 2)


LossFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, dict], torch.Tensor]


class Step(NamedTuple):
    """What one local step saw, for `train`'s `on_step` hook (statistics a method gathers while training)."""
    feats: torch.Tensor  # [n, B, ...] the body's outputs (detached)
    logits: torch.Tensor  # [n, B, ...] (detached)
    y: torch.Tensor  # [n, B]
    valid: torch.Tensor  # [n, B] the real samples of each client's batch
    clients: torch.Tensor  # [n]
    epoch: torch.Tensor  # [n] the local epoch each client is in (0-based)
    epochs: int  # the local epochs of this training


def default_loss(feats, logits, y, valid, clients, params):
    return masked_cross_entropy(logits, y, valid)


default_loss.rowwise = True  # each row's loss depends on that row's inputs alone: `train` may skip finished rows


class TrainStats(NamedTuple):
    loss: torch.Tensor  # [n] each client's mean training loss over its steps
    steps: torch.Tensor  # [n] each client's number of optimizer steps (FedNova's tau_i)


def train(group: Group, data: ClientData, *, trainable: list[str], optimizer: str, lr: float, epochs: int,
          batch_size: int, generator: torch.Generator, loss_fn: LossFn = default_loss,
          optimizer_kw: dict | None = None, until_converged: bool = False, tol: float = 0.01,
          augment: bool = False, own_optimizer: dict[str, tuple[str, float]] | None = None,
          clip_norm: float = 0.0, on_step: Callable[[Step], None] | None = None,
          drop_last: bool = False, skip_finished: bool = False, capture: bool = False) -> TrainStats:
    """Local training of every client in `group` on its rows of `data`; `generator` draws the batch order.
    `loss_fn(features, logits, y, valid, clients, params) -> [n]` lets an algorithm add its own terms; `params`
    are the group's current stacked parameters (those being trained carry gradients).
    `until_converged`: train to the local optimum (Section 4.3): a client stops after the first epoch whose
    mean loss is not `tol` (relative) below its best epoch so far; `epochs` is then the cap.
    `augment`: random crops and horizontal flips of every training image (`crop_flip`).
    `own_optimizer`: trainable parameters stepped by an optimizer of their own, name -> (kind, lr) (FedDBE's
    bias: SGD beside the model's Adam); every optimizer steps after the same backward pass.
    `clip_norm` > 0: each client's gradient (all its trained parameters together) is scaled to norm at most
    `clip_norm` before the step, as torch's clip_grad_norm_ does for one model (FedCR's authors clip at 10).
    `on_step(Step)`: called at every step with what the step saw (FedCR's Eq. 8 sums over the last epoch).
    `drop_last`: each epoch walks only full batches (`batch_schedule`).
    `skip_finished`: a step computes only the clients still training in it (`_step_rows`, Config.skip_finished).
    `capture` (Config.capture_steps): the steps on which every client trains replay one recorded step (`StepGraph`),
    each batch at full width, where a step can be replayed (`capturable`); other steps run as usual."""
    idx, valid = batch_schedule(data.counts, batch_size, epochs, generator, drop_last)
    everyone = valid.any(2).all(1).tolist()  # per step, whether every client is active (on the host: no sync)
    fast = group.fast_engine  # each step's batch then ends at its last valid sample (valid samples come first)
    graphed = capture and capturable(group, loss_fn, optimizer, optimizer_kw or {}, until_converged, on_step)
    widths = valid.sum(2).amax(1).clamp(min=1).tolist() if fast and not graphed else None  # replays need one shape
    dev = data.x.device
    idx, valid, rows = idx.to(dev), valid.to(dev), torch.arange(group.n, device=dev)[:, None]
    stop = _ConvergenceStop(data.counts.to(dev), batch_size, tol, drop_last) if until_converged else None
    params = _trained_params(group, trainable)
    opt_params = {k: params[k] for k in trainable}
    optimizers = _optimizers(opt_params, optimizer, lr, optimizer_kw or {}, own_optimizer or {}, fused=fast,
                             kept=group.optimizers)
    skip = skip_finished and on_step is None and not group.buffers and getattr(loss_fn, "rowwise", False)
    per_epoch = steps_per_epoch(data.counts.to(dev), batch_size, drop_last).clamp(min=1)  # batch_schedule's rule
    total, steps, replay = torch.zeros(group.n, device=dev), torch.zeros(group.n, device=dev), None
    for s in range(idx.shape[0]):
        active = valid[s].any(1)
        if stop is not None:
            active &= ~stop.done
            if not bool(active.any()):
                break
        ids, ok = (idx[s], valid[s]) if widths is None else (idx[s, :, :widths[s]], valid[s, :, :widths[s]])
        full = everyone[s] if stop is None else bool(active.all())
        on = active.nonzero().flatten() if skip and not full else None
        if graphed and full and replay is not None:
            loss = replay(ids, ok)
        else:
            loss = _eager_step(group, params, data, ids, ok, on, rows, augment, loss_fn, opt_params, optimizers,
                               clip_norm, fast, None if full else active, on_step, (s // per_epoch, epochs))
            if graphed and full:  # that step warmed up the kernels and buffers: the next ones replay it
                replay = StepGraph(partial(_whole_step, group, params, data, rows, augment, loss_fn, opt_params,
                                           optimizers, clip_norm, fast), ids, ok, optimizers)
        total += loss * active
        steps += active
        if stop is not None:
            stop.update(s, loss.detach() * ok.sum(1), active)
    for v in group.params.values():
        v.requires_grad_(False)
    return TrainStats(total / steps.clamp(min=1), steps)


def step_loss(group: Group, params: dict, data, ids: torch.Tensor, ok: torch.Tensor, on: torch.Tensor | None,
              rows: torch.Tensor, augment: bool, loss_fn: LossFn):
    """The first half of one local step of `train`: the batch (`_step_rows`), the forward pass and each row's loss.
    Returns (features, logits, labels, loss [rows])."""
    step_group, step_params, step_ok, x, y = _step_rows(group, params, data, ids, ok, on, rows, augment)
    feats, logits = step_group.forward(x, train=True, params=step_params)
    return feats, logits, y, loss_fn(feats, logits, y, step_ok, step_group.clients, step_params)


def step_update(loss: torch.Tensor, opt_params: dict, optimizers: list, clip_norm: float, fast: bool,
                active: torch.Tensor | None) -> None:
    """The second half: the gradients of the summed loss, each client's clipped to `clip_norm`, and every optimizer's
    step (`active`: the clients that step, None for all). Neither half reads a tensor's value on the host, so a
    whole step is one graph (tests/test_capture.py)."""
    grads = dict(zip(opt_params, torch.autograd.grad(loss.sum(), list(opt_params.values()))))
    if clip_norm:
        grads = clip_per_client_(grads, clip_norm) if fast else clip_per_client(grads, clip_norm)
    for opt, names in optimizers:
        opt.step({k: opt_params[k] for k in names}, grads, active)


def _eager_step(group, params, data, ids, ok, on, rows, augment, loss_fn, opt_params, optimizers, clip_norm, fast,
                active, on_step, epoch_of) -> torch.Tensor:
    """One step of `train` as it runs without a replay: `step_loss`, `on_step` (told the step's epoch, `epoch_of` =
    (steps done // steps per epoch, epochs)), `step_update`; each row's loss, detached (0 for a row that sat out)."""
    feats, logits, y, loss = step_loss(group, params, data, ids, ok, on, rows, augment, loss_fn)
    if on_step is not None:
        done, epochs = epoch_of
        on_step(Step(feats.detach(), logits.detach(), y, ok, group.clients, done.clamp(max=epochs - 1), epochs))
    step_update(loss, opt_params, optimizers, clip_norm, fast, active)
    return loss.detach() if on is None else loss.new_zeros(group.n).index_copy(0, on, loss.detach())  # per row


def capturable(group: Group, loss_fn: LossFn, optimizer: str, optimizer_kw: dict, until_converged: bool,
               on_step) -> bool:
    """Whether `train`'s steps can be recorded once and replayed: nothing read on the host between steps (no
    convergence test, no `on_step`), a loss marked `rowwise` (no state of its own that a replay would not update), no
    buffers (batch norm's running statistics), and an optimizer whose state stays in its buffers (Adam, or SGD
    without momentum: its momentum buffers are made anew each step)."""
    steady = optimizer == "adam" or (optimizer == "sgd" and not optimizer_kw.get("momentum"))
    return (steady and not until_converged and on_step is None and not group.buffers
            and getattr(loss_fn, "rowwise", False))


def _whole_step(group, params, data, rows, augment, loss_fn, opt_params, optimizers, clip_norm, fast, ids, ok):
    """One step of every client (none sitting out) on the batch `ids`, `ok`: `step_loss` then `step_update`;
    each row's loss, detached."""
    *_, loss = step_loss(group, params, data, ids, ok, None, rows, augment, loss_fn)
    step_update(loss, opt_params, optimizers, clip_norm, fast, None)
    return loss.detach()


class StepGraph:
    """A local step recorded once and replayed at every later step (Config.capture_steps). The step reads its batch
    from two static buffers, which each call refills, and its parameters and optimizer state from where they are.
    On CUDA it is a `torch.cuda.CUDAGraph`, recorded after one eager step has warmed the kernels and allocated the
    buffers (dropout and crops draw from the graph-safe generator); elsewhere the same step runs eagerly through the
    same buffers, which is what the CPU tests check. Each call checks that no optimizer state tensor has moved, since
    a replay would go on writing where it was."""

    def __init__(self, step, ids: torch.Tensor, ok: torch.Tensor, optimizers: list):
        self.step, self.ids, self.ok, self.optimizers = step, ids.clone(), ok.clone(), optimizers
        self.where = self._state()
        self.graph, self.loss = None, None
        if ids.is_cuda:  # recorded on the capture's own stream; nothing runs until the first replay
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.loss = step(self.ids, self.ok)

    def __call__(self, ids: torch.Tensor, ok: torch.Tensor) -> torch.Tensor:
        self.ids.copy_(ids)
        self.ok.copy_(ok)
        if self.graph is None:
            self.loss = self.step(self.ids, self.ok)
        else:
            self.graph.replay()
        if self._state() != self.where:
            raise RuntimeError("a replayed step's optimizer state moved; Config.capture_steps cannot be used with this "
                               "method and optimizer (turn it off)")
        return self.loss.clone()

    def _state(self) -> list[int]:
        """Where every state tensor of the optimizers is (their state as they hold it now, not as it was)."""
        return [t.data_ptr() for opt, _ in self.optimizers for t in _optimizer_tensors(opt)]


def _optimizer_tensors(opt) -> list[torch.Tensor]:
    """The tensors an optimizer's step writes: Adam's moments, step counts and intermediates' buffers, SGD's momentum
    buffers."""
    if isinstance(opt, Adam):
        return [*opt.m, *opt.v, opt.t, *opt.denom, *opt.update]
    return list(getattr(opt, "buf", {}).values())


def _step_rows(group: Group, params: dict, data, ids: torch.Tensor, ok: torch.Tensor, on: torch.Tensor | None,
               rows: torch.Tensor, augment: bool = False):
    """What one step of `train` computes on: (group, parameters, valid mask, x, y) of every row, or, with `on`
    (skip_finished), of those rows only: a group of their clients and their parameters' rows (indexed, so the
    gradients still reach the whole stacked parameters, zero in the rows that sat out). A ragged federation's
    clients with fewer batches, or clients stopped early, then sit out instead of passing empty batches through
    the model; their optimizer is masked either way, so the mathematics is the same, but dropout and noise draw
    for fewer clients and kernels see other shapes (so opt-in). Only for a loss marked `rowwise` (each row's loss
    a function of that row alone: the default, FedProx's), and not with `on_step` or buffers (batch norm): a loss
    that keeps state per row across steps (FedDBE's running mean) and those see every row. `rows`: every row's
    index [n, 1]; `augment`: the images randomly cropped and flipped (`crop_flip`)."""
    if on is None:
        sub, x, y = group, data.x[rows, ids], data.y[rows, ids]
    else:
        sub = Group(group.model, group.clients[on.to(group.clients.device)], {}, group.buffers, group.fast_engine)
        params, ok, ids = {k: v[on] for k, v in params.items()}, ok[on], ids[on]
        x, y = data.x[on[:, None], ids], data.y[on[:, None], ids]
    return sub, params, ok, crop_flip(x) if augment else x, y


def _trained_params(group: Group, trainable: list[str]) -> dict[str, torch.Tensor]:
    """The group's parameters, those in `trainable` carrying gradients. The fast engine lays the stacked Linear
    weights out column-major while they train (`column_major`; the values are unchanged)."""
    if group.fast_engine:
        for k in trainable:
            if group.params[k].dim() == 3 and k.endswith("weight"):
                group.params[k] = column_major(group.params[k])
    return {k: v.requires_grad_(k in trainable) for k, v in group.params.items()}


def clip_per_client(grads: dict[str, torch.Tensor], max_norm: float) -> dict[str, torch.Tensor]:
    """Scale each client's gradient (row of every stacked tensor) to total norm at most `max_norm`, with torch's
    clip_grad_norm_ rule: factor max_norm / (norm + 1e-6), capped at 1."""
    norm = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    factor = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    return {k: g * factor.view((-1,) + (1,) * (g.dim() - 1)).to(g.dtype) for k, g in grads.items()}


def clip_per_client_(grads: dict[str, torch.Tensor], max_norm: float) -> dict[str, torch.Tensor]:
    """`clip_per_client` for the fast engine: the norms summed over each tensor's own layout, with no flattening
    copy, and the gradients scaled in place (the last bits of the norm differ from the flattened sum)."""
    norm = torch.sqrt(sum(torch.linalg.vector_norm(g, dim=tuple(range(1, g.dim()))) ** 2 for g in grads.values()))
    factor = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    for g in grads.values():
        g.mul_(factor.view((-1,) + (1,) * (g.dim() - 1)).to(g.dtype))
    return grads


def _optimizers(params: dict, kind: str, lr: float, kw: dict, own: dict[str, tuple[str, float]], fused: bool = False,
                kept: dict | None = None):
    """[(optimizer, its parameter names)]: one for the parameters without an own optimizer (first, so a plain
    run is exactly one optimizer over every trainable parameter), then one per (kind, lr) of `own`. `fused`: SGD's
    in-place step (the fast engine). `kept` (the group's `optimizers`): an optimizer of the same kind, settings and
    tensors as last time is restarted in place rather than made anew (the same numbers: zeros either way)."""
    unknown = set(own) - set(params)
    if unknown:
        raise ValueError(f"own_optimizer names parameters that are not trained: {sorted(unknown)}")
    plan: dict[tuple[str, float], list[str]] = {(kind, lr): [k for k in params if k not in own]}
    for k in params:
        if k in own:
            plan.setdefault(own[k], []).append(k)
    out = []
    for (knd, rate), names in plan.items():
        if not names:
            continue
        settings = kw if (knd, rate) == (kind, lr) else {}
        tensors = [(params[k].data_ptr(), tuple(params[k].shape), params[k].dtype) for k in names]
        key, same = (knd, tuple(names)), (tensors, sorted(settings.items()), fused)
        last = (kept or {}).get(key)
        if last is not None and last[1] == same:
            last[0].restart(rate)
            opt = last[0]
        else:
            opt = make_optimizer(knd, {k: params[k] for k in names}, rate, fused=fused, **settings)
            if kept is not None:
                kept[key] = (opt, same)
        out.append((opt, names))
    return out


def crop_flip(x: torch.Tensor, pad: int = 2) -> torch.Tensor:
    """The paper's augmentation (Appendix: "randomly cropped and flipped"): every image [..., C, H, W] is
    padded by `pad` (edge pixels repeated), cropped back to H x W at a random offset, and mirrored left-right
    with p = 1/2.
    Draws from torch's global generator, like dropout."""
    lead, (C, H, W) = x.shape[:-3], x.shape[-3:]
    flat = x.reshape(-1, C, H, W)
    n = flat.shape[0]
    flip = torch.rand(n, device=x.device) < 0.5
    flat = torch.where(flip[:, None, None, None], flat.flip(-1), flat)
    padded = F.pad(flat, (pad, pad, pad, pad), mode="replicate")  # the border (MNIST: background) fills in
    dy, dx = (torch.randint(0, 2 * pad + 1, (2, n), device=x.device))
    rows = (dy[:, None] + torch.arange(H, device=x.device))[:, None, :, None].expand(n, C, H, W + 2 * pad)
    out = padded.gather(2, rows)
    cols = (dx[:, None] + torch.arange(W, device=x.device))[:, None, None, :].expand(n, C, H, W)
    return out.gather(3, cols).reshape(*lead, C, H, W)


class _ConvergenceStop:
    """Per-client early stop at the end of each local epoch (clients' epochs have different lengths)."""

    def __init__(self, counts: torch.Tensor, batch_size: int, tol: float, drop_last: bool = False):
        self.counts = counts.clamp(min=1).to(torch.float32)
        self.per_epoch = steps_per_epoch(counts, batch_size, drop_last).clamp(min=1)
        self.tol = tol
        self.epoch_loss = torch.zeros_like(counts, dtype=torch.float32)
        self.best = torch.full_like(self.epoch_loss, float("inf"))
        self.done = counts == 0

    def update(self, step: int, loss_sum: torch.Tensor, active: torch.Tensor) -> None:
        """`loss_sum` [n]: this step's summed loss over each client's samples in the batch."""
        self.epoch_loss += loss_sum * active
        ends = active & ((step + 1) % self.per_epoch == 0)
        if bool(ends.any()):
            mean = self.epoch_loss / self.counts  # the epoch's mean loss per sample
            improved = mean < self.best * (1 - self.tol)
            self.done |= ends & ~improved
            self.best = torch.where(ends, torch.minimum(self.best, mean), self.best)
            self.epoch_loss = torch.where(ends, torch.zeros_like(self.epoch_loss), self.epoch_loss)


def _chunk(group: Group, data: ClientData, chunk_samples: int) -> int:
    """Samples per client in one evaluation pass: `chunk_samples` over the clients; the fast engine evens the passes
    out so that the last holds no padding (210 samples in chunks of 40 pad to 240; in 6 of 35 they do not)."""
    chunk = max(1, chunk_samples // group.n)
    if group.fast_engine:
        total = data.x.shape[1]
        passes = -(-total // chunk)
        chunk = -(-total // passes)
    return chunk


@torch.no_grad()
def features(group: Group, data: ClientData, chunk_samples: int = 4096) -> torch.Tensor:
    """Features of every (padded) sample in eval mode: [n, n_max, m-1]."""
    chunk = _chunk(group, data, chunk_samples)
    return torch.cat([group.body_features(data.x[:, i:i + chunk], train=False)
                      for i in range(0, data.x.shape[1], chunk)], dim=1)


@torch.no_grad()
def evaluate(group: Group, data: ClientData, chunk_samples: int = 4096) -> dict[str, torch.Tensor]:
    """Per-client correct predictions, summed loss and sample counts on `data` (eval mode)."""
    chunk = _chunk(group, data, chunk_samples)
    valid = data.valid()
    correct = torch.zeros(group.n, device=data.x.device)
    loss = torch.zeros(group.n, device=data.x.device)
    for i in range(0, data.x.shape[1], chunk):
        _, logits = group.forward(data.x[:, i:i + chunk], train=False)
        y, v = data.y[:, i:i + chunk], valid[:, i:i + chunk]
        ce = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(y.shape)
        correct += ((logits.argmax(-1) == y) & v).sum(1)
        loss += (ce * v).sum(1)
    return {"correct": correct, "loss": loss, "count": data.counts.to(correct.device).float()}


def evaluate_population(pop: Population, data: ClientData) -> dict[str, torch.Tensor]:
    """`evaluate` for every group, assembled in client order."""
    out = {}
    for g in pop.groups:
        res = evaluate(g, data.select(g.clients))
        for k, v in res.items():
            out.setdefault(k, torch.zeros(pop.n_clients, device=v.device))[g.clients.to(v.device)] = v
    return out


def client_accuracy(ev: dict[str, torch.Tensor]) -> torch.Tensor:
    """Each client's accuracy from `evaluate_population`'s counts (a client with no test sample: 0)."""
    return ev["correct"] / ev["count"].clamp(min=1)


def pooled_accuracy(ev: dict[str, torch.Tensor]) -> float:
    """The accuracy over every client's test samples together, from `evaluate_population`'s counts."""
    return float(ev["correct"].sum() / ev["count"].sum())


# ----------------------------------------------------------------------------- the reference loop

def train_loop(model: BodyHead, x: torch.Tensor, y: torch.Tensor, idx: torch.Tensor, valid: torch.Tensor, *,
               trainable: list[str], optimizer: str, lr: float) -> None:
    """One client alone, the way common FL libraries do it: its own module and torch optimizer, one small batch
    at a time. `idx`, `valid` [S, B] are this client's rows of `batch_schedule`."""
    model.train()
    named = dict(model.named_parameters())
    for k, p in named.items():
        p.requires_grad_(k in trainable)
    ps = [named[k] for k in trainable]
    opt = torch.optim.Adam(ps, lr) if optimizer == "adam" else torch.optim.SGD(ps, lr)
    for s in range(idx.shape[0]):
        if not valid[s].any():
            break
        sel = idx[s][valid[s]]
        opt.zero_grad()
        F.cross_entropy(model(x[sel]), y[sel]).backward()
        opt.step()

