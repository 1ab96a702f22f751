"""One module per method; `REGISTRY` maps a config's method name to its class.

To add a method: write a module with a subclass of `Algorithm` (configure, client_update returning a
`Reply`, aggregate), give it a `name` and `defaults`, and add it here.
"""
from .base import Algorithm, Context, Reply
from .fedavg import FedAvg, LGFedAvg, Local, ParameterAveraging
from .csfl import CSFL
from .ditto import Ditto
from .fedcr import FedCR, FedCRNA
from .feddm import FedDM
from .fedrd import FedRD
from .fednova import FedNova
from .fedprox import FedProx
from .fedprof import FedProf
from .fedbabu import FedBabu
from .feddbe import FedDBE
from .fedlog import FedLog, FedLogC
from .fedper import FedPer
from .fedproto import FedProto
from .fedrep import FedRep

REGISTRY: dict[str, type[Algorithm]] = {
    cls.name: cls for cls in (FedAvg, LGFedAvg, FedPer, FedRep, CSFL, FedBabu, FedProto, FedDBE, FedLog, FedLogC,
                                        FedCR, FedCRNA, Ditto, Local, FedProx, FedNova, FedDM, FedRD, FedProf)}


def make(name: str, **options) -> Algorithm:
    if name not in REGISTRY:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name](**options)


__all__ = ["Algorithm", "Context", "Reply", "REGISTRY", "make", "FedAvg", "LGFedAvg", "ParameterAveraging", "FedPer", "FedRep",
           "CSFL", "FedBabu", "FedProto", "FedDBE", "FedLog", "FedLogC", "FedCR", "FedCRNA", "Ditto", "Local", "FedProx", "FedNova", "FedDM", "FedRD", "FedProf"]
