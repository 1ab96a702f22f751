#!/usr/bin/env bash
# One single-threaded background slot for long paper runs: runs the lines of QUEUE (each a Python script and its
# arguments, e.g. "scripts/paper_runs.py table1 --seeds 5-9"; blank lines and # comments skipped) one after another,
# from WORKTREE, a `git worktree` at a fixed commit, so that edits to the checkout neither stop nor change them. Runs
# go to RESULTS (shared with the other slot and with the checkout that packs them) and resume from their checkpoints
# when the slot is started again. Lines may be appended to QUEUE while it runs.
#
#   git worktree add ../wt HEAD
#   nohup scripts/background_slot.sh ../wt /path/to/results queueA.txt > slotA.log 2>&1 &
#   FEDLIB_RESULTS=/path/to/results python scripts/paper_runs.py SET --pack     # from the checkout, when done
set -u
if [ $# -ne 3 ] || ! [ -d "$1/fedlib" ] || ! [ -f "$3" ]; then
  echo "usage: scripts/background_slot.sh WORKTREE RESULTS QUEUE (WORKTREE holds fedlib/, QUEUE is a file)" >&2
  exit 2
fi
WT="$(cd "$1" && pwd)"
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PY="${FEDLIB_PYTHON:-$HERE/.venv/bin/python}"
export FEDLIB_RESULTS="$2" FEDLIB_DATA="${FEDLIB_DATA:-$HERE/data}" OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH="$WT"
cd "$WT"
while IFS= read -r line; do
  case "$line" in ""|\#*) continue;; esac
  echo "$(date -u +%FT%TZ) start: $line"
  # split as a shell would quote (shlex), but run no shell: the line names a script and its arguments, nothing more
  nice -n 5 "$PY" -c 'import runpy, shlex, sys; sys.argv = shlex.split(sys.argv[1]); runpy.run_path(sys.argv[0], run_name="__main__")' "$line"
  echo "$(date -u +%FT%TZ) end ($?): $line"
done < "$3"
