"""The results cache: one JSON file per finished run, `$FEDLIB_RESULTS/<method>/<key>.json` (default `results/`),
written atomically (a temporary file, then a rename), so an interrupted run never leaves a usable partial file."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from .config import Config
from .paths import results_dir


def path(cfg: Config) -> Path:
    return results_dir() / cfg.method / f"{cfg.key()}.json"


def is_cached(cfg: Config) -> bool:
    return path(cfg).exists()


def load(cfg: Config) -> dict | None:
    p = path(cfg)
    return json.loads(p.read_text()) if p.exists() else None


def write_atomic(target: Path, obj) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def save(cfg: Config, result: dict) -> None:
    write_atomic(path(cfg), result)
