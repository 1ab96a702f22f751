"""Check what tests cannot reach: how a Ray sweep's driver ends on signals, and what it leaves behind.

    python scripts/check_ray_shutdown.py

Starts `python -m fedlib sweep --backend ray` on a small grid in a scratch results folder, lets the local cluster
start, and sends SIGTERM: the driver must exit with a message and no C++ stack dump, and no Ray process of its
cluster may remain. Then the same with SIGKILL, which no program can catch: Ray's own agents are orphaned then, and
the script reports how long they live on. Exit 1 if SIGTERM leaves anything behind. Takes about a minute.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def ray_processes() -> set[int]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout.splitlines()[1:]
    return {int(line.split()[0]) for line in out if any(k in line for k in ("raylet", "gcs_server", "ray::",
                                                                             "dashboard/agent", "runtime_env"))}


def start(folder: Path) -> subprocess.Popen:
    grid = folder / "grid.json"
    grid.write_text(json.dumps({"base": {"method": "fedlog", "dataset": "circle", "model": "mlp_flexible",
                                         "n_clients": 2, "rounds": 200, "local_epochs": 20, "batch_size": 40,
                                         "lr": 0.05, "same_init": False}, "grid": {"seed": list(range(8))}}))
    env = {**os.environ, "FEDLIB_RESULTS": str(folder / "results")}
    return subprocess.Popen([sys.executable, "-m", "fedlib", "sweep", "--grid", str(grid), "--backend", "ray"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def trial(sig: signal.Signals, before: set[int]) -> tuple[int, str, float | None]:
    with tempfile.TemporaryDirectory() as tmp:
        proc = start(Path(tmp))
        deadline = time.time() + 60
        while time.time() < deadline and not (ray_processes() - before):
            time.sleep(0.5)
        time.sleep(5)  # tasks running
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        t0, left = time.time(), ray_processes() - before
        while left and time.time() - t0 < 180:
            time.sleep(2)
            left = ray_processes() - before
        return proc.returncode, err, None if left else time.time() - t0


def main() -> int:
    before = ray_processes()
    code, err, gone_after = trial(signal.SIGTERM, before)
    dump = "SIGTERM received" in err or "*** " in err
    print(f"SIGTERM: exit code {code}, {'a stack dump' if dump else 'no stack dump'}, Ray processes gone "
          f"{'after %.0f s' % gone_after if gone_after is not None else 'NOT gone after 180 s'}")
    print("  its last words:", [line[:120] for line in err.strip().splitlines() if "WARNING" not in line][-2:])
    code_k, _, gone_k = trial(signal.SIGKILL, before)
    print(f"SIGKILL: exit code {code_k}; Ray's agents orphaned and gone "
          f"{'after %.0f s' % gone_k if gone_k is not None else 'NOT gone after 180 s'} (Ray's behaviour)")
    return 0 if not dump and gone_after is not None and gone_after < 20 else 1


if __name__ == "__main__":
    sys.exit(main())
