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

No checkpoint can run code when it is read (a results folder may be shared): its first two lines, the format and the
code fingerprint, are checked before anything is unpickled; tensors are written as numpy arrays; and the unpickler
accepts only fedlib's classes, torch.nn's module classes and a short list of rebuild functions (of tensors and CPU
generators: `_ALLOWED_FUNCTIONS`), refusing anything else by name. A checkpoint of the older format (no first line)
is never unpickled: it is set aside and its run starts again. Beside a checkpoint, a small JSON file says how far its
run is (`progress`), for `scripts/paper_runs.py --list`.
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


def progress_path(target: Path) -> Path:
    """Beside a checkpoint, how far its run is, as JSON ({"next_round", "rounds", "elapsed_s"}): what
    `scripts/paper_runs.py --list` shows, read as data without touching the checkpoint."""
    return target.with_name(target.name + ".progress")


def progress(target: Path) -> dict | None:
    """The progress written beside the checkpoint `target` (None: none, or unreadable)."""
    import json

    try:
        found = json.loads(progress_path(target).read_text())
        return {k: float(found[k]) for k in ("next_round", "rounds", "elapsed_s")}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remove(target: Path) -> None:
    """A finished run's checkpoint and its progress."""
    target.unlink(missing_ok=True)
    progress_path(target).unlink(missing_ok=True)


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


def _rebuild_tensor(array, dtype, device, requires_grad):
    """A tensor written as its numpy array (`_Pickler`): no torch storage pickle, which torch reads with an unrestricted
    torch.load."""
    return torch.from_numpy(array).to(device=device, dtype=dtype).requires_grad_(requires_grad)


def _rebuild_generator(state):
    """A CPU random generator at the state `_Pickler` wrote (a DP mechanism's noise stream, fedlib.privacy)."""
    return torch.Generator().set_state(torch.from_numpy(state))


_AS_NUMPY = {torch.float32, torch.float64, torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
             torch.float16}


class _Pickler(pickle.Pickler):
    def __init__(self, file, data: dict[int, str]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.data = data

    def persistent_id(self, obj):
        return self.data.get(id(obj))

    def reducer_override(self, obj):
        if isinstance(obj, torch.Generator):
            if obj.device.type != "cpu":
                raise TypeError(f"a checkpoint holds CPU random generators only; got one on {obj.device}")
            return _rebuild_generator, (obj.get_state().numpy().copy(),)
        if not isinstance(obj, torch.Tensor) or obj.device.type == "meta" or type(obj) is not torch.Tensor:
            return NotImplemented  # a model template's parameters on the meta device carry no numbers
        if obj.is_sparse or obj.dtype not in _AS_NUMPY:
            raise TypeError(f"a checkpoint holds dense tensors of {sorted(map(str, _AS_NUMPY))}; got {obj.dtype}"
                            f"{' (sparse)' if obj.is_sparse else ''}")
        if obj.dim() >= 2 and obj.numel() >= COMPACT_MIN_NUMEL and obj.dtype in (torch.float32, torch.float64,
                                                                                 torch.int64, torch.bool):
            return _compact(obj)
        return _rebuild_tensor, (obj.detach().cpu().numpy().copy(), obj.dtype, str(obj.device), obj.requires_grad)


# What a checkpoint may name when it is read (`_Unpickler.find_class`): fedlib's own classes and the two rebuild
# functions, torch's dtypes, module classes and meta-tensor rebuilds, numpy's array and dtype rebuilds, and a few
# builtins. Anything else (os.system, eval, torch.load behind torch.storage._load_from_bytes, ...) is refused before
# it is called, so no checkpoint file can run code.
_ALLOWED_FUNCTIONS = {("fedlib.checkpoint", "_rebuild_rows"), ("fedlib.checkpoint", "_rebuild_tensor"),
                      ("fedlib.checkpoint", "_rebuild_generator"),
                      ("torch._utils", "_rebuild_meta_tensor_no_storage"), ("torch._utils", "_rebuild_parameter"),
                      ("numpy._core.numeric", "_frombuffer"), ("numpy.core.numeric", "_frombuffer"),
                      ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "_reconstruct"),
                      ("numpy", "dtype"), ("numpy", "ndarray"), ("collections", "OrderedDict"),
                      ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"), ("builtins", "complex"),
                      ("copyreg", "_reconstructor"), ("builtins", "object"), ("torch", "Size"), ("torch", "device")}


_CLASS_MODULES = ("fedlib.algorithms.", "fedlib.engine", "fedlib.messages", "fedlib.models", "fedlib.data",
                  "fedlib.privacy", "torch.nn.modules.")  # where the classes of a run's state live (none of them
# acts when built; fedlib.privacy: a DP run's GaussianMechanism, its noise generator and release count)


class CheckpointRefused(pickle.UnpicklingError):
    """A checkpoint that names something outside `_ALLOWED_FUNCTIONS` and fedlib's and torch.nn's classes."""


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, data: dict[str, object]):
        super().__init__(file)
        self.data = data

    def persistent_load(self, pid):
        return self.data[pid]

    def find_class(self, module, name):
        import importlib

        if (module, name) in _ALLOWED_FUNCTIONS:
            return super().find_class(module, name)
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        if module.startswith(_CLASS_MODULES) and "." not in name:
            found = getattr(importlib.import_module(module), name, None)
            if isinstance(found, type) and (module.startswith("fedlib.") or issubclass(found, torch.nn.Module)):
                return found  # the state's classes: methods, their context and population, models, messages
        raise CheckpointRefused(f"it names {module}.{name}, which a fedlib checkpoint never holds")


def _data_objects(ctx) -> dict[str, object]:
    """The objects a checkpoint refers to by name instead of writing: the federation and its client data."""
    fed = ctx.fed
    named = {"fed": fed, "fed.train": fed.train, "fed.test": fed.test}
    if fed.server is not None:
        named["fed.server"] = fed.server
    for i, part in enumerate(ctx.train_data):
        named[f"train_data.{i}"] = part
    return named


FORMAT = b"fedlib-checkpoint 3\n"  # the first line of every checkpoint; the second is its code fingerprint, the third
# the key of the run it belongs to (its file's name when written: a checkpoint copied under another run's name is
# refused, never resumed as that run)


def _key_of(target: Path) -> str:
    return target.name.split(".", 1)[0]


def save(target: Path, alg, rows: dict, ledger, ev, next_round: int, elapsed: float,
         started_on: str | None = None, cpu: float = 0.0) -> bool:
    """Write the run's state to `target` atomically; on a write error (a full disk) warn, keep the previous
    checkpoint and return False, so that the run goes on. `started_on`: the kind of processor that made its first
    rounds (`provenance.machine`; default this one), kept so that a run resumed on another kind says so. `elapsed`
    and `cpu`: the wall time and the processor time (every thread's) the run has taken so far."""
    state = {"alg": alg, "rows": rows, "ledger": ledger, "ev": ev, "next_round": next_round, "elapsed": elapsed,
             "cpu": cpu, "fingerprint": provenance.fingerprint(), "started_on": started_on or provenance.machine(),
             "rng": (torch.get_rng_state(), np.random.get_state(), random.getstate(),
                     torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None)}
    buffer = io.BytesIO()
    buffer.write(FORMAT + provenance.fingerprint().encode() + b"\n" + _key_of(target).encode() + b"\n")  # read and
    # checked before anything is unpickled
    _Pickler(buffer, {id(v): k for k, v in _data_objects(alg.ctx).items()}).dump(state)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".ckpt")
    except OSError as err:
        return _not_written(target, err)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(buffer.getvalue())
        os.replace(tmp, target)
    except OSError as err:  # a full disk, a folder gone read-only: the run goes on, the last checkpoint stays
        Path(tmp).unlink(missing_ok=True)
        return _not_written(target, err)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # only informational: a run goes on without it
        from .cache import write_atomic

        write_atomic(progress_path(target), {"next_round": next_round, "rounds": alg.ctx.rounds,
                                              "elapsed_s": round(elapsed, 1)})
    except OSError:
        pass
    return True


def _not_written(target: Path, err: OSError) -> bool:
    kept = "the previous checkpoint is kept" if target.exists() else "there is no earlier checkpoint"
    print(f"fedlib: warning: could not write the checkpoint {target} ({err.strerror or err}); {kept} and the run "
          f"goes on (its result is rescued at the end if the folder is still unwritable)", file=sys.stderr)
    return False


def load(target: Path, ctx) -> dict | None:
    """The state saved at `target`, its data re-attached from the freshly built `ctx` (None if there is none, or it
    is unusable: then it is moved aside and said so)."""
    if target.parent.exists():  # temporaries of checkpoint writes a kill interrupted
        from .cache import remove_stale_temporaries

        remove_stale_temporaries(target.parent)
    if not target.exists():
        return None
    try:
        with open(target, "rb") as f:
            head, written_by = f.readline(), f.readline().rstrip(b"\n").decode("ascii", "replace")
            owner = f.readline(200).rstrip(b"\n").decode("ascii", "replace")
            if head != FORMAT:
                reason = "it is in an older or unknown format (fedlib writes 'fedlib-checkpoint 3'; older ones are " \
                         "never unpickled)"
                state = None
            elif written_by != provenance.fingerprint():
                reason = "it was written by other code"
                state = None
            elif owner != _key_of(target):
                reason = f"it belongs to run {owner[:40]}, not to run {_key_of(target)} (a copied checkpoint?)"
                state = None
            else:
                state = _Unpickler(f, _data_objects(ctx)).load()
        if state is not None and state.get("fingerprint") != provenance.fingerprint():
            reason = "it was written by other code"
        elif state is not None:
            torch_rng, np_rng, py_rng, cuda_rng = state.pop("rng")
            torch.set_rng_state(torch_rng)
            np.random.set_state(np_rng)
            random.setstate(py_rng)
            if cuda_rng is not None and torch.cuda.is_available():
                torch.cuda.set_rng_state_all(cuda_rng)
            return state
    except CheckpointRefused as err:
        reason = f"it was refused unread: {err} (a crafted file?)"
    except Exception as err:  # noqa: BLE001  (a damaged file: any unpickling error)
        reason = f"it could not be read ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})"
    aside = target.with_name(target.name + ".unused")
    os.replace(target, aside)
    progress_path(target).unlink(missing_ok=True)
    print(f"fedlib: checkpoint {target} not used: {reason}; moved it to {aside.name}, the run starts from round 0",
          file=sys.stderr)
    return None


class Schedule:
    """When to write: after a round, once `interval()` seconds have passed since the last write."""

    def __init__(self, target: Path | None, started_on: str | None = None):
        self.target, self.every, self.last = target, interval(), time.monotonic()
        self.started_on = started_on or provenance.machine()  # the processor that made the run's first rounds

    def due(self) -> bool:
        return self.target is not None and time.monotonic() - self.last >= self.every

    def written(self) -> None:
        self.last = time.monotonic()
