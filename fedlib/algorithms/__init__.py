"""One module per method; `REGISTRY` maps a config's method name to its class.

To add a method: write a module here with a subclass of `Algorithm` (configure, client_update returning a
`Reply`, aggregate) that sets its `name` and `defaults`. Every module of this package is imported below, and the
class registers itself when it is defined: no other file changes (docs/adding_a_method.md).
"""
import importlib
import pkgutil

from .base import REGISTRY, Algorithm, Context, Reply, code_digest, load_methods, source_digest

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

from .csfl import CSFL  # noqa: E402  (the names, for `from fedlib.algorithms import ...`)
from .ditto import Ditto  # noqa: E402
from .fedavg import FedAvg, LGFedAvg, Local, ParameterAveraging  # noqa: E402
from .fedbabu import FedBabu  # noqa: E402
from .fedcr import FedCR, FedCRNA  # noqa: E402
from .feddbe import FedDBE  # noqa: E402
from .feddm import FedDM  # noqa: E402
from .fedlog import FedLog, FedLogC  # noqa: E402
from .fednova import FedNova  # noqa: E402
from .fedper import FedPer  # noqa: E402
from .fedprof import FedProf  # noqa: E402
from .fedproto import FedProto  # noqa: E402
from .fedprox import FedProx  # noqa: E402
from .fedrd import FedRD  # noqa: E402
from .fedrep import FedRep  # noqa: E402


def make(name: str, **options) -> Algorithm:
    if name not in REGISTRY:
        raise ValueError(f"unknown method {name!r}; choose one of {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name](**options)


__all__ = ["Algorithm", "Context", "Reply", "REGISTRY", "code_digest", "load_methods", "source_digest", "make", "FedAvg", "LGFedAvg", "ParameterAveraging", "FedPer",
           "FedRep", "CSFL", "FedBabu", "FedProto", "FedDBE", "FedLog", "FedLogC", "FedCR", "FedCRNA", "Ditto", "Local",
           "FedProx", "FedNova", "FedDM", "FedRD", "FedProf"]
