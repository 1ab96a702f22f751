#!/usr/bin/env bash
# The test command: unit tests, then every notebook executed by nbval in the smoke profile.
set -euo pipefail
cd "$(dirname "$0")"
WORKBOOK_EXTRAS=cluster,test,book source scripts/env.sh  # the test command needs Ray's backend, the test tools and the book's
"$PY" -m fedlib fetch-data
"$PY" scripts/check_notebook_pairs.py notebooks  # both files of a pair edited: stop before the sync drops one
"$PY" -m jupytext --sync notebooks/[0-9]*.py >/dev/null
# One pytest worker per core (pytest-xdist; at most 4), each on one torch thread: the suite is mostly small computations
# that one core runs as fast as two. Each file stays whole on one worker (--dist loadfile): a notebook's cells share
# one kernel. FEDLIB_TEST_WORKERS=1 runs it in this process (a debugger, -x, --pdb).
workers="${FEDLIB_TEST_WORKERS:-$("$PY" -c 'import os; print(min(4, len(os.sched_getaffinity(0))))')}"
parallel=()
if [ "$workers" -gt 1 ]; then
  parallel=(-n "$workers" --dist loadfile)
  export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
fi
# tcmalloc under every test process where it is installed (the same bits; the engine's tests 20% faster)
# shellcheck source=scripts/tcmalloc.sh
source "$ROOT/scripts/tcmalloc.sh"
preload_tcmalloc
if [ -n "$TCMALLOC" ]; then echo ">> the tests preload tcmalloc ($TCMALLOC; LD_PRELOAD= keeps glibc's malloc)"; fi
# smoke-profile notebooks write their figures and caches under build/, never over the real figures/
FEDLIB_PROFILE=smoke FEDLIB_FIGURES="$ROOT/build/smoke/figures" FEDLIB_RESULTS="$ROOT/build/smoke/results" \
  "$PY" -m pytest tests notebooks --nbval-lax -p no:cacheprovider "${parallel[@]}" "$@"
