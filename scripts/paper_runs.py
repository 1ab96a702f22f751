"""Compute paper-setting runs into the results cache, one after another (resumable: finished runs are skipped, and a
run killed mid-way goes on from its checkpoint, `fedlib.checkpoint`); pack the finished ones into `archive/`.

    OMP_NUM_THREADS=1 python scripts/paper_runs.py SET [--seeds 0-4] [--only LABEL ...] [--reverse] [--shard 0/2]
    python scripts/paper_runs.py SET --pack      # the finished ones into archive/<SET>_paper.jsonl.gz
    python scripts/paper_runs.py SET --list      # the runs of SET: done, started (a checkpoint) or todo
    python scripts/paper_runs.py SET --merge F   # add SET's runs of archive file F (packed on a GPU) to archive/
    python scripts/paper_runs.py SET --backend ray [--address auto]   # every run a Ray task (below)

Sets: every run set a paper declares (`fedlib.papers.RUN_SETS`, which the notebooks read too); `--help` lists each with
its notebook and what it reproduces, and `python -m fedlib claims` how much of each is shipped and what the
rest costs (figures/claims.md).
Two jobs share a 2-core machine: give them `--shard 0/2` and `--shard 1/2` (or one `--reverse`). A shard is taken
from the runs --seeds and --only select, so `SET --shard 1/2` and `SET --only X --shard 0/2` overlap; a run one job
is computing is skipped by the other (`fedlib.cache.claim`), so overlapping lists cost no run twice.
`--backend ray` hands the set to Ray (`fedlib.sweep`'s backend): each run is a task, asking for a GPU where its
device is CUDA, on the cluster at `--address` (or $FEDLIB_RAY_ADDRESS), else on a local cluster of every core. Every
worker must see the same results folder ($FEDLIB_RESULTS: a shared file system), where its results and checkpoints
go: a stopped set, started again, skips its finished runs and resumes the others from their checkpoints.
`--pack` computes nothing: it adds the runs of SET that are in the results cache to the shipped archive.
"""
from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timezone

import torch

from fedlib import archive, cache, checkpoint, knobs
from fedlib import experiments as ex
from fedlib.papers import RUN_SETS

SETS = list(RUN_SETS)


def configs_of(what: str, seeds: list[int], only: list[str]) -> list[tuple[str, ex.Config]]:
    """(label, Config) of every run of a set (declared in its paper's module: `fedlib.papers.RUN_SETS`), seed by
    seed (a stopped job leaves whole seeds)."""
    if what not in RUN_SETS:
        raise SystemExit(f"unknown set {what!r}; choose from {', '.join(SETS)}")
    try:
        return RUN_SETS[what].runs(seeds, only)
    except ValueError as err:
        raise SystemExit(str(err)) from None


def parse_seeds(p: argparse.ArgumentParser, seeds: str) -> tuple[int, int]:
    """--seeds N or A-B, A <= B, at most knobs.MAX_SEEDS seeds (argparse's error, naming the option, otherwise)."""
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", seeds)
    if not m:
        p.error(f"--seeds takes N or A-B (e.g. 2 or 0-2), got {seeds!r}")
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    if hi < lo or hi - lo + 1 > knobs.MAX_SEEDS or hi >= 2 ** 63:
        p.error(f"--seeds {seeds!r}: A-B needs A <= B and at most {knobs.MAX_SEEDS} seeds")
    return lo, hi


def parse_shard(p: argparse.ArgumentParser, shard: str) -> tuple[int, int]:
    """--shard i/n with 0 <= i < n: job i of n takes every n-th run from the i-th, so n jobs cover every run once."""
    m = re.fullmatch(r"(\d+)/(\d+)", shard)
    m = m or re.fullmatch(r"(-?\d+)/(-?\d+)", shard)
    if not m or not int(m.group(2)) >= 1 or not 0 <= int(m.group(1)) < int(m.group(2)) or int(m.group(2)) > 1024:
        p.error(f"--shard takes i/n, and i/n needs 0 <= i < n <= 1024 (e.g. 0/2 and 1/2 for two jobs), got {shard!r}")
    return int(m.group(1)), int(m.group(2))


def status(cfg: ex.Config) -> str:
    """"done" (in the results cache), "started (checkpoint of <UTC time>[, its rounds and the time left])" (a run that
    will resume from its checkpoint; the checkpoint is not read, so listing never touches it: its progress file
    is), or "todo"."""
    if ex.is_cached(cfg):
        return "done"
    ckpt = checkpoint.path_for(cache.path(cfg))
    if ckpt.exists():
        when = datetime.fromtimestamp(ckpt.stat().st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M")
        p = checkpoint.progress(ckpt)  # written beside it by fedlib since 2026-11-26
        if p is None or not 0 < p["next_round"] <= p["rounds"]:
            return f"started (checkpoint of {when} UTC)"
        left = p["elapsed_s"] / p["next_round"] * (p["rounds"] - p["next_round"]) / 3600
        return (f"started (checkpoint of {when} UTC, {p['next_round']:.0f} of {p['rounds']:.0f} rounds, "
                f"about {left:.1f} h left at its pace)")
    return "todo"


def merged(path: str, runs: list) -> list[dict]:
    """The runs of archive file `path` that are runs of the set (`runs`, made on either device type), found by key;
    the others (another set's, or made by code that gave other keys) are left out, and said so on stderr."""
    from pathlib import Path

    if not Path(path).is_file():
        raise OSError(f"{path} is not a file (an archive/<set>_paper.jsonl.gz brought from a GPU machine)")
    keys = {(cfg.method, cfg.key(device_type)) for _, cfg in runs for device_type in archive.DEVICE_TYPES}
    found = archive.read(Path(path))
    kept = [r for r in found if (r["config"]["method"], r["key"]) in keys]
    if len(kept) < len(found):
        print(f"--merge: {len(found) - len(kept)} runs of {path} left out: not runs of this set under today's "
              f"keys", file=sys.stderr)
    return kept


def line(what: str, lab: str, cfg: ex.Config, res: dict) -> str:
    """One finished run, as the log shows it."""
    best = max(res["rounds"]["acc_mean"])
    final = res.get("final", {}).get("acc_mean")
    return (f"{what} seed {cfg.seed} {lab}: best {best:.4f}" + (f", after the fine-tune {final:.4f}"
            if final is not None else "") + f" in {res['wall_s']:.0f} s")


def compute(what: str, runs: list[tuple[str, ex.Config]], backend: str = "sequential", address: str | None = None,
            reverse: bool = False) -> int:
    """Compute the runs not finished yet; the exit status (1 where a run failed, each named). sequential: one after
    another in this process, one thread; ray: every run a task of `fedlib.sweep`'s Ray backend."""
    ordered = list(reversed(runs)) if reverse else runs
    if backend == "sequential":
        torch.set_num_threads(1)
        for lab, cfg in ordered:
            if ex.is_cached(cfg):  # asked just before: a job going the other way (--reverse) may have made it
                continue
            with cache.claim(cfg, wait=False) as held:
                if not held:  # another job on these results (a slot given an overlapping list) is computing it
                    print(f"{what} seed {cfg.seed} {lab}: another job is computing it; left to that job", flush=True)
                    continue
                print(line(what, lab, cfg, ex.run(cfg, progress=False)), flush=True)
        return 0
    todo = [(lab, cfg) for lab, cfg in ordered if not ex.is_cached(cfg)]
    from fedlib import sweep

    report = sweep.run_sweep([cfg for _, cfg in todo], backend="ray", address=address, progress=sys.stderr.isatty())
    for (lab, cfg), res in zip(todo, report.results):
        if res is not None:
            print(line(what, lab, cfg, res), flush=True)
    for cfg, err in report.failures:
        print(f"{what} seed {cfg.seed} {cfg.label()}: failed: {err.strip().splitlines()[-1]}", file=sys.stderr)
    print(f"{what}: {len(todo) - len(report.failures)} of {len(todo)} runs computed on Ray, "
          f"{len(runs) - len(todo)} were finished already", flush=True)
    return 1 if report.failures else 0


def joined_values(argv: list[str]) -> list[str]:
    """`--shard -1/2` as `--shard=-1/2`: argparse takes a value that begins with '-' for an option and says only
    "expected one argument"; joined, the value reaches `parse_shard`, which says what i/n needs."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] in ("--shard", "--seeds") and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def sets_listed() -> str:
    """The run sets, one line each with its notebook and the tables or figures it is for: derived from RUN_SETS, so
    a set a paper declares is listed without being typed here."""
    return "run sets:\n" + "\n".join(
        f"  {name:26s} notebook {str(getattr(s, 'notebook', '?'))[:2]}: {', '.join(getattr(s, 'where', ()))}"
        for name, s in RUN_SETS.items())  # a set made up in a test may have no notebook or where


def main(argv: list[str] | None = None) -> None:
    argv = joined_values(sys.argv[1:] if argv is None else list(argv))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=sets_listed(),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=SETS, metavar="SET", help="a run set (listed below)")
    p.add_argument("--seeds", default=None, help="a range, e.g. 0-2 (default: the seeds its notebook reads)")
    p.add_argument("--only", action="append", default=[], help="a label (repeat for more; labels hold commas)")
    p.add_argument("--reverse", action="store_true")
    p.add_argument("--shard", default="0/1", help="i/n: this job takes every n-th run, from the i-th")
    p.add_argument("--pack", action="store_true")
    p.add_argument("--list", action="store_true")
    p.add_argument("--merge", metavar="FILE", help="an archive file packed elsewhere (scripts/gpu_check.sh's paper "
                   "part): its runs of SET are added to SET's archive file, which keeps its own")
    p.add_argument("--replace", action="store_true", help="with --pack or --merge: a shipped run whose numbers differ "
                   "is replaced (and named); without it such a run is refused and nothing is written")
    p.add_argument("--backend", choices=["sequential", "ray"], default="sequential",
                   help="sequential (default: one run after another here) or ray (every run a Ray task)")
    p.add_argument("--address", default=None, help="with --backend ray: the cluster (e.g. auto or "
                   "ray://host:10001; default $FEDLIB_RAY_ADDRESS, else a local cluster of every core)")
    args = p.parse_args(argv)
    if args.address and args.backend != "ray":
        p.error("--address goes with --backend ray")
    if args.replace and not (args.pack or args.merge):
        p.error("--replace goes with --pack or --merge")
    knobs.check_or_exit()
    default = RUN_SETS[args.what].seeds
    lo, hi = parse_seeds(p, args.seeds) if args.seeds else (min(default), max(default))
    i, n = parse_shard(p, args.shard)
    runs = configs_of(args.what, list(range(lo, hi + 1)), args.only)
    if args.pack or args.merge:
        target = archive.folder() / RUN_SETS[args.what].archive_file
        try:
            done = merged(args.merge, runs) if args.merge else [r for r in (cache.load(c) for _, c in runs) if r]
            archive.refused(done, target)  # not finite, of the wrong length, of another key: none is shipped
            written = archive.write(target, done, replace=args.replace)
        except (archive.ArchiveError, OSError) as err:
            raise SystemExit(f"--{'merge' if args.merge else 'pack'}: {err}") from None
        print(f"{len(done)} of {len(runs)} runs of {args.what} {'in ' + args.merge if args.merge else 'cached'}: "
              f"{written.said()}; {target} ({target.stat().st_size / 1e3:.0f} kB)")
        return
    if args.list:
        for lab, cfg in runs:
            print(f"{status(cfg)}  seed {cfg.seed}  {lab}  {cfg.key()}")
        return
    import signal

    before = signal.signal(signal.SIGTERM, _stopped)  # a stop (kill, a job's end) as Ctrl-C: one line, no traceback
    try:
        code = compute(args.what, runs[i::n], args.backend, args.address, args.reverse)
    except KeyboardInterrupt:
        raise SystemExit(f"{args.what}: stopped; finished runs stay cached, a run in progress goes on from its "
                         f"checkpoint when started again") from None
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as err:
        if args.backend != "ray":
            raise
        raise SystemExit(f"{args.what}: --backend ray failed ({type(err).__name__}: "
                         f"{str(err).strip().splitlines()[0] if str(err).strip() else ''}); check --address "
                         f"{args.address or '(a local cluster)'}") from None
    finally:
        signal.signal(signal.SIGTERM, before)
    if code:
        sys.exit(code)


def _stopped(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
