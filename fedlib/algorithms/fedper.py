"""FedPer (Arivazhagan et al., 2019): base layers averaged, personalization layers local.

As in the FedLog paper's comparison, the last two layers (for the MNIST CNN: fc1 and the head)
stay on the client; everything before them is averaged with FedAvg. Clients train the whole
model locally and predict with the averaged base and their own personalization layers.
"""
from __future__ import annotations

from ..models import last_layers
from .base import Context, at_least
from .fedavg import ParameterAveraging


class FedPer(ParameterAveraging):
    name = "fedper"
    defaults = dict(ParameterAveraging.defaults, local_layers=2)
    rules = dict(local_layers=at_least(1))

    def shared_names(self, ctx: Context) -> list[str]:
        local = set(last_layers(ctx.population.template, self.options["local_layers"], "local_layers"))
        return [k for k in ctx.population.param_names() if k not in local]
