#!/usr/bin/env bash
# The test command: unit tests, then every notebook executed by nbval in the smoke profile.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/env.sh
"$PY" -m fedlib fetch-data
"$PY" -m jupytext --sync notebooks/[0-9]*.py >/dev/null
FEDLIB_PROFILE=smoke "$PY" -m pytest tests notebooks --nbval-lax -p no:cacheprovider "$@"
