"""The paper's networks (Table A.2), MLP bodies and the body/head split every algorithm uses.

A model is `BodyHead(body, head)`: the body maps an input to m-1 features, the head is one
`nn.Linear(m-1, classes)`. For FedLog the head *is* eta in R^{classes x m}: its bias is the
coefficient of the constant feature 1 (phi_0), so eta = [bias | weight] (see `expfam.head_to_eta`).
"""
from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F
from torch import nn


class BodyHead(nn.Module):
    def __init__(self, body: nn.Module, head: nn.Linear):
        super().__init__()
        self.body, self.head = body, head

    def forward(self, x):
        return self.head(self.body(x))

    @property
    def feature_dim(self) -> int:
        return self.head.in_features

    @staticmethod
    def head_logits(feats: torch.Tensor, params: dict, train: bool) -> torch.Tensor:
        """The head step of stacked clients: feats [n, B, m-1] and stacked head parameters -> logits [n, B, C].
        A model whose head does something else (e.g. samples stochastic features) overrides it."""
        return torch.baddbmm(params["head.bias"].unsqueeze(1), feats, params["head.weight"].transpose(1, 2))


class StochasticBodyHead(BodyHead):
    """FedCR's model (App. A.1.2): the body ends in a Gaussian layer Linear(h, 2V) whose first V outputs are the
    means mu and whose last V give the standard deviations sigma = softplus(s - sigma_shift) (clamped at 1e-8); the
    head is Linear(V, C) on a sample z = mu + sigma * eps. Training draws `train_samples` samples per input and
    returns logits [n, B, S, C]; evaluation averages `eval_samples` draws (0: z = mu), by their probabilities
    (returned as log mean probability, so argmax and cross-entropy read it as logits) or by their logits
    (`eval_average`). The sampling options are set by FedCR on each group's template; `deterministic` (a test hook)
    uses z = mu everywhere."""

    train_samples, eval_samples, eval_average, sigma_shift, deterministic = 18, 18, "probs", 0.0, False

    def gaussian(self, feats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, s = feats.chunk(2, dim=-1)
        return mu, F.softplus(s - self.sigma_shift).clamp(min=1e-8)

    def head_logits(self, feats: torch.Tensor, params: dict, train: bool) -> torch.Tensor:
        mu, sigma = self.gaussian(feats)
        draws = 0 if self.deterministic else (self.train_samples if train else self.eval_samples)
        z = mu.unsqueeze(2)
        if draws:
            z = z + sigma.unsqueeze(2) * torch.randn(*mu.shape[:2], draws, mu.shape[-1], device=mu.device,
                                                     dtype=mu.dtype)
        logits = torch.einsum("nbsv,ncv->nbsc", z, params["head.weight"]) + params["head.bias"][:, None, None, :]
        if train:
            return logits
        if self.eval_average == "probs":
            return torch.logsumexp(logits.log_softmax(-1), dim=2) - math.log(logits.shape[2])
        return logits.mean(2)

    def forward(self, x):
        params = {"head.weight": self.head.weight.unsqueeze(0), "head.bias": self.head.bias.unsqueeze(0)}
        return self.head_logits(self.body(x).unsqueeze(0), params, train=False)[0]


class Shift(nn.Module):
    """Adds a learnable vector to the representation (FedDBE's personalized representation bias, PRBM)."""

    def __init__(self, features: int):
        super().__init__()
        self.shift = nn.Parameter(torch.zeros(features))

    def forward(self, x):
        return x + self.shift

    @staticmethod
    def stacked_forward(x: torch.Tensor, params: dict) -> torch.Tensor:
        """Stacked clients: x [n, B, F] plus each client's own shift [n, F]."""
        return x + params["shift"].unsqueeze(1)


class InstanceNorm(nn.Module):
    """Instance normalisation with a per-channel affine map (GroupNorm(C, C): DM's and FedDM's "instancenorm"): no
    running statistics, so stacked clients stay exact. In the stacked layout [B, n*C, H, W] each channel is still
    normalised on its own, with its client's weight and bias."""

    def __init__(self, channels: int):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.ones(channels)), nn.Parameter(torch.zeros(channels))

    def forward(self, x):
        return F.group_norm(x, x.shape[1], self.weight, self.bias, eps=1e-5)

    @staticmethod
    def stacked_forward(x: torch.Tensor, params: dict) -> torch.Tensor:
        return F.group_norm(x, x.shape[1], params["weight"].reshape(-1), params["bias"].reshape(-1), eps=1e-5)


def convnet_layers(in_channels: int, width: int, side: int, depth: int = 3) -> tuple[list[nn.Module], int]:
    """DM's ConvNet body: `depth` x [conv 3x3 (width) - instance norm - ReLU - max-pool 2], then flatten. A 28 x 28
    input is padded by 3 in the first conv (28 -> 32, DM's trick), so both 28 and 32 end at 4 x 4. Returns the
    layers and the number of features."""
    layers, channels = [], in_channels
    for i in range(depth):
        pad = 3 if i == 0 and side == 28 else 1
        side = (side + 2 * pad - 2) // 2
        layers += [nn.Conv2d(channels, width, 3, padding=pad), InstanceNorm(width), nn.ReLU(), nn.MaxPool2d(2)]
        channels = width
    return layers + [nn.Flatten()], width * side * side


def convnet(input_shape: tuple[int, ...], num_classes: int, width: int = 128) -> BodyHead:
    """FedDM's and FedRD's task model (ConvNet-W): convnet_layers and one fully connected layer as the head."""
    layers, features = convnet_layers(input_shape[0], width, input_shape[-1])
    return BodyHead(nn.Sequential(*layers), nn.Linear(features, num_classes))


class ProjectedBodyHead(BodyHead):
    """FedRD's model: the body is a personal projection (its first `projection_layers` modules, ending in one channel
    of the input's size) followed by the global task ConvNet's layers; the head is the task model's last layer."""

    def __init__(self, projection: list[nn.Module], task: list[nn.Module], head: nn.Linear):
        super().__init__(nn.Sequential(*projection, *task), head)
        self.projection_layers = len(projection)

    def task_model(self) -> BodyHead:
        """The task model alone (inputs in representation space), sharing these modules."""
        return BodyHead(nn.Sequential(*list(self.body)[self.projection_layers:]), self.head)


def fedrd_model(input_shape: tuple[int, ...], num_classes: int, layers: int = 2, width: int = 128,
                side: int | None = None) -> BodyHead:
    """`fedrd_projL_convnetW`: L 3x3 convs (8, then 16 filters) with ReLUs and a 1x1 conv to one channel, so the
    representation is 1 x h x w (d' = h w), then ConvNet-W on it. `fedrd_projL_dS_convnetW` resizes the
    representation to 1 x S x S (d' = S^2, Table IV): average pooling to a smaller side, bilinear upsampling to a
    larger one (spec 2.4)."""
    projection, channels = [], input_shape[0]
    for out in [8, 16, 16, 16][:layers]:
        projection += [nn.Conv2d(channels, out, 3, padding=1), nn.ReLU()]
        channels = out
    projection.append(nn.Conv2d(channels, 1, 1))
    side = side or input_shape[-1]
    if side < input_shape[-1]:
        projection.append(nn.AdaptiveAvgPool2d(side))
    elif side > input_shape[-1]:
        projection.append(nn.Upsample(size=(side, side), mode="bilinear", align_corners=False))
    task, features = convnet_layers(1, width, side)
    return ProjectedBodyHead(projection, task, nn.Linear(features, num_classes))


class Clip(nn.Hardtanh):
    """Eq. 14: clip every feature to [-b, b] (the body's last activation under differential privacy)."""

    def __init__(self, b: float):
        super().__init__(-b, b)


def cnn_mnist(num_classes: int = 10, dropout: float = 0.5, small: bool = False) -> BodyHead:
    """Table A.2, MNIST, with LG-FedAvg's dropout (after conv2, channel-wise, and after fc1).
    `small=True` (flexible architectures): the MNIST body has no second-last fully connected layer to remove,
    so the smaller body halves conv2 (10 channels, 160 features into fc1): 10,820 body parameters, not 21,330."""
    width = 10 if small else 20
    body = nn.Sequential(
        nn.Conv2d(1, 10, 5), nn.MaxPool2d(2), nn.ReLU(),
        nn.Conv2d(10, width, 5), nn.Dropout2d(dropout), nn.MaxPool2d(2), nn.ReLU(),
        nn.Flatten(), nn.Linear(16 * width, 50), nn.ReLU(), nn.Dropout(dropout))
    return BodyHead(body, nn.Linear(50, num_classes))


def cnn_mnist_safa(num_classes: int = 10) -> BodyHead:
    """FedProf's likely MNIST model: the CNN of SAFA, the earlier simulator of FedProf's first author (conv 1->20
    5x5, conv 20->50 5x5, each with ReLU and 2x2 max-pooling, fc 800->500 with ReLU, then the head 500->classes; no
    dropout; log-softmax with NLL loss, which is cross-entropy). torch's default initialisation. FedProf profiles
    fc1's 500 pre-activations (q = 500)."""
    body = nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(20, 50, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(4 * 4 * 50, 500), nn.ReLU())
    return BodyHead(body, nn.Linear(500, num_classes))


def cnn_cifar(num_classes: int = 10, small: bool = False, in_channels: int = 3) -> BodyHead:
    """Table A.2, CIFAR-10/100. `small=True` removes the second-last fully connected layer (Fig. 3 left)."""
    conv = [nn.Conv2d(in_channels, 6, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten()]
    fc = [nn.Linear(400, 100), nn.ReLU()] if small else [nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 100), nn.ReLU()]
    return BodyHead(nn.Sequential(*conv, *fc), nn.Linear(100, num_classes))


def mobilenet_v2(num_classes: int = 2) -> BodyHead:
    """MobileNetV2 (torchvision, untrained) for CelebA: the feature extractor, global pooling and flattening are the
    body (1280 features), the classifier is the head. GroupNorm (8 groups) replaces BatchNorm: every client trains
    its own copy in one batched call, where per-client running statistics have no place."""
    from torchvision.models import mobilenet_v2 as tv_mobilenet_v2

    net = tv_mobilenet_v2(weights=None, norm_layer=lambda c: nn.GroupNorm(8, c))
    body = nn.Sequential(net.features, nn.AdaptiveAvgPool2d(1), nn.Flatten())
    return BodyHead(body, nn.Linear(net.last_channel, num_classes))


class EncoderBlock(nn.Module):
    """Pre-norm Transformer encoder block with explicit attention (so the engine can vmap it over clients)."""

    def __init__(self, d: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, d))

    def forward(self, x: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, T, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(pad[:, None, None, :], -1e9)
        x = x + self.out((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d))
        return x + self.ff(self.norm2(x))


class TextEncoder(nn.Module):
    """Token ids [B, T] (0 = padding) -> mean of the encoded non-padding tokens -> `features` (ReLU)."""

    def __init__(self, vocab: int, max_len: int, d: int = 64, heads: int = 4, layers: int = 2, features: int = 64):
        super().__init__()
        self.embed, self.position = nn.Embedding(vocab, d), nn.Parameter(torch.randn(max_len, d) * 0.02)
        self.blocks = nn.ModuleList(EncoderBlock(d, heads, 2 * d) for _ in range(layers))
        self.proj = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, features), nn.ReLU())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        pad = tokens == 0
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x, pad)
        keep = (~pad).unsqueeze(-1).to(x.dtype)
        return self.proj((x * keep).sum(1) / keep.sum(1).clamp(min=1))


def transformer(num_classes: int, vocab: int, max_len: int) -> BodyHead:
    """A small Transformer encoder for Sent140 (2 blocks, width 64, 4 heads), a linear head. `vocab` counts every
    token id, padding (0) and unknown included."""
    return BodyHead(TextEncoder(vocab, max_len), nn.Linear(64, num_classes))


def mlp(in_features: int, hidden: list[int], features: int, num_classes: int, last_activation: bool = True) -> BodyHead:
    """An MLP body with len(hidden)+1 linear layers ending in `features` outputs, and a linear head."""
    layers, width = [nn.Flatten()], in_features
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, features))
    if last_activation:
        layers.append(nn.ReLU())
    return BodyHead(nn.Sequential(*layers), nn.Linear(features, num_classes))


_FEDCR = re.compile(r"^(cnn_mnist_vib|fedcr_mlp(\d+)|fedcr_cnn(\d+)|fedcr_cifar(\d+))(_v(\d+))?$")


def fedcr_model(name: str, input_shape: tuple[int, ...], num_classes: int) -> BodyHead:
    """FedCR's bodies (Tables 5-8, the authors' FMNIST CNN), with a Gaussian layer of V dimensions when the name
    ends in _vV (a StochasticBodyHead), without it otherwise (the baselines' deterministic nets, head H -> C):
    `cnn_mnist_vib_vV` (Table A.2's MNIST CNN + Linear(50, 2V)), `fedcr_mlpH_vV` (in-H-H-2V), `fedcr_cnnH_vV`
    (conv(4, 5)-pool-ReLU-conv(12, 5)-pool-ReLU-fc H-ReLU-fc H-ReLU-fc 2V), `fedcr_cifarH_vV` (Tables 5-6, CIFAR:
    conv(64, 5)-ReLU-pool-conv(64, 5)-ReLU-pool-fc 1600 -> H-ReLU-fc H-ReLU-fc 2V)."""
    match = _FEDCR.match(name)
    if not match or (match.group(1) == "cnn_mnist_vib" and not match.group(6)):
        raise ValueError(f"unknown FedCR model {name!r}; e.g. cnn_mnist_vib_v50, fedcr_mlp1024_v256, fedcr_cnn1024_v512")
    V = int(match.group(6)) if match.group(6) else None
    if match.group(1) == "cnn_mnist_vib":
        body = cnn_mnist(num_classes, dropout=0.0).body
        width = 50
    elif match.group(2):
        width = int(match.group(2))
        body = nn.Sequential(nn.Flatten(), nn.Linear(math.prod(input_shape), width), nn.ReLU(), nn.Linear(width, width),
                             nn.ReLU())
    elif match.group(4):
        width = int(match.group(4))
        side = ((input_shape[1] - 4) // 2 - 4) // 2
        body = nn.Sequential(nn.Conv2d(input_shape[0], 64, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(64, 64, 5),
                             nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * side * side, width), nn.ReLU(),
                             nn.Linear(width, width), nn.ReLU())
    else:
        width = int(match.group(3))
        side = ((input_shape[1] - 4) // 2 - 4) // 2
        body = nn.Sequential(nn.Conv2d(input_shape[0], 4, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(4, 12, 5),
                             nn.MaxPool2d(2), nn.ReLU(), nn.Flatten(), nn.Linear(12 * side * side, width), nn.ReLU(),
                             nn.Linear(width, width), nn.ReLU())
    if V is None:
        return BodyHead(body, nn.Linear(width, num_classes))
    body.append(nn.Linear(width, 2 * V))
    return StochasticBodyHead(body, nn.Linear(V, num_classes))


def build(name: str, input_shape: tuple[int, ...], num_classes: int, vocab_size: int | None = None) -> BodyHead:
    """A freshly initialised model by name; `vocab_size` (token ids, padding included) for text models."""
    if _FEDCR.match(name):
        return fedcr_model(name, input_shape, num_classes)
    if name in ("cnn_mnist", "cnn_mnist_small"):
        return cnn_mnist(num_classes, small=name.endswith("small"))
    if name in ("cnn_cifar", "cnn_cifar_small"):
        return cnn_cifar(num_classes, small=name.endswith("small"), in_channels=input_shape[0])
    if name == "cnn_mnist_nodrop":
        return cnn_mnist(num_classes, dropout=0.0)
    if name == "cnn_mnist_safa":
        return cnn_mnist_safa(num_classes)
    if m := re.fullmatch(r"fedrd_proj(\d)(?:_d(\d+))?_convnet(\d+)", name):
        return fedrd_model(input_shape, num_classes, layers=int(m.group(1)), width=int(m.group(3)),
                           side=int(m.group(2)) if m.group(2) else None)
    if re.fullmatch(r"convnet\d+", name):
        return convnet(input_shape, num_classes, width=int(name[7:]))
    if name == "mobilenet_v2":
        return mobilenet_v2(num_classes)
    if name == "transformer":
        if not vocab_size:
            raise ValueError("the transformer needs the data's vocabulary size (Federation.vocab_size)")
        return transformer(num_classes, vocab_size, max_len=input_shape[0])
    if name.startswith("mlp"):  # Fig. 1: "mlp3" = 3 linear layers, 2-D representation, no last activation
        depth = int(name[3:] or 2)
        return mlp(math.prod(input_shape), [64] * (depth - 1), 2, num_classes, last_activation=False)
    raise ValueError(f"unknown model {name!r}; choose cnn_mnist(_small, _nodrop, _safa), cnn_cifar(_small), "
                     "mobilenet_v2, transformer, mlpK, convnetW (FedDM's ConvNet of width W), fedrd_projL(_dS)_convnetW (FedRD's; S = sqrt(d')), or FedCR's cnn_mnist_vib_vV, fedcr_mlpH(_vV), fedcr_cnnH(_vV), fedcr_cifarH(_vV) "
                     "(or X_flexible: half the clients get X_small)")


FAMILIES = ("mlpK (K linear layers), X_flexible (mixed bodies), cnn_mnist_vib_vV, fedcr_mlpW_vV, fedcr_cnnW_vV, "
            "fedcr_cifarW_vV (a Gaussian layer of dimension V), convnetW, fedrd_projK[_dS]_convnetW (K projection "
            "layers before a ConvNet of width W)")  # the models `build` knows by pattern (`python -m fedlib list`)
MODELS = ("cnn_mnist", "cnn_mnist_small", "cnn_mnist_nodrop", "cnn_mnist_safa", "cnn_cifar", "cnn_cifar_small", "mobilenet_v2",
          "transformer", "mlp_flexible")


def is_known(name: str) -> bool:
    """Whether `build` (or `client_architectures`, for X_flexible) knows the model `name`."""
    base = name[: -len("_flexible")] if name.endswith("_flexible") and name != "mlp_flexible" else name
    return base in MODELS or (base.startswith("mlp") and base[3:].isdigit() and int(base[3:]) >= 1) or \
        bool(_FEDCR.match(base)) and base != "cnn_mnist_vib" or bool(re.fullmatch(r"(fedrd_proj[1-4](_d\d+)?_)?convnet\d+", base))


def default_model(dataset: str) -> str:
    return {"mnist": "cnn_mnist", "fashion_mnist": "cnn_mnist", "cifar10": "cnn_cifar", "cifar100": "cnn_cifar",
            "circle": "mlp_flexible", "celeba": "mobilenet_v2", "sent140": "transformer"}.get(dataset, "cnn_mnist")


def statistic_size(dataset: str, input_shape: tuple[int, ...], num_classes: int) -> int:
    """m: the length of FedLog's [1, phi] for the dataset's default model (its features plus the constant)."""
    with torch.random.fork_rng(devices=[]):
        return build(default_model(dataset), input_shape, num_classes).feature_dim + 1


def client_architectures(model: str, n_clients: int, g: torch.Generator) -> list[str]:
    """The architecture of every client. `X_flexible` gives a random half of the clients the smaller body."""
    if model == "mlp_flexible":  # Fig. 1: client 0 a 3-layer body, client 1 a 2-layer one
        return [("mlp3" if i % 2 == 0 else "mlp2") for i in range(n_clients)]
    if model.endswith("_flexible"):
        base = model[: -len("_flexible")]
        small = set(torch.randperm(n_clients, generator=g)[: n_clients // 2].tolist())
        return [base + "_small" if i in small else base for i in range(n_clients)]
    return [model] * n_clients


def last_layers(model: nn.Module, k: int, option: str = "k") -> list[str]:
    """Parameter names of the last k layers that have parameters (LG-FedAvg's "global layers"); `option` names the
    method option that asked, for the error message."""
    layers = [name for name, m in model.named_modules() if list(m.parameters(recurse=False))]
    if not 1 <= k <= len(layers):
        raise ValueError(f"option {option}={k}: the model has {len(layers)} layers with parameters; cannot take "
                         f"the last {k}")
    keep = set(layers[-k:])
    return [n for n, _ in model.named_parameters() if n.rsplit(".", 1)[0] in keep]


def check_deterministic(model: str, method: str) -> None:
    """Refuse a body ending in FedCR's Gaussian layer (a name ending in _vV) for a method that does not train one:
    its training logits carry one row per sample drawn. FedCR's baselines use its deterministic twin."""
    if re.search(r"_v\d+(_flexible)?$", model):
        twin = re.sub(r"_v\d+", "", model)
        hint = f"use {twin!r}, the same body without it" if twin != "cnn_mnist_vib" else "use 'cnn_mnist_nodrop'"
        raise ValueError(f"Config.model={model!r} ends in FedCR's Gaussian layer, which {method} does not train; "
                         f"{hint}")
