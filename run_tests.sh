#!/usr/bin/env bash
# The test command: unit tests, then every notebook executed by nbval in the smoke profile.
set -euo pipefail
cd "$(dirname "$0")"
WORKBOOK_EXTRAS=cluster,test,book source scripts/env.sh  # the test command needs Ray's backend, the test tools and the book's
"$PY" -m fedlib fetch-data
"$PY" scripts/check_notebook_pairs.py notebooks  # both files of a pair edited: stop before the sync drops one
"$PY" -m jupytext --sync notebooks/[0-9]*.py >/dev/null
# smoke-profile notebooks write their figures and caches under build/, never over the real figures/
FEDLIB_PROFILE=smoke FEDLIB_FIGURES="$ROOT/build/smoke/figures" FEDLIB_RESULTS="$ROOT/build/smoke/results" \
  "$PY" -m pytest tests notebooks --nbval-lax -p no:cacheprovider "$@"
