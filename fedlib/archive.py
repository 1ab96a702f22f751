"""Shipped runs: finished results committed under `archive/` as gzip JSON lines (one result a line), so that a
fresh clone redraws the paper-profile tables without recomputing them.

`cache.load` looks here when a run is not in the results folder and copies what it finds into the cache, so a
notebook computes only what is missing. A run is found by its method and cache key; the key includes the device
type, so a run made on a GPU enters under its own key. A config on the "auto" device whose run was shipped only from
the other device type (a GPU run read on a CPU, or the other way round) is found too (`find_run`): the same
protocol, rounded differently (FedCR's Table 2 n1, seed 0: 93.70% on an H200, 93.59% on a CPU), its "device"
saying where it ran; it is not copied into the cache under this device's key. Files are written sorted by (method, key), with a fixed
gzip timestamp, so the same runs always give the same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

import functools
import gzip
import io
import json
import sys
from pathlib import Path

from .paths import project_root


def folder() -> Path:
    return project_root() / "archive"


class ArchiveError(ValueError):
    """A shipped archive file that cannot be read (truncated, or a damaged line)."""


@functools.lru_cache(maxsize=4)
def _index(root: Path) -> dict[tuple[str, str], dict]:
    """Every readable shipped run. A damaged file is named on stderr and left out, so it blocks nothing else: the
    runs it held are computed again where needed."""
    found = {}
    for path in sorted(root.glob("*.jsonl.gz")):
        try:
            results = read(path)
        except ArchiveError as err:
            print(f"fedlib: {_left_out(err, path)}", file=sys.stderr)
            continue
        from .result import not_servable

        for number, result in enumerate(results, start=1):
            if (why := not_servable(result, result["key"])) is not None:  # named, left out, the others served
                print(f"fedlib: {path}, run {number} (key {result['key']}) is left out: {why}", file=sys.stderr)
                continue
            found[(result["config"]["method"], result["key"])] = result
    return found


def _left_out(err: ArchiveError, path: Path) -> str:
    return (f"{err}; its runs are left out: restore it with `git checkout -- {path.name}` in {path.parent}; if it "
            f"was never committed, move it aside (mv {path.name} {path.name}.damaged) and pack its runs again "
            f"(scripts/paper_runs.py SET --pack)")


def damaged(root: Path | None = None) -> list[str]:
    """A line for each shipped archive file that cannot be read, saying how to restore it. run_all.sh prints them on
    the terminal before any notebook runs: inside a notebook the same warning is seen only in its executed copy."""
    lines = []
    for path in sorted((root or folder()).glob("*.jsonl.gz")):
        try:
            read(path)
        except ArchiveError as err:
            lines.append(_left_out(err, path))
    return lines


def cached_json(kind: str, name: str) -> dict | None:
    """A computed object that is not a run (a trace, a figure's view), kept as JSON under `kind`/`name` in the
    results cache or, shipped, in archive/: the first found, read as data; None in neither."""
    from .paths import results_dir

    for path in (results_dir() / kind / name, folder() / kind / name):
        if path.exists():
            return json.loads(path.read_text())
    return None


def find(method: str, key: str) -> dict | None:
    return _index(folder()).get((method, key))


DEVICE_TYPES = ("cpu", "cuda")  # the device types fedlib runs on (`engine.resolve_device`)


def find_run(cfg) -> dict | None:
    """`cfg`'s shipped run: the one made on the device type this machine resolves it to (its key), else, for a
    config on the "auto" device, the one made on another device type (its result's "device" says which); None if
    neither is shipped. A config that names its device finds only runs made there."""
    own = cfg.key()
    found = find(cfg.method, own)
    if found is not None or cfg.device != "auto":
        return found
    for device_type in DEVICE_TYPES:
        other = cfg.key(device_type)
        if other != own and (found := find(cfg.method, other)) is not None:
            return found
    return None


def longer(cfg) -> dict | None:
    """A shipped run of `cfg`'s config with more rounds (the longest, if several), whose key is still what its
    config gives today (so no method version has changed since it ran); None if there is none. Its first rounds
    are `cfg`'s run (`experiments.first_rounds` says which runs that holds for)."""
    from .config import restore

    best = None
    for (method, key), result in _index(folder()).items():
        config = result["config"]
        if method != cfg.method or config["rounds"] <= cfg.rounds or config["seed"] != cfg.seed:
            continue
        try:  # a config today's Config cannot take (an unknown field, an impossible value) is not today's run
            same = restore(config).key() == key and restore({**config, "rounds": cfg.rounds}).key() == cfg.key()
        except (TypeError, ValueError):
            continue
        if (best is None or config["rounds"] > best["config"]["rounds"]) and same:
            best = result
    return best


MAX_LINE = 32 * 2 ** 20  # characters: the largest shipped run is 1.3 MB; a longer line is refused, never inflated
MAX_FILE = 1 * 2 ** 30  # characters a file may inflate to (the largest shipped: 20 MB)


def _lines(f, path: Path):
    """`f`'s lines, each read with a cap (MAX_LINE), and the whole with one (MAX_FILE): a small gzip that inflates to
    a gigabyte is named and refused before it fills the memory."""
    total, number = 0, 0
    while line := f.readline(MAX_LINE + 1):
        number += 1
        total += len(line)
        if len(line) > MAX_LINE:
            raise ArchiveError(f"{path}, line {number}: longer than {MAX_LINE // 2 ** 20} MB inflated (no run is): "
                               f"not an archive of runs; restore it (`git checkout -- {path.name}`)")
        if total > MAX_FILE:
            raise ArchiveError(f"{path}: inflates to more than {MAX_FILE // 2 ** 30} GB (no archive does): not an "
                               f"archive of runs; restore it (`git checkout -- {path.name}`)")
        yield number, line


def read(path: Path) -> list[dict]:
    """The runs of one archive file; ArchiveError naming the file (and line) if it is damaged, or inflates beyond
    the caps (`_lines`)."""
    out = []
    try:
        with gzip.open(path, "rt") as f:
            for number, line in _lines(f, path):
                if not line.strip():
                    continue
                try:
                    result = json.loads(line)
                except (ValueError, RecursionError) as err:  # JSON's errors, an integer too long to read, nesting
                    raise ArchiveError(f"{path}, line {number}: not a run "
                                       f"({getattr(err, 'msg', None) or type(err).__name__})") from None
                from .result import holds_a_run

                if not isinstance(result, dict) or "key" not in result or not holds_a_run(result):
                    raise ArchiveError(f"{path}, line {number}: not a run (no config, key or per-round metrics)")
                out.append(result)
    except (EOFError, OSError, UnicodeDecodeError) as err:  # gzip's: truncated, or not gzip at all
        raise ArchiveError(f"{path} is damaged ({type(err).__name__}: {err})") from None
    return out


@dataclass(frozen=True)
class Written:
    """What `write` did with the runs it was given: added (no run of that key there), replaced (named: numbers that
    differ, with `replace`), identical (already there as they are)."""
    new: int
    replaced: tuple[str, ...]
    identical: int

    def said(self) -> str:
        return (f"{self.new} new, {len(self.replaced)} replaced, {self.identical} identical"
                + (f" (replaced: {', '.join(self.replaced)})" if self.replaced else ""))


def write(path: Path, results: list[dict], replace: bool = False) -> Written:
    """Write `results` (and keep the other runs already in `path`), one per key, sorted; returns what it did
    (`Written`). A run whose key is shipped with other numbers is refused unless `replace` (ArchiveError naming it,
    nothing written); `refused` names the runs a pack or merge must not ship at all. The read, merge and write hold an exclusive lock on a sidecar
    file (`.<name>.lock`), so two packing jobs never drop each other's runs, and the file is replaced atomically (a
    temporary file, then a rename), so a kill mid-write leaves the old one whole. A damaged `path` is refused
    (ArchiveError, saying how to restore it) and left as it is."""

    import fcntl
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.parent / f".{path.name}.lock"
    from .safe_files import open_lock

    try:  # created if absent, never truncated, never followed: a symlink planted there is refused
        lock = open_lock(lock_path)
    except OSError as err:
        raise ArchiveError(f"{lock_path} cannot be the lock file ({err}: a symlink there is refused); "
                           f"remove it and pack again") from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            existing = read(path) if path.exists() else []
        except ArchiveError as err:
            raise ArchiveError(f"{err}; nothing was written: restore it (`git checkout -- {path.name}` in "
                               f"{path.parent}) and pack again, or move it aside to start the file anew") from None
        merged = {(r["config"]["method"], r["key"]): r for r in existing}
        new, replaced, identical = 0, [], 0
        for r in results:
            k = (r["config"]["method"], r["key"])
            if k not in merged:
                new += 1
            elif _same(merged[k], r):
                identical += 1
                continue
            elif not replace:
                raise ArchiveError(f"{path.name} ships run {_named(r)} with other numbers: nothing was written; "
                                   f"--replace replaces it (and names it)")
            else:
                replaced.append(_named(r))
            merged[k] = r
        text = "".join(json.dumps(merged[k], sort_keys=True) + "\n" for k in sorted(merged))
        buffer = io.BytesIO()
        with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as f:
            f.write(text.encode())
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".tmp-{path.name}.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(buffer.getvalue())
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; a shipped file is read by everyone, as a plain write
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    _index.cache_clear()
    return Written(new, tuple(replaced), identical)


def refused(results: list, path: Path) -> None:
    """ArchiveError naming the first of `results` that may not be shipped in `path` (`result.not_servable`: numbers
    that are not finite, lists that are not one value per round, client accuracies not one per client, a config of
    another key), before anything is written."""
    from .result import holds_a_run, not_servable

    for r in results:
        why = (not_servable(r, r.get("key")) if holds_a_run(r) and "key" in r else "it holds no run (config, key and "
               "per-round metrics)")
        if why is not None:
            raise ArchiveError(f"a run for {path.name} ({_named(r)}) refused: {why}; nothing was written")


def _named(r) -> str:
    try:
        return f"{r['config']['method']} seed {r['config'].get('seed')} {r['key']}"
    except (KeyError, TypeError):
        return "a line that is not a run"


def _same(a: dict, b: dict) -> bool:
    """Whether two results of one key hold the same numbers (per-round metrics, client accuracies, the fine-tune's)."""
    return all(a.get(k) == b.get(k) for k in ("rounds", "client_acc", "final", "extra"))


if __name__ == "__main__":  # python -m fedlib.archive: name every damaged archive file on the terminal (a warning)
    for line in damaged():
        print(f"fedlib: warning: {line}", file=sys.stderr)
