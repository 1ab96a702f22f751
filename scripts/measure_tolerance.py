"""Measure how far numbers move on another kind of processor: the reference runs of tests/data/reference_runs.json
(made on an AVX512 CPU) recomputed here, and the first rounds of the shipped archive replayed. Run it on a different
CPU, or emulate one on an AVX512 machine with ATEN_CPU_CAPABILITY=avx2 (PyTorch then uses its AVX2 kernels):

    ATEN_CPU_CAPABILITY=avx2 OMP_NUM_THREADS=1 python scripts/measure_tolerance.py

Prints the largest relative difference per run and overall; `freshness.TOLERANCE` must lie above it.

    python scripts/measure_tolerance.py --record

records this processor's reference runs in tests/data/reference_runs.json (`other_kinds`), so that
tests/test_reference_numbers.py checks them bit for bit here. Do it only with code whose numbers are the
reference's: it refuses when a run differs by more than rounding, and it records the commit and code fingerprint.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fedlib import archive, freshness, provenance  # noqa: E402
from fedlib import experiments as ex  # noqa: E402
from fedlib.config import Config  # noqa: E402


def relative(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-12))) if a.size else 0.0


def main(record: bool) -> None:
    from test_reference_numbers import METRICS, REF, ROUNDING, reference_config, relative_difference

    print(f"this processor: {provenance.machine()}; the references: {REF['made_on']['cpu_capability']}")
    worst, runs = 0.0, {}
    for label, want in REF["runs"].items():
        res = ex.run(reference_config(label), cache=False, progress=False)
        runs[label] = got = {k: res["client_acc"] if k == "client_acc" else res["rounds"][k] for k in METRICS}
        d = relative_difference(got, want)
        worst = max(worst, d)
        print(f"reference {label:32s} largest relative difference {d:.2e}", flush=True)
    if record:
        if worst >= ROUNDING:
            raise SystemExit(f"not recorded: a run differs by {worst:.1e}, more than rounding ({ROUNDING:g})")
        kinds = REF.setdefault("other_kinds", {})
        kinds[provenance.machine()] = {"runs": runs, "made_on": {**provenance.commit(), "torch": torch.__version__,
                                                                 "fingerprint": provenance.fingerprint()}}
        path = ROOT / "tests" / "data" / "reference_runs.json"
        path.write_text(json.dumps(REF, indent=1) + "\n")
        print(f"recorded {len(runs)} runs for {provenance.machine()} in {path}")
        return
    for path in sorted(archive.folder().glob("*.jsonl.gz")):
        for shipped in sorted(archive.read(path), key=lambda r: r["key"])[:4]:
            now = ex.replay(Config(**shipped["config"]), 2)
            d = max(relative(now[k], shipped["rounds"][k][:2]) for k in freshness.METRICS)
            worst = max(worst, d)
            print(f"archive {Config(**shipped['config']).label():40s} largest relative difference {d:.2e}", flush=True)
    print(f"largest relative difference overall: {worst:.2e} (freshness.TOLERANCE = {freshness.TOLERANCE:g})")


if __name__ == "__main__":
    torch.set_num_threads(1)
    main(record="--record" in sys.argv[1:])
