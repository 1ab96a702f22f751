"""Carry the checkpoints of runs in progress from one working session to the next, through the repository.

A working session's machine is not kept: its results folder, and with it a long run's checkpoint, is gone when the
next session starts on a fresh machine (it was on 2026-12-07: FedCR's n2 runs, 2-4 hours each, had lost 55 and 180
rounds). So before a session stops, `out` copies every checkpoint of a results folder into `archive/in_progress/`
(gzipped, with a manifest: the run, how far it is, the code fingerprint that wrote it and the commit of the
worktree whose code has that fingerprint), to be committed; and where work resumes, `in` copies them back into the
new results folder, so that the slots, started from a worktree at that commit, go on from those rounds.

    python scripts/carry.py out RESULTS --worktree WT [--worktree WT2]   # before stopping; then commit archive/
    python scripts/carry.py in RESULTS                                 # on the next machine; says the commit(s)

`out` replaces what an earlier `out` left: a run finished since (packed into archive/) is no longer carried. `in`
never overwrites a finished result or a checkpoint further on than the carried one, and checks every file against
the manifest's digest. A checkpoint is only ever read by `fedlib.checkpoint.load`, which refuses to unpickle
anything but fedlib's own state (no file here can run code), and resumes it only under the same code fingerprint.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fedlib import checkpoint, paths

FOLDER = paths.project_root() / "archive" / "in_progress"
MANIFEST = "manifest.json"
# The largest checkpoint carried, before gzip (which saves under 10% on weights). FedCR's n2 runs write 21-25 MB and
# FedAvg's 10 MB; Ditto's, which keep a personal model for each of 100 clients, 353-519 MB (2026-12-07): a git
# history should not hold that (GitHub refuses a file over 100 MB). Such a run resumes only on the machine that has
# its results folder; on a fresh one it starts over (`out` says how many rounds that loses).
MAX_MB = 80


def _header(ckpt: Path) -> tuple[bytes, str, str]:
    """A checkpoint's format line, code fingerprint and run key (its first three lines, read as text)."""
    with open(ckpt, "rb") as f:
        return f.readline(), f.readline(200).rstrip(b"\n").decode("ascii", "replace"), \
            f.readline(200).rstrip(b"\n").decode("ascii", "replace")


def fingerprint_of(worktree: Path) -> tuple[str, str]:
    """The code fingerprint of the fedlib in `worktree` and its commit (asked in a child, with that tree first)."""
    if not (worktree / "fedlib").is_dir():
        raise SystemExit(f"carry: {worktree} holds no fedlib/; name the worktree the slots run from")
    child = subprocess.run([sys.executable, "-c", "from fedlib import provenance; print(provenance.fingerprint())"],
                           cwd=worktree, env={**os.environ, "PYTHONPATH": str(worktree)}, capture_output=True,
                           text=True, timeout=120)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=worktree, capture_output=True, text=True, timeout=30)
    if child.returncode or head.returncode:
        raise SystemExit(f"carry: cannot read the fingerprint or commit of {worktree}: {child.stderr[-500:]}"
                         f"{head.stderr[-200:]}")
    return child.stdout.strip(), head.stdout.strip()


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def carry_out(results: Path, worktrees: list[Path], folder: Path | None = None, max_mb: float = MAX_MB) -> dict:
    """Every checkpoint in `results` of at most `max_mb` megabytes into `folder` (gzipped) with a manifest; what
    `folder` held before goes. Returns the manifest; its "too_large" lists the checkpoints left out for their size,
    with their progress. A checkpoint whose fingerprint no named worktree has is refused before anything is written."""
    folder = folder or FOLDER  # read at the call (FOLDER as the module has it now), not when the module loaded
    commits = dict(fingerprint_of(w) for w in worktrees)
    runs, sources, too_large = {}, {}, {}
    for ckpt in sorted(results.glob("*/*.ckpt")):
        fmt, written_by, key = _header(ckpt)
        if fmt != checkpoint.FORMAT or key != ckpt.name.split(".", 1)[0]:
            print(f"carry: skipped {ckpt} (not a fedlib checkpoint of run {ckpt.stem})", file=sys.stderr)
            continue
        if ckpt.stat().st_size > max_mb * 1e6:
            too_large[f"{ckpt.parent.name}/{ckpt.name}"] = {"mb": round(ckpt.stat().st_size / 1e6, 1),
                                                            "progress": checkpoint.progress(ckpt)}
            continue
        if written_by not in commits:
            raise SystemExit(f"carry: {ckpt} was written by code {written_by}, which none of the worktrees "
                             f"{', '.join(map(str, worktrees)) or '(none named)'} has; name the slots' worktree with "
                             f"--worktree (nothing was written)")
        name = f"{ckpt.parent.name}/{ckpt.name}"
        runs[name] = {"fingerprint": written_by, "commit": commits[written_by], "sha256": _sha256(ckpt),
                      "progress": checkpoint.progress(ckpt)}
        sources[name] = ckpt
    if folder.exists():
        shutil.rmtree(folder)
    for name, ckpt in sources.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        with open(ckpt, "rb") as src, gzip.GzipFile(folder / f"{name}.gz", "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
    manifest = {"runs": runs, "too_large": too_large}
    if runs or too_large:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def carry_in(results: Path, folder: Path | None = None) -> list[str]:
    """The carried checkpoints into `results`, where the run is neither finished there nor further on; returns the
    runs restored. Every file is checked against its digest before any is written."""
    folder = folder or FOLDER
    if not (folder / MANIFEST).exists():
        return []
    runs = json.loads((folder / MANIFEST).read_text())["runs"]
    blobs = {}
    for name, entry in runs.items():
        if not re.fullmatch(r"[a-z0-9_]+/[0-9a-f]{16}\.ckpt", name):  # a method's folder and a run key, nothing else
            raise SystemExit(f"carry: the manifest names {name!r}, not METHOD/KEY.ckpt (nothing was restored)")
        src = folder / f"{name}.gz"
        if not src.exists():
            raise SystemExit(f"carry: {src} is missing; the manifest names it (nothing was restored)")
        with gzip.open(src, "rb") as f:
            blobs[name] = f.read()
        if hashlib.sha256(blobs[name]).hexdigest() != entry["sha256"]:
            raise SystemExit(f"carry: {src} does not match its digest in the manifest (nothing was restored)")
    restored = []
    for name, blob in blobs.items():
        target = results / name
        done = target.with_suffix(".json").exists()
        there = checkpoint.progress(target) if target.exists() else None
        carried = runs[name]["progress"] or {"next_round": 0}
        if done or (there is not None and there["next_round"] >= carried["next_round"]):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=".ckpt")  # a new file, no link followed
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, target)
        if runs[name]["progress"]:
            checkpoint.progress_path(target).write_text(json.dumps(runs[name]["progress"]))
        restored.append(name)
    return restored


def _progress(prog: dict | None) -> str:
    return f"next round {prog['next_round']:.0f} of {prog['rounds']:.0f}" if prog else "progress unknown"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("direction", choices=["out", "in"])
    p.add_argument("results", type=Path, help="the results folder the slots write ($FEDLIB_RESULTS)")
    p.add_argument("--worktree", type=Path, action="append", default=[],
                   help="with out: a worktree the slots run from (repeat for more)")
    p.add_argument("--max-mb", type=float, default=MAX_MB, help=f"with out: leave out a checkpoint larger than this "
                   f"(default {MAX_MB}: a commit should not hold more; Ditto's n2 checkpoints are 350-520 MB)")
    args = p.parse_args(argv)
    if not args.results.is_dir():
        p.error(f"{args.results} is not a folder")
    if args.max_mb <= 0:
        p.error(f"--max-mb {args.max_mb}: give a size in megabytes above 0")
    if args.direction == "out":
        if not args.worktree:
            p.error("out needs --worktree, the worktree the slots run from (its commit is what resumes the runs)")
        made = carry_out(args.results, [w.resolve() for w in args.worktree], max_mb=args.max_mb)
        for name, entry in made["runs"].items():
            print(f"carried {name}: {_progress(entry['progress'])}")
        for name, entry in made["too_large"].items():
            print(f"not carried {name}: {entry['mb']:.0f} MB, over --max-mb {args.max_mb:g}; it resumes only on the "
                  f"machine that has {args.results}, and on a fresh one starts over ({_progress(entry['progress'])} "
                  f"lost)")
        print(f"{len(made['runs'])} checkpoint(s) in {FOLDER}; commit it")
        return 0
    restored = carry_in(args.results)
    manifest = json.loads((FOLDER / MANIFEST).read_text()) if (FOLDER / MANIFEST).exists() else {"runs": {}}
    needs = sorted({(e["fingerprint"], e["commit"]) for e in manifest["runs"].values()}) if restored else []
    print(f"restored {len(restored)} checkpoint(s) into {args.results}: {', '.join(restored) or 'none'}")
    for name, entry in manifest.get("too_large", {}).items():
        if not (args.results / name).exists():
            print(f"not carried (too large): {name}, which was at {_progress(entry['progress'])}: it starts over")
    for fingerprint, c in needs:
        print(f"they resume under code fingerprint {fingerprint} only: start the slots from a worktree at {c} "
              f"(git worktree add ../wt {c}) or at a later commit whose `python -c 'from fedlib import provenance; "
              f"print(provenance.fingerprint())'` prints the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
