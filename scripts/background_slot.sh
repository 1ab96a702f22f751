#!/usr/bin/env bash
# One single-threaded background slot for long paper runs: runs the lines of QUEUE (each a Python script and its
# arguments, e.g. "scripts/paper_runs.py table1 --seeds 5-9"; blank lines and # comments skipped) one after another,
# from WORKTREE, a `git worktree` at a fixed commit, so that edits to the checkout neither stop nor change them. Runs
# go to RESULTS (shared with the other slot and with the checkout that packs them) and resume from their checkpoints
# when the slot is started again. Lines may be appended to QUEUE while it runs. Further WORKTREE QUEUE pairs run
# after the first queue is done, each from its own worktree: when one list is done, its slot passes to the next.
# A line "@OTHER_WORKTREE script.py args" runs from that worktree instead (a set declared at a later commit, or a
# fix the running list needs; a path without spaces, a relative one read from the folder the slot was started in).
#
#   git worktree add ../wt HEAD
#   nohup scripts/background_slot.sh ../wt /path/to/results queueA.txt [../wt2 queueB.txt ...] > slotA.log 2>&1 &
#   FEDLIB_RESULTS=/path/to/results python scripts/paper_runs.py SET --pack     # from the checkout, when done
# On a fresh machine, prime RESULTS first: `FEDLIB_RESULTS=/path/to/results python scripts/paper_runs.py SET --list`
# from the checkout copies the runs of SET shipped in its archive/ into RESULTS; a worktree at an older commit has
# not got those packed after it in its own archive/, and would compute them again. A session's machine may not be
# kept: before stopping, `python scripts/carry.py out RESULTS --worktree WT` puts the runs in progress into
# archive/in_progress/ (commit it), and on the next machine `python scripts/carry.py in RESULTS` puts them back.
set -u
usage="usage: scripts/background_slot.sh WORKTREE RESULTS QUEUE [WORKTREE QUEUE ...] (each WORKTREE holds fedlib/, each QUEUE is a file)"
if [ $# -lt 3 ] || [ $(( ($# - 3) % 2 )) -ne 0 ]; then
  echo "$usage" >&2
  exit 2
fi
pairs=("$1" "$3" "${@:4}")
for ((i = 0; i < ${#pairs[@]}; i += 2)); do  # every pair checked before any work starts
  if ! [ -d "${pairs[i]}/fedlib" ] || ! [ -f "${pairs[i + 1]}" ]; then
    echo "$usage; '${pairs[i]}' or '${pairs[i + 1]}' is not" >&2
    exit 2
  fi
  pairs[i]="$(cd "${pairs[i]}" && pwd)"  # absolute: the loop below changes folder
  pairs[i + 1]="$(cd "$(dirname "${pairs[i + 1]}")" && pwd)/$(basename "${pairs[i + 1]}")"
done
START="$(pwd)"
worktree_of() {  # the worktree a queue line names with "@PATH ", else $1; absolute
  case "$2" in
    @*) local w="${2%% *}"; w="${w#@}"; [ -n "$w" ] && (cd "$START" && cd "$w" 2>/dev/null && pwd) ;;
    *) echo "$1" ;;
  esac
}
for ((i = 0; i < ${#pairs[@]}; i += 2)); do  # the lines already queued name worktrees that hold fedlib/
  while IFS= read -r line; do
    case "$line" in @*)
      w="$(worktree_of "${pairs[i]}" "$line")"
      if [ -z "$w" ] || ! [ -d "$w/fedlib" ]; then
        echo "$usage; '${line%% *}' in ${pairs[i + 1]} names no worktree with fedlib/" >&2
        exit 2
      fi;;
    esac
  done < "${pairs[i + 1]}"
done
RESULTS="$(mkdir -p "$2" && cd "$2" && pwd)"  # absolute: the runs start in the worktree
HERE="$(cd "$(dirname "$0")/.." && pwd)"
PY="${FEDLIB_PYTHON:-$HERE/.venv/bin/python}"
export FEDLIB_RESULTS="$RESULTS" FEDLIB_DATA="${FEDLIB_DATA:-$HERE/data}" OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# tcmalloc where it is installed and LD_PRELOAD is not set: the same bits, faster (scripts/tcmalloc.sh)
# shellcheck source=scripts/tcmalloc.sh
source "$(dirname "$0")/tcmalloc.sh"
preload_tcmalloc
if [ -n "$TCMALLOC" ]; then
  echo "$(date -u +%FT%TZ) allocator: tcmalloc ($TCMALLOC; LD_PRELOAD= to keep glibc's)"
fi
for ((i = 0; i < ${#pairs[@]}; i += 2)); do
  while IFS= read -r line; do
    case "$line" in ""|\#*) continue;; esac
    WT="$(worktree_of "${pairs[i]}" "$line")"
    case "$line" in @*) line="${line#* }";; esac
    if [ -z "$WT" ] || ! [ -d "$WT/fedlib" ]; then  # a line appended while the slot ran
      echo "$(date -u +%FT%TZ) skipped (it names no worktree with fedlib/): $line"
      continue
    fi
    echo "$(date -u +%FT%TZ) start: $line  (in $WT)"
    # split as a shell would quote (shlex), but run no shell: the line names a script and its arguments, nothing more
    (cd "$WT" && PYTHONPATH="$WT" nice -n 5 "$PY" -c 'import runpy, shlex, sys; sys.argv = shlex.split(sys.argv[1]); runpy.run_path(sys.argv[0], run_name="__main__")' "$line")
    echo "$(date -u +%FT%TZ) end ($?): $line"
  done < "${pairs[i + 1]}"
done
