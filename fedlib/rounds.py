"""One round of the protocol, the same for every driver (experiments, convergence traces, Fig. 1, benchmarks).

    down  = configure(rnd)            -> ledger
    reply = client_update(rnd, down)  -> its uplink -> ledger
    between(reply)                       (optional: a driver's measurement after local training)
    aggregate(rnd, reply.up)          -> a downlink it returns (if any) -> ledger

Every message of every driver passes through the ledger here, and only here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from .algorithms import Algorithm, Reply
from .messages import Ledger, Message


@dataclass
class RoundResult:
    rnd: int
    down: Message
    up: Message
    loss: torch.Tensor  # [K] the participants' training losses
    report: dict = field(default_factory=dict)

    @property
    def participants(self) -> torch.Tensor:
        return self.up.clients

    @property
    def train_loss(self) -> float:
        return float(self.loss.mean())


def run_round(alg: Algorithm, rnd: int, ledger: Ledger, between: Callable[[Reply], None] | None = None) -> RoundResult:
    ledger.new_round()
    down = ledger.record(alg.configure(rnd))
    reply = alg.client_update(rnd, down)
    if not isinstance(reply, Reply):
        raise TypeError(f"{alg.name}: client_update must return Reply(up_message, loss=...), got "
                        f"{type(reply).__name__}")
    if reply.loss is None or reply.loss.numel() == 0:
        raise ValueError(f"{alg.name}: client_update returned no training losses; return Reply(up, loss=...) with "
                         f"one loss per participant (Context.train_clients gives them)")
    if reply.loss.numel() != len(reply.up.clients):
        raise ValueError(f"{alg.name}: {reply.loss.numel()} training losses for {len(reply.up.clients)} participants")
    up = ledger.record(reply.up)
    if between is not None:
        between(reply)
    after = alg.aggregate(rnd, up)  # a downlink the server sends as the round ends (FedPAC's personal heads), or None
    if after is not None:
        if not isinstance(after, Message) or after.direction != "down":
            raise TypeError(f"{alg.name}: aggregate returns None or a downlink Message, got {type(after).__name__}")
        ledger.record(after)
    alg.ctx.participated(up.clients)  # the exponent of per-participation learning-rate decay
    return RoundResult(rnd, down, up, reply.loss.detach().cpu(), reply.report)
