# Sourced by run_tests.sh, run_all.sh and scripts/background_slot.sh. preload_tcmalloc exports LD_PRELOAD=tcmalloc
# where it is installed (Debian's libtcmalloc-minimal4; .ci/run installs it) and LD_PRELOAD is not set (LD_PRELOAD=
# keeps glibc's malloc), for every process started after it. tcmalloc keeps freed memory for the next tensor, where
# glibc hands large blocks back to the kernel, which zeroes them again at the next touch. The same bits, less system
# time: a FedRD ladder round 82 -> 65 s, a FedAvg one 38 -> 25 s on one thread (2026-11-27); the engine and algorithm
# tests 30.6 -> 24.8 s, `python -m fedlib check` 5 min 19 s -> 4 min 39 s on an Intel 6-167 (docs/measurements.md).
# Sets TCMALLOC to the library preloaded, '' if none. fedlib's own lookup is provenance.tcmalloc_library (same rule).
preload_tcmalloc() {
  TCMALLOC=""
  if [ -n "${LD_PRELOAD+set}" ]; then
    return 0
  fi
  local found  # no ldconfig on PATH (a user's PATH without /sbin) means none found, under set -euo pipefail too
  found="$({ ldconfig -p 2>/dev/null || true; } | awk '$1 == "libtcmalloc_minimal.so.4" {print $NF; exit}')" || found=""
  if [ -n "$found" ] && [ -e "$found" ]; then
    export LD_PRELOAD="$found"
    TCMALLOC="$found"
  fi
}
