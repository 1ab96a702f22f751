"""The one protocol every method follows, round by round:

    down = configure(round)            server -> clients (a Message, counted by the ledger)
    up   = client_update(round, down)  every client trains locally, then replies (a Message)
    aggregate(round, up)               the server combines the replies

After `aggregate`, `population` holds what each client predicts with (its personalized
model); the runner evaluates it on each client's own test set. The engine decides how
clients run together (`Context.train` trains a whole architecture group at once).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import engine
from ..data import ClientData, Federation
from ..engine import Group, Population
from ..messages import Message


@dataclass
class Context:
    """What a method may use: the data, the clients' models and the local-training settings."""
    fed: Federation
    population: Population
    optimizer: str
    lr: float
    epochs: int
    batch_size: int
    seed: int
    rounds: int = 1
    until_converged: bool = False  # Section 4.3: local training runs to the local optimum (epochs is the cap)
    augment: bool = False  # random crops and flips of the training images

    def __post_init__(self):
        self.train_data = [self.fed.train.select(g.clients) for g in self.population.groups]

    @property
    def groups(self) -> list[tuple[Group, ClientData]]:
        return list(zip(self.population.groups, self.train_data))

    @property
    def clients(self) -> torch.Tensor:
        return torch.arange(self.population.n_clients)

    def generator(self, rnd: int, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(self.seed * 1_000_003 + rnd * 7919 + salt)

    def train(self, group: Group, data: ClientData, rnd: int, trainable: list[str], loss_fn=engine.default_loss,
              epochs: int | None = None, lr: float | None = None) -> torch.Tensor:
        return engine.train(group, data, trainable=trainable, optimizer=self.optimizer,
                            lr=self.lr if lr is None else lr, epochs=self.epochs if epochs is None else epochs,
                            batch_size=self.batch_size, g=self.generator(rnd, int(group.clients[0])), loss_fn=loss_fn,
                            until_converged=self.until_converged, augment=self.augment)


class Algorithm:
    name = "base"
    defaults: dict = {}
    version = 1  # bump when a change alters this method's numbers: its cached runs are then recomputed

    def __init__(self, **options):
        unknown = set(options) - set(self.defaults)
        if unknown:
            raise ValueError(f"{self.name}: unknown option(s) {sorted(unknown)}; valid: {sorted(self.defaults)}")
        self.options = {**self.defaults, **options}
        self.train_loss = torch.zeros(0)

    def init(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def population(self) -> Population:
        return self.ctx.population

    def configure(self, rnd: int) -> Message:
        raise NotImplementedError

    def client_update(self, rnd: int, down: Message) -> Message:
        raise NotImplementedError

    def aggregate(self, rnd: int, up: Message) -> None:
        raise NotImplementedError
