"""Explicit client-server messages and the one place where their size is counted.

A `Message` holds named tensors. An uplink message carries a leading client dimension
(one row per sender); a broadcast downlink carries one copy that every receiver gets.
`present` marks, per client, which rows of a tensor are really sent (FedProto sends
prototypes only for the classes a client has). Every number costs `bits_per_number`
(32 for float32) unless a method compresses and says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class Message:
    direction: str  # "up" (clients -> server) or "down" (server -> clients)
    payload: dict[str, torch.Tensor]
    clients: torch.Tensor  # senders (up) or receivers (down)
    broadcast: bool = False  # down only: the payload has no client dimension, every receiver gets a copy
    present: dict[str, torch.Tensor] = field(default_factory=dict)
    bits_per_number: int = 32

    @staticmethod
    def up(payload: dict, clients, **kw) -> "Message":
        return Message("up", payload, torch.as_tensor(clients), **kw)

    @staticmethod
    def down(payload: dict, clients, broadcast: bool = True, **kw) -> "Message":
        return Message("down", payload, torch.as_tensor(clients), broadcast=broadcast, **kw)

    def numbers(self) -> int:
        """Numbers sent over all clients."""
        total = 0
        for key, t in self.payload.items():
            if key in self.present:
                mask = self.present[key]
                total += int(mask.sum()) * (t[(0,) * mask.dim()].numel() if t.dim() > mask.dim() else 1)
            elif self.broadcast:
                total += t.numel() * len(self.clients)
            else:
                total += t.numel()
        return total

    def bits(self) -> int:
        return self.numbers() * self.bits_per_number

    def __getitem__(self, key: str) -> torch.Tensor:
        return self.payload[key]


class Ledger:
    """Counts every message in bits, round by round."""

    def __init__(self):
        self.up: list[int] = []
        self.down: list[int] = []

    def new_round(self) -> None:
        self.up.append(0)
        self.down.append(0)

    def record(self, msg: Message) -> Message:
        if not self.up:
            self.new_round()
        if msg.direction == "up":
            self.up[-1] += msg.bits()
        elif msg.direction == "down":
            self.down[-1] += msg.bits()
        else:
            raise ValueError(f"message direction must be 'up' or 'down', got {msg.direction!r}")
        return msg

    def total(self) -> int:
        return sum(self.up) + sum(self.down)
