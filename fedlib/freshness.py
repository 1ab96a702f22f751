"""Is what the repository ships what the code computes? Regenerate the cheap notebooks and compare their tables
with figures/ (`regenerate`); re-run the first rounds of shipped runs and compare (`check`).

A shipped run (`archive/*.jsonl.gz`) is replayed for its first `rounds` rounds from its own config
(`experiments.replay`) and every per-round metric is compared: exactly when the run was made on the same kind of
processor (`provenance.machine`) and device (on a GPU, the same GPU), otherwise within `TOLERANCE` (relative;
accuracies within `ACC_TOLERANCE`, absolute: one test prediction that rounding flips moves a client's accuracy by a
whole sample), since CPUs of another kind may round differently. A method whose server amplifies a rounding
difference beyond those tolerances (`AMPLIFIES_ROUNDING`) is compared on another kind of processor by its exact
counts only (the bits sent), and the check says so. Runs made on another device type (a GPU run,
checked on a CPU) are not replayed (`on_another_device`): they are counted, and a machine of their type replays
them. A run that differs is stale: the code changed its numbers, so its method's version should have been bumped and
the run recomputed (`scripts/paper_runs.py`, then `--pack`).
"""
from __future__ import annotations

import csv
import io
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

from . import archive, claims, engine, provenance
from .config import Config, restore
from .experiments import replay
from .paths import project_root

METRICS = ("acc_mean", "acc_all", "loss", "train_loss", "up_bits", "down_bits")
# Measured with scripts/measure_tolerance.py. AVX2 kernels against runs made with AVX512 ones (ATEN_CPU_CAPABILITY=avx2
# on the AVX512 machine that made them): the first 2 rounds of shipped runs moved by up to 1.1e-4 relative;
# 3-round reference runs by up to 4e-3 (FedLog with central DP, whose noise amplifies a rounding difference).
# An AMD AVX512 CPU (family 26) against that one, all 77 shipped runs: losses by up to 7.6e-3 relative (FedLog,
# seed 1), accuracies by up to 1.6e-3 absolute (0.16 points; 4.9e-3 relative, FedBabu at 10% accuracy), the bits
# not at all; 17 of 77 runs were equal bit for bit. Both bounds lie about 3x above what was measured.
TOLERANCE = 2e-2
ACC_TOLERANCE = 5e-3
ACCURACIES = ("acc_mean", "acc_all")
COUNTS = ("up_bits", "down_bits")  # message sizes: no rounding enters them, so compared exactly everywhere
# Methods whose first rounds move beyond the tolerances above between processor kinds, with the code unchanged.
# FedRD's server distils synthetic data by gradient matching (up to 100 steps) and trains 50 epochs on it: its
# ladder runs made on an Intel AVX512 machine (family 6, model 207), replayed on an AMD AVX2 one (family 25) with
# the runs' own commits, gave round-0 accuracies 0.8325 against 0.8240 (init real) and 0.7256 against 0.7080
# (init random), losses 3-9% apart; the same commit and the code of today agreed bit for bit on the AMD machine.
# FedDM's server distils by the same gradient matching: its ladder run at T = 10 (seed 2, key e5772564faf8304f), made
# on that Intel machine, gave round-0 accuracy 0.7747; its own commit (13911858fc36) and today's code both give 0.7644
# on an AMD AVX-512 one (family 25, model 17), bit for bit (2026-12-06; the stratified sample replayed FedDM first).
# FedPAC's server combines heads by a quadratic program per client and zeroes weights below 1e-3: its FedCR Table 2
# n1 runs, made on an AMD AVX-512 machine (family 25, model 17), replayed on an Intel one (family 6, model 167) with
# the code unchanged, gave round-1 accuracy 0.6561 against 0.6893 (seed 0) and 0.5270 against 0.5185 (seed 2), round
# 0 within 1e-4; on that Intel machine alone its AVX-512, AVX2 and scalar kernels (ATEN_CPU_CAPABILITY) gave 0.6561,
# 0.6493 and 0.6935 (2026-12-07). The test command failed there on it, and on Ditto's FedCR n1 run (seed 0, key
# e1a7bc0513d87718, made on an AMD family 26 machine; replayed without a difference on an AMD family 25 one): at
# accuracies near chance, round 0 gave 0.1070 against 0.0993, round 1's training loss 1.555 against 1.740 (11%); that
# Intel machine's AVX-512, AVX2 and scalar kernels alone gave round-1 accuracies 0.1460, 0.1413 and 0.1384.
AMPLIFIES_ROUNDING = {"fedrd": "its server's distillation amplifies rounding: 1.8 points of round-0 accuracy "
                               "between an Intel AVX512 and an AMD AVX2 processor",
                      "feddm": "its server's distillation amplifies rounding: 1.0 point of round-0 accuracy between "
                               "an Intel and an AMD AVX-512 processor, the run's own commit giving today's numbers",
                      "fedpac": "its server's head combination amplifies rounding: 3.3 points of round-1 accuracy "
                                "between an AMD and an Intel AVX-512 processor, 4.4 between one machine's own "
                                "kernel sets",
                      "ditto": "its first rounds, near chance in FedCR's setting, amplify rounding: 0.8 points of "
                               "accuracy and 11% of the training loss between an AMD and an Intel AVX-512 processor"}


def differences(shipped: dict, rounds: int = 2) -> list[str]:
    """What differs between a shipped run's first rounds and the same rounds computed now (empty: fresh)."""
    cfg = restore(shipped["config"])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as paper runs are made (scripts/paper_runs.py): convolutions' backward sums in an
    try:  # order that depends on the thread count (FedRD's ladder, ConvNet-32: 0.4 points at round 0 with 2 threads)
        replayed = replay(cfg, rounds)
    finally:
        torch.set_num_threads(threads)
    exact = _made_here(shipped, cfg)
    out = []
    for metric in (METRICS if exact or cfg.method not in AMPLIFIES_ROUNDING else COUNTS):
        for rnd, (old, new) in enumerate(zip(shipped["rounds"][metric][:rounds], replayed[metric])):
            if not (old == new if exact else _close(metric, old, new)):
                out.append(f"{metric} of round {rnd}: shipped {old!r}, now {new!r}")
    return out


def _close(metric: str, old: float, new: float) -> bool:
    if metric in COUNTS:
        return old == new
    if metric in ACCURACIES:
        return abs(old - new) <= ACC_TOLERANCE
    return math.isclose(old, new, rel_tol=TOLERANCE, abs_tol=1e-12)


def _made_here(shipped: dict, cfg: Config) -> bool:
    """Whether `shipped` ran on this kind of machine: the same processor kind, device type and (on a GPU) GPU."""
    code, device = shipped.get("code", {}), engine.resolve_device(cfg.device)
    made_on = code.get("first_rounds_on", code.get("machine"))  # a run resumed elsewhere: where it began
    return made_on == provenance.machine() and shipped.get("device", "cpu") == device.type \
        and code.get("gpu") == provenance.gpu_name(device)


def on_another_device(shipped: dict) -> bool:
    """A run made on a device type this machine does not replay it on (a GPU run here on a CPU, or the reverse):
    the check's tolerances were measured between CPUs, and a GPU's rounding already takes nearly all of
    `ACC_TOLERANCE` by round 1 (FedCR's Table 2 n1, seed 0: 0.45 points of accuracy, against 0.5), so it is replayed
    only on its own device type, where the comparison is exact."""
    return shipped.get("device", "cpu") != engine.resolve_device(restore(shipped["config"]).device).type


def replay_cost(shipped: dict, rounds: int) -> float:
    """The seconds a replay of `shipped`'s first `rounds` rounds took when it was made (its per-round `seconds`;
    without them, its wall time pro rata)."""
    secs = shipped["rounds"].get("seconds")
    if secs:
        return float(sum(secs[:rounds]))
    n = max(len(shipped["rounds"].get("acc_mean", [])), 1)
    return float(shipped.get("wall_s") or 0.0) * min(rounds, n) / n


def sample(files: dict[str, list[dict]], rounds: int = 2) -> list[tuple[str, dict]]:
    """The stratified sample `check` replays by default: for every archive file (a run set) its cheapest run, then
    for every method not yet in the sample its cheapest run in any file, so that every set and every method is
    replayed at least once (what a change to one method's code or to one set's setting would show in). Cheapest by
    the seconds its first `rounds` rounds took when made (`replay_cost`); ties by key. `files`: file name -> runs."""
    order = lambda fr: (replay_cost(fr[1], rounds), fr[1]["key"])  # noqa: E731
    chosen = [min(((f, r) for r in runs), key=order) for f, runs in sorted(files.items()) if runs]
    every = sorted(((f, r) for f, runs in files.items() for r in runs), key=order)
    for f, r in every:
        if r["config"].get("method") not in {c[1]["config"].get("method") for c in chosen}:
            chosen.append((f, r))
    return chosen


def replayed(picked: list[dict], rounds: int, workers: int = 1) -> list[list[str]]:
    """`differences` of each shipped run in `picked`, in its order; with `workers` > 1 in as many processes (spawned:
    each replays on one thread, as `differences` does in this process, so the numbers are the same), the longest
    replays first (`replay_cost`) so that the last to finish is a short one."""
    if workers <= 1 or len(picked) <= 1:
        return [differences(shipped, rounds) for shipped in picked]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    longest_first = sorted(range(len(picked)), key=lambda i: -replay_cost(picked[i], rounds))
    with ProcessPoolExecutor(min(workers, len(picked)), mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {i: pool.submit(differences, picked[i], rounds) for i in longest_first}
        return [futures[i].result() for i in range(len(picked))]


def preload_tcmalloc(env: dict) -> str:
    """Preload tcmalloc into the processes the check starts (its replays, spawned, and the notebooks it regenerates)
    by setting LD_PRELOAD in `env` (os.environ), where tcmalloc is installed and LD_PRELOAD is not set (LD_PRELOAD=
    keeps glibc's malloc). The same bits, as in the paper runs' slots; the check took 4 min 49 s against 5 min 19 s
    (system time 20 s against 93 s) on an Intel 6-167 machine. Returns the library preloaded, '' if none."""
    if "LD_PRELOAD" in env:
        return ""
    found = provenance.tcmalloc_library()
    if found:
        env["LD_PRELOAD"] = found
    return found


def archive_files(sets: list[str] | None = None) -> list[Path]:
    """The shipped archive files, or those of the run sets named in `sets` (a set's file is
    archive/<set>_paper.jsonl.gz; its full file name or stem is accepted too). An unknown name raises ValueError
    listing the sets there are, before any replay starts."""
    paths = sorted(archive.folder().glob("*.jsonl.gz"))
    if sets is None:
        return paths
    stems = {p.name[:-len(".jsonl.gz")]: p for p in paths}
    named = {s.removesuffix(".jsonl.gz"): s for s in sets}
    unknown = [given for stem, given in named.items() if stem not in stems and f"{stem}_paper" not in stems]
    if unknown:
        shipped = ", ".join(sorted(s.removesuffix("_paper") for s in stems))
        raise ValueError(f"--set {', '.join(unknown)}: no such shipped run set in {archive.folder()}; the sets "
                         f"shipped are: {shipped}")
    return sorted({stems.get(stem) or stems[f"{stem}_paper"] for stem in named})


def check(rounds: int = 2, per_file: int | None = None, notes: list | None = None, every: bool = False,
          workers: int = 1, sets: list[str] | None = None, tally: dict | None = None) -> list[str]:
    """Replay shipped runs of the archive files (of the run sets named in `sets`, else all): the stratified `sample`
    (default), the first `per_file` runs of each file by key, or with `every` all of them, in `workers` processes
    (`replayed`); one line per stale run, naming it and how to remake it. Runs made on another device type than this
    machine's are not replayed: they are counted in a line appended to `notes` (when given). `tally` (when given)
    gets, for each file, the runs it holds, those replayed, those compared by their bits only and those stale (what
    `record` writes)."""
    stale, elsewhere, counts_only, files, held = [], {}, {}, {}, {}
    for path in archive_files(sets):
        mine = files.setdefault(path.name, [])
        for r in sorted(archive.read(path), key=lambda r: r["key"]):
            held[path.name] = held.get(path.name, 0) + 1
            if on_another_device(r):
                elsewhere[r.get("device", "cpu")] = elsewhere.get(r.get("device", "cpu"), 0) + 1
            else:
                mine.append(r)
    picked = [(f, r) for f, runs in files.items() for r in (runs if every else runs[:per_file])] \
        if every or per_file else sample(files, rounds)
    if tally is not None:
        tally.update({name: {"runs": held.get(name, 0), "replayed": 0, "bits_only": 0, "stale": 0} for name in files})
    for (name, shipped), found in zip(picked, replayed([r for _, r in picked], rounds, workers)):
        method = shipped["config"].get("method")
        bits_only = method in AMPLIFIES_ROUNDING and not _made_here(shipped, restore(shipped["config"]))
        if tally is not None:
            tally[name]["replayed"] += 1
            tally[name]["bits_only"] += bits_only
            tally[name]["stale"] += bool(found)
        if bits_only:
            counts_only[method] = counts_only.get(method, 0) + 1
        if found:
            label = restore(shipped["config"]).label()
            stale.append(f"{name}: {label} (key {shipped['key']}) is stale: {found[0]}"
                         f"{f' and {len(found) - 1} more' if len(found) > 1 else ''}. Bump the method's version "
                         f"if the change was meant, recompute the runs (scripts/paper_runs.py) and pack them again")
    if notes is not None:
        notes += [f"{n} shipped run{'s' * (n != 1)} made on {device} not replayed here: a {device} machine replays "
                  f"{'them' if n != 1 else 'it'} (FEDLIB_DEVICE={device} python -m fedlib check)"
                  for device, n in sorted(elsewhere.items())]
        notes += [f"{n} shipped {method} run{'s' * (n != 1)} made on another kind of processor compared by the bits "
                  f"sent only: {AMPLIFIES_ROUNDING[method]}; a machine of the kind that made "
                  f"{'them' if n != 1 else 'it'} compares every number" for method, n in sorted(counts_only.items())]
    return stale


CHECKS_FILE = "checks.csv"  # in archive/: one row per run set and recorded check (`fedlib check --record`)
CHECK_COLUMNS = ("started", "set", "which", "rounds", "runs", "replayed", "bits_only", "stale", "code", "commit",
                 "machine", "check_s")


def started() -> dict:
    """When a check starts and with what code: the columns of its rows in archive/checks.csv that `record` cannot
    read at the end (the checkout may be committed to while a long check runs)."""
    from datetime import datetime, timezone

    made = provenance.commit()
    return {"started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "code": provenance.fingerprint(),
            "commit": made.get("commit", "") + ("+changes" if made.get("dirty") else ""), "at": time.perf_counter()}


def record(tally: dict, which: str, rounds: int, start: dict, path: Path | None = None) -> Path:
    """Append one row per archive file of `tally` (from `check`) to archive/checks.csv: when the check started, which
    runs (`which`: every, sample or first-N), how many rounds each, how many the set holds, replayed, compared by their
    bits only (`AMPLIFIES_ROUNDING`, made on another processor kind) and found stale,
    the code, commit and processor kind that replayed them (`start`, from `started`), and the whole check's seconds
    (all its sets). The file says which shipped sets were replayed whole, and when."""
    from .safe_files import refuse_symlink, replace_text

    path = path or archive.folder() / CHECKS_FILE
    refuse_symlink(path, "append to")  # the rows so far are read, then the whole file replaced: no link followed
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    seconds = time.perf_counter() - start["at"]
    rows = io.StringIO(newline="")
    out = csv.writer(rows, lineterminator="\n")
    if not before:
        out.writerow(CHECK_COLUMNS)
    for name, t in sorted(tally.items()):
        out.writerow([start["started"], name.removesuffix(".jsonl.gz").removesuffix("_paper"), which, rounds,
                      t["runs"], t["replayed"], t["bits_only"], t["stale"], start["code"], start["commit"],
                      provenance.machine(), f"{seconds:.0f}"])
    replace_text(path, before + rows.getvalue())
    return path


CHEAP_NOTEBOOKS = ("01", "04")  # quick profile under a minute each: regenerated and compared file by file
# Some CPU kernels (convolution backward, for one) sum in an order that depends on the thread count: notebook 04's
# central training gave 0.25 of conv2's dimensions passing with 2 threads and 0.35 with 1. run_all.sh therefore runs
# with one torch thread unless told otherwise, and the check regenerates the same way.
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def compare_tables(new_dir: Path, committed_dir: Path) -> list[str]:
    """Every CSV the regeneration wrote against the committed one of the same name, cell by cell (made on the same
    kind of processor, they are equal; see `regenerate` for another kind). The "code" and "device" columns say
    where the rows come from (a change elsewhere in the numeric code changes the fingerprint, not these numbers), so
    they are not compared."""
    stale = []
    for new in sorted(new_dir.rglob("*.csv")):
        old = committed_dir / new.relative_to(new_dir)
        if not old.exists():
            stale.append(f"{old} is not committed")
            continue
        a, b = (list(csv.reader(io.StringIO(p.read_text()))) for p in (new, old))
        skip = {i for i, name in enumerate(a[0]) if name in ("code", "device")} if a else set()
        same = len(a) == len(b) and all(len(ra) == len(rb) and all(x == y for i, (x, y) in
                                                                    enumerate(zip(ra, rb)) if i not in skip)
                                        for ra, rb in zip(a, b))
        if not same:
            stale.append(f"{old} differs from what the code computes now")
    return stale


def compare_verdicts(new_dir: Path, committed_dir: Path) -> list[str]:
    """The claims rows (claims/*.csv) the regeneration wrote against the committed ones: the same claims, each with
    the same verdict."""
    stale = []
    for new in sorted(new_dir.rglob("claims/*.csv")):
        old = committed_dir / new.relative_to(new_dir)
        verdicts = [{(r["paper"], r["where"], r["claim"]): r["verdict"] for r in claims.read(p)} if p.exists() else {}
                    for p in (new, old)]
        for key in sorted(set(verdicts[0]) | set(verdicts[1])):
            now, then = (v.get(key, "absent") for v in verdicts)
            if now != then:
                stale.append(f"{old}: \"{key[2]}\" ({key[1]}) {now} now, {then} committed")
    return stale


def regenerate(numbers=CHEAP_NOTEBOOKS, out: Path | None = None) -> list[str]:
    """Run the cheap notebooks in the quick profile into `out` (default build/check/) and compare their tables with
    figures/; one line per stale file, with the command that remakes it. The comparison is exact when the committed
    files were made on this kind of processor (their ledger's `made_on`, `claims.ClaimsLedger.save`). Made on another kind,
    their numbers cannot be compared (a rounding difference grows over a training run: Fig. A.2's p-value at alpha 0
    is 0.0153 on the AVX512 CPU that made it and 0.0109 on an AMD AVX512 one), so then the claims' verdicts are
    compared."""
    root = project_root()
    out = out or root / "build" / "check"
    stale = []
    for number in numbers:
        nb = next((root / "notebooks").glob(f"{number}_*.ipynb"))
        figures = out / "figures" / nb.stem
        shutil.rmtree(figures, ignore_errors=True)
        env = {**os.environ, "FEDLIB_PROFILE": "quick", "FEDLIB_FIGURES": str(figures),
               "FEDLIB_RESULTS": str(out / "results"), **THREADS}
        out.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([sys.executable, "-m", "fedlib.notebook_run", str(nb), str(out / nb.name), "quick"],
                              env=env, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"regenerating {nb.name} failed: {done.stderr.strip().splitlines()[-1]}")
        made_on = claims.made_on(root / "figures" / "claims" / f"{nb.stem}_quick.csv")
        if made_on == provenance.machine():
            lines = compare_tables(figures, root / "figures")
        else:
            print(f"{nb.stem}: the committed files were made on {made_on or 'an unrecorded processor'}, this is "
                  f"{provenance.machine()}: comparing the claims' verdicts only", file=sys.stderr)
            lines = compare_verdicts(figures, root / "figures")
        stale += [f"{line}: ./run_all.sh {number} remakes it" for line in lines]
    return stale
