# Sourced by run_all.sh and run_tests.sh: sets PY to a Python that has fedlib and its dependencies,
# creating .venv (pip install -e .) if none is there yet. FEDLIB_PYTHON=/path/to/python uses that one instead.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# What to install: the runtime dependencies (run_all.sh), or with the extras a caller names before sourcing this file
# (run_all.sh: WORKBOOK_EXTRAS=book, the book's tools; run_tests.sh: cluster,test,book, with Ray and the test tools).
EXTRAS="${WORKBOOK_EXTRAS:-}"
MODULES="fedlib, torch, torchvision, papermill, nbconvert, jupytext, scipy, seaborn, tqdm, dp_accounting, tabulate"
case ",$EXTRAS," in *,test,*) MODULES="$MODULES, nbval, pingouin, ruff, xdist";; esac
case ",$EXTRAS," in *,cluster,*) MODULES="$MODULES, ray, grpc";; esac  # grpc: ray's client (ray:// addresses)
case ",$EXTRAS," in *,book,*) MODULES="$MODULES, jupyter_book";; esac
has_all() { "$1" -c "import $MODULES" 2>/dev/null; }
from_here() { [ "$(cd "$ROOT/notebooks" && "$1" -c 'import fedlib, os; print(os.path.dirname(os.path.dirname(os.path.realpath(fedlib.__file__))))' 2>/dev/null)" = "$(cd "$ROOT" && pwd -P)" ]; }
active="${VIRTUAL_ENV:-${CONDA_PREFIX:-}}"
if [ -n "${FEDLIB_PYTHON:-}" ]; then
  PY="$FEDLIB_PYTHON"
  if [ "$("$PY" -c 'import sys; print(sys.version_info >= (3, 10))' 2>/dev/null)" != "True" ]; then
    echo "FEDLIB_PYTHON=$FEDLIB_PYTHON is not a Python 3.10 or newer: set it to such an interpreter's path" \
         "(e.g. $(command -v python3 || echo /usr/bin/python3)) or unset it to use .venv" >&2
    exit 2
  fi
elif [ -n "$active" ] && [ -x "$active/bin/python" ] && from_here "$active/bin/python"; then
  PY="$active/bin/python"  # the active environment, which has this checkout's fedlib
  echo ">> using the active environment $active"
else
  PY="$ROOT/.venv/bin/python"
  if ! [ -x "$PY" ]; then
    echo ">> creating the environment in .venv (torch is large: a few minutes on a fresh machine)"
    python3 -m venv "$ROOT/.venv" || { echo "python3 -m venv failed: install python3-venv, or set FEDLIB_PYTHON"; exit 1; }
  fi
fi
if [ -n "${FEDLIB_PYTHON:-}" ] && ! (cd "$ROOT" && has_all "$PY"); then  # never pip into an interpreter one chose
  echo "FEDLIB_PYTHON=$FEDLIB_PYTHON lacks fedlib or its dependencies (${MODULES}); nothing was installed into it." \
       "Unset FEDLIB_PYTHON to let this script make .venv, or make one yourself:" \
       "python3 -m venv .venv && .venv/bin/python -m pip install -e '.${EXTRAS:+[$EXTRAS]}'" >&2
  exit 2
fi
if ! (cd "$ROOT" && has_all "$PY"); then
  echo ">> installing fedlib${EXTRAS:+ with [$EXTRAS]} and its dependencies into $("$PY" -c 'import sys; print(sys.prefix)')"
  "$PY" -m pip install -q --upgrade pip
  "$PY" -m pip install --progress-bar off -e "$ROOT${EXTRAS:+[$EXTRAS]}" | grep -E "^(Collecting|Successfully)" || true
  has_all "$PY" || { echo "the install did not complete: $PY -m pip install -e '$ROOT${EXTRAS:+[$EXTRAS]}' says why" >&2; exit 1; }
fi
if [ "$PY" = "$ROOT/.venv/bin/python" ]; then  # a moved or copied checkout's activate scripts name their folder
  # shellcheck source=scripts/venv_moved.sh
  source "$ROOT/scripts/venv_moved.sh"
  repair_venv "$ROOT/.venv"
fi
export PY ROOT
# every entry point must run this checkout's fedlib: papermill starts kernels in notebooks/, where an interpreter
# whose editable fedlib is another clone would import that one (and write that clone's figures/)
owner_of() { (cd "$ROOT/notebooks" && "$PY" -c 'import fedlib, os; print(os.path.dirname(os.path.dirname(os.path.realpath(fedlib.__file__))))' 2>/dev/null) || true; }
here="$(cd "$ROOT" && pwd -P)"
owner="$(owner_of)"
if [ "$owner" != "$here" ] && [ "$PY" = "$ROOT/.venv/bin/python" ]; then
  # this checkout's own .venv, whose editable install names another folder: the clone was moved or copied
  echo ">> .venv's fedlib points to ${owner:-a folder that is gone} (was this clone moved or copied?): reinstalling this checkout into it"
  "$PY" -m pip install -q --no-deps --no-build-isolation -e "$ROOT" >/dev/null 2>&1 || "$PY" -m pip install -q --no-deps -e "$ROOT" >/dev/null || true
  owner="$(owner_of)"
fi
if [ "$owner" != "$here" ]; then
  if [ -z "$owner" ]; then
    echo "the interpreter $PY cannot import fedlib outside this checkout: install it ($PY -m pip install -e $ROOT)" \
         "or unset FEDLIB_PYTHON" >&2
  else
    echo "the interpreter $PY imports fedlib from $owner, not from this checkout ($ROOT): install this one" \
         "($PY -m pip install -e $ROOT) or unset FEDLIB_PYTHON" >&2
  fi
  exit 2
fi
