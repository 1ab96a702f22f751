"""Peak resident memory of one MNIST paper-setting run (50 clients, 5 local epochs, batch 10), against PFLlib's.

    python benchmarks/bench_memory.py [--rounds 2] [--methods fedavg,fedlog] [--repeats 2]

Each run is a fresh process (`python -m fedlib run`, with an empty results folder so that it computes); its peak
comes from the kernel's accounting of finished children (ru_maxrss). A process that only imports torch is measured
the same way, as the floor every run starts from. PFLlib's figure (1.26 GB for its FedAvg on the same data, same
machine type) is the one the speed issue quotes: PFLlib is not installed here, so it is not re-measured.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile

PFLLIB_PEAK_GB = 1.26


def peak_gb(args: list[str], env: dict) -> float:
    """The peak RSS of one child process: ru_maxrss of the children waited for so far is their maximum, so every
    measurement runs in a fresh intermediate process that waits for exactly one child."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *args], env=env, check=True, capture_output=True, text=True)
    kb = int(out.stdout.split()[-1])  # Linux reports kilobytes
    return kb * 1024 / 1e9


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--methods", default="fedavg,fedlog")
    p.add_argument("--repeats", type=int, default=2)
    a = p.parse_args()
    if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 1e9:  # macOS reports bytes; the sums below assume kB
        raise SystemExit("this benchmark reads Linux's ru_maxrss (kilobytes)")
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    floor = [peak_gb([sys.executable, "-c", "import torch"], env) for _ in range(a.repeats)]
    print(f"import torch only: {max(floor):.3f} GB (peaks {', '.join(f'{v:.3f}' for v in floor)})")
    for method in a.methods.split(","):
        runs = []
        for _ in range(a.repeats):
            with tempfile.TemporaryDirectory() as results:  # an empty results folder: every repeat computes
                runs.append(peak_gb([sys.executable, "-m", "fedlib", "run", "--method", method, "--dataset", "mnist",
                                     "--rounds", str(a.rounds)], {**env, "FEDLIB_RESULTS": results}))
        print(f"{method}: {max(runs):.3f} GB peak over {a.repeats} runs ({', '.join(f'{v:.3f}' for v in runs)}), "
              f"{max(runs) / PFLLIB_PEAK_GB:.2f}x PFLlib's {PFLLIB_PEAK_GB} GB; "
              f"{max(runs) - max(floor):.3f} GB above importing torch")


if __name__ == "__main__":
    main()
