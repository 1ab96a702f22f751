"""Checkpoints of long runs, so that a killed run resumes where it was (`experiments.run` uses them).

Every `FEDLIB_CHECKPOINT_SECONDS` (default 300; 0: after every round) a running experiment writes its state beside
its cache entry, `$FEDLIB_RESULTS/<method>/<key>.ckpt`, atomically (a temporary file, then a rename): the
algorithm with everything it holds (the server's models and state, every client's parameters and persistent
optimizer state, a method's own generators), the metrics and the ledger so far, and torch's, numpy's and Python's
random states. A run started again finds it, rebuilds the data from the Config and goes on from the next round;
its result is bit-identical to an uninterrupted run's (tests/test_checkpoint.py kills one mid-run). The checkpoint
is removed when the result is cached.

Small by construction: the data are never written (they are rebuilt from the Config and re-attached), and a stacked
parameter whose clients hold the same row (every client holding the global model after an aggregation) is written
once, with the rows that differ (`_compact`). A checkpoint written by other code (another code fingerprint) or
that cannot be read is set aside with a message, and the run starts from round 0.
"""
from __future__ import annotations

import io
import os
import pickle
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from . import provenance

DEFAULT_SECONDS = 300.0
COMPACT_MIN_NUMEL = 1024  # smaller tensors are written as they are


def interval() -> float:
    raw = os.environ.get("FEDLIB_CHECKPOINT_SECONDS", "")
    try:
        value = float(raw) if raw else DEFAULT_SECONDS
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise ValueError(f"FEDLIB_CHECKPOINT_SECONDS must be a number of seconds >= 0 (0: every round), got {raw!r}")
    return value


def path_for(result_path: Path) -> Path:
    return result_path.with_suffix(".ckpt")


def _rebuild_rows(first, others, same, dtype, device, requires_grad):
    """The inverse of `_compact`."""
    first_t = torch.from_numpy(first)
    out = first_t.unsqueeze(0).repeat(len(same), *([1] * first_t.dim()))
    if others.shape[0]:
        out[torch.from_numpy(~same)] = torch.from_numpy(others)
    return out.to(device=device, dtype=dtype).requires_grad_(requires_grad)


def _compact(t: torch.Tensor):
    """A stacked tensor [n, ...] as its first row, the rows that differ from it and which rows are the same."""
    cpu = t.detach().cpu()
    same = (cpu == cpu[0]).reshape(len(cpu), -1).all(1).numpy()
    return _rebuild_rows, (cpu[0].numpy().copy(), cpu[torch.from_numpy(~same)].numpy().copy(), same, t.dtype,
                           str(t.device), t.requires_grad)


class _Pickler(pickle.Pickler):
    def __init__(self, file, data: dict[int, str]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.data = data

    def persistent_id(self, obj):
        return self.data.get(id(obj))

    def reducer_override(self, obj):
        if (isinstance(obj, torch.Tensor) and obj.dim() >= 2 and obj.numel() >= COMPACT_MIN_NUMEL
                and obj.device.type != "meta" and obj.dtype in (torch.float32, torch.float64, torch.int64, torch.bool)
                and not obj.is_sparse):
            return _compact(obj)
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, data: dict[str, object]):
        super().__init__(file)
        self.data = data

    def persistent_load(self, pid):
        return self.data[pid]


def _data_objects(ctx) -> dict[str, object]:
    """The objects a checkpoint refers to by name instead of writing: the federation and its client data."""
    fed = ctx.fed
    named = {"fed": fed, "fed.train": fed.train, "fed.test": fed.test}
    if fed.server is not None:
        named["fed.server"] = fed.server
    for i, part in enumerate(ctx.train_data):
        named[f"train_data.{i}"] = part
    return named


def save(target: Path, alg, rows: dict, ledger, ev, next_round: int, elapsed: float) -> None:
    state = {"alg": alg, "rows": rows, "ledger": ledger, "ev": ev, "next_round": next_round, "elapsed": elapsed,
             "fingerprint": provenance.fingerprint(),
             "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate(),
                     torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)}
    buffer = io.BytesIO()
    _Pickler(buffer, {id(v): k for k, v in _data_objects(alg.ctx).items()}).dump(state)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".ckpt")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(target: Path, ctx) -> dict | None:
    """The state saved at `target`, its data re-attached from the freshly built `ctx` (None if there is none, or it
    is unusable: then it is moved aside and said so)."""
    if not target.exists():
        return None
    try:
        with open(target, "rb") as f:
            state = _Unpickler(f, _data_objects(ctx)).load()
        if state.get("fingerprint") != provenance.fingerprint():
            reason = "it was written by other code"
        else:
            torch_rng, np_rng, py_rng, cuda_rng = state.pop("rng")
            torch.set_rng_state(torch_rng)
            np.random.set_state(np_rng)
            random.setstate(py_rng)
            if cuda_rng is not None and torch.cuda.is_available():
                torch.cuda.set_rng_state_all(cuda_rng)
            return state
    except Exception as err:  # noqa: BLE001  (a damaged file: any unpickling error)
        reason = f"it could not be read ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})"
    aside = target.with_name(target.name + ".unused")
    os.replace(target, aside)
    print(f"fedlib: checkpoint {target} not used: {reason}; moved it to {aside.name}, the run starts from round 0",
          file=sys.stderr)
    return None


class Schedule:
    """When to write: after a round, once `interval()` seconds have passed since the last write."""

    def __init__(self, target: Path | None):
        self.target, self.every, self.last = target, interval(), time.monotonic()

    def due(self) -> bool:
        return self.target is not None and time.monotonic() - self.last >= self.every

    def written(self) -> None:
        self.last = time.monotonic()
