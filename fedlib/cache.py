"""The results cache: one JSON file per finished run, `$FEDLIB_RESULTS/<method>/<key>.json` (default `results/`).

Files are written atomically (a temporary file, then a rename), so an interrupted run never leaves a usable partial
file; temporaries a killed process left behind are removed after an hour. A file that cannot be read as a result
is moved aside (`<key>.json.damaged`), named on stderr, and the run is computed again. Files are readable by the
group, since a cluster shares the folder. A run that is not here but is shipped in `archive/` is copied in.
A run being computed holds `<key>.lock` beside its result (`claim`), so two jobs on one folder never compute it at
once.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

from . import archive
from .result import holds_a_run, not_servable
from .config import Config
from .paths import results_dir

try:
    import fcntl
except ImportError:  # not a POSIX system: runs are not locked
    fcntl = None

STALE_SECONDS = 3600
_HELD = threading.local()  # .locks: those this thread holds (its second flock of one file would wait forever)


def path(cfg: Config) -> Path:
    return results_dir() / cfg.method / f"{cfg.key()}.json"


@contextlib.contextmanager
def claim(cfg: Config, wait: bool = True):
    """Hold the run's lock, `<key>.lock` beside its result, while the body computes it; yields True once held. Two
    jobs given overlapping lists of runs (two background slots, a notebook beside a slot: a session lost 35 min of
    a core to one run computed twice at once) thus compute each run once: the second waits, then finds the result
    (wait=True, said on stderr), or is told at once that another job has it (wait=False: yields False). The lock is
    the kernel's (flock): it goes with the process that held it, so a killed job leaves no stale lock, only the empty
    file. A folder whose file system has no locks is not locked."""
    lock = path(cfg).with_suffix(".lock")
    mine = _HELD.__dict__.setdefault("locks", set())
    if lock in mine or fcntl is None:
        yield True
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    from .safe_files import refuse_symlink

    refuse_symlink(lock, "lock")  # "it is a link: remove it", not the kernel's "Too many levels of symbolic links"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o664)  # a link there is refused
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            held = False
            if wait:
                print(f"fedlib: {cfg.label()} ({cfg.key()}) is being computed by another job on {results_dir()}; "
                      f"waiting for it to finish", file=sys.stderr, flush=True)
                fcntl.flock(fd, fcntl.LOCK_EX)
                held = True
        except OSError:  # a file system without locks
            held = True
        if held:
            mine.add(lock)
        try:
            yield held
        finally:
            mine.discard(lock)
    finally:
        os.close(fd)  # releases the lock


def is_cached(cfg: Config) -> bool:
    return load(cfg) is not None


def load(cfg: Config) -> dict | None:
    """The cached result of `cfg`, or a shipped one (`fedlib.archive.find_run`: copied into the cache when it was
    made on this device type; one made on another device type is read from archive/ each time), or None."""
    p = path(cfg)
    if not p.exists():
        shipped = archive.find_run(cfg)
        if shipped is not None and shipped["key"] == cfg.key():
            try:
                write_atomic(p, shipped)
            except OSError:  # a read-only results folder still gets the shipped run
                pass
        return shipped
    try:
        result = json.loads(p.read_text())
        if not holds_a_run(result):
            raise ValueError("it holds no run result")
        if (why := not_servable(result, cfg.key())) is not None:
            raise ValueError(why)
        return result
    except (ValueError, UnicodeDecodeError) as err:  # json's errors are ValueErrors
        aside = p.with_name(p.name + ".damaged")
        os.replace(p, aside)
        print(f"fedlib: {p} was damaged ({str(err).splitlines()[0]}); moved it to {aside.name}, the run is computed "
              f"again", file=sys.stderr)
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(target: Path, obj) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f)
        os.chmod(tmp, (0o666 & ~_umask()) | 0o040)  # mkstemp makes 0600; the group must read a shared cache
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    remove_stale_temporaries(target.parent)


def remove_stale_temporaries(folder: Path, max_age: float = STALE_SECONDS) -> None:
    """Temporaries of writes that a killed process never finished (recent ones may still be being written)."""
    now = time.time()
    for tmp in [*folder.glob(".tmp-*.json"), *folder.glob(".tmp-*.ckpt")]:  # results' and checkpoints' temporaries
        try:
            if now - tmp.stat().st_mtime > max_age:
                tmp.unlink()
        except FileNotFoundError:
            pass


def check_writable() -> None:
    """Fail before a run starts, not after it has computed everything, when results cannot be written."""
    folder = results_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".tmp-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ValueError(f"the results folder {folder} cannot be written ({err.strerror or err}); set FEDLIB_RESULTS "
                         f"to a writable folder") from None


def save(cfg: Config, result: dict) -> Path:
    """Write a finished result into the cache. If that fails (a full disk, a folder gone read-only), the result is
    not lost: it goes to `rescue_dir()` instead, and stderr says where and why. Returns where it was written."""
    target = path(cfg)
    try:
        write_atomic(target, result)
        return target
    except OSError as err:
        rescued = rescue_dir() / cfg.method / target.name
        try:
            write_atomic(rescued, result)
        except OSError:
            raise OSError(f"could not write the result of {cfg.label()} to {target} ({err.strerror or err}) nor to "
                          f"{rescued}; free some space and run it again") from err
        print(f"fedlib: could not write {target} ({err.strerror or err}); the result is kept in {rescued}: copy it "
              f"into {target.parent} once there is room", file=sys.stderr)
        return rescued


def rescue_dir() -> Path:
    """Where a result goes when the results folder cannot take it ($FEDLIB_RESCUE, default the system's temporary
    folder)."""
    return Path(os.environ.get("FEDLIB_RESCUE") or tempfile.gettempdir()) / "fedlib-rescued"
