#!/usr/bin/env bash
# The main job: set up the environment if missing, fetch the datasets, execute every notebook headlessly
# (papermill, profile $FEDLIB_PROFILE, default quick). Executed notebooks go to build/notebooks/. The quick profile
# writes build/quick/figures/ and changes no tracked file; `--commit` (a maintainer's) writes the committed figures/
# and keeps the run's outputs in the committed notebooks; the paper profile always does (it redraws from archive/).
# ./run_all.sh 02 05 runs some notebooks (the book is rebuilt after a whole run, or with --book; ./run_all.sh --book
# builds it alone). Notebook 02 also reads FEDLIB_DATASETS (e.g. mnist), FEDLIB_SEEDS and FEDLIB_PARTS (table1,tableA1).
# A notebook's runs go to one single-threaded worker process per core (FEDLIB_SWEEP_BACKEND=local: in the kernel);
# FEDLIB_SWEEP_BACKEND=ray (and FEDLIB_RAY_ADDRESS=auto or ray://host:10001 for an existing cluster) hands every
# notebook's sweep to Ray; the notebooks then read the results from the shared cache ($FEDLIB_RESULTS).
set -euo pipefail
# relative folders name places under where the command was run, for the notebooks (which run in notebooks/) too
for var in FEDLIB_FIGURES FEDLIB_RESULTS FEDLIB_DATA; do
  value="${!var:-}"
  if [ -n "$value" ] && [ "${value#/}" = "$value" ]; then export "$var=$PWD/$value"; fi
done
cd "$(dirname "$0")"
# The arguments and the profile are checked first, before any install or data load: ./run_all.sh 02 05 runs only
# those notebooks (1 means 01); no argument runs them all.
PROFILE="${FEDLIB_PROFILE:-quick}"
case "$PROFILE" in
  smoke|quick|paper) ;;
  *) echo "FEDLIB_PROFILE must be smoke, quick or paper, got '$PROFILE'" >&2; exit 2 ;;
esac
numbers=()
BOOK=0
COMMIT="${FEDLIB_WRITE_COMMITTED:-0}"
for arg in "$@"; do  # every number given must name a notebook
  if [ "$arg" = "--book" ]; then BOOK=1; continue; fi
  if [ "$arg" = "--commit" ]; then COMMIT=1; continue; fi
  if [[ "$arg" == -* ]]; then
    echo "unknown option $arg: ./run_all.sh [--book] [--commit] [notebook numbers], e.g. ./run_all.sh 02 05, or ./run_all.sh --book for the book alone" >&2
    exit 2
  fi
  if [[ "$arg" =~ ^[0-9]{1,2}$ ]]; then arg="$(printf '%02d' "$((10#$arg))")"; fi
  if ! ls notebooks/"$arg"_*.py >/dev/null 2>&1; then
    echo "no notebook $arg: give notebook numbers, e.g. ./run_all.sh 02 05 or 2 5 (there are $(ls notebooks/[0-9]*.py | sed 's|notebooks/||; s|_.*||' | tr '\n' ' '))" >&2
    exit 2
  fi
  numbers+=("$arg")
done
WORKBOOK_EXTRAS="${WORKBOOK_EXTRAS:-book}" source scripts/env.sh  # the runtime and the book's tools (Jupyter Book)
if [ "$BOOK" = 1 ] && [ ${#numbers[@]} -eq 0 ]; then  # ./run_all.sh --book: the book from the notebooks as they are
  "$PY" -m fedlib book
  exit 0
fi
export FEDLIB_WRITE_COMMITTED="$COMMIT"
# One torch thread per process unless you say otherwise: some CPU kernels sum in a thread-count dependent order, so
# the committed figures (and `python -m fedlib check`) are made with one. The sweep's workers use the cores.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" MKL_NUM_THREADS="${MKL_NUM_THREADS:-1}"
# shellcheck source=scripts/tcmalloc.sh
source scripts/tcmalloc.sh  # tcmalloc under the notebooks and their runs where installed: the same bits, faster
preload_tcmalloc
"$PY" -m fedlib fetch-data  # first, every FEDLIB_* variable against its rule: one line naming a bad one, before any
# data is read (`python -m fedlib` checks them before each command)
"$PY" -m fedlib.archive  # a damaged archive file is named here, on the terminal, not only inside a notebook
"$PY" scripts/check_notebook_pairs.py notebooks  # both files of a pair edited: stop before the sync drops one
"$PY" -m jupytext --sync notebooks/[0-9]*.py >/dev/null
mkdir -p build/notebooks figures
selected=()
for nb in notebooks/[0-9]*.ipynb; do
  name="$(basename "$nb")"
  if [ ${#numbers[@]} -eq 0 ] || printf '%s\n' "${numbers[@]}" | grep -qx "${name%%_*}"; then selected+=("$nb"); fi
done
for nb in "${selected[@]}"; do
  name="$(basename "$nb")"
  echo ">> $name (profile $PROFILE)"
  start=$SECONDS
  touch "build/notebooks/$name.incomplete"  # removed once the notebook has run to its end (the book reads it)
  run="build/notebooks/.$$.$name"  # this run's own copy, renamed into place: two runs at once do not share it
  if ! FEDLIB_PROFILE="$PROFILE" "$PY" -m fedlib.notebook_run "$nb" "$run" "$PROFILE"; then  # papermill, IPC
    if [ -f "$run" ]; then mv -f "$run" "build/notebooks/$name"; fi  # the failed run, its error shown, stays to read
    exit 1
  fi
  mv -f "$run" "build/notebooks/$name"
  rm -f "build/notebooks/$name.incomplete"
  # a paper redraw's outputs (or, with --commit, a quick run's) go into the committed notebook, so a clone shows them
  if [ "$PROFILE" = paper ] || { [ "$PROFILE" = quick ] && [ "$COMMIT" = 1 ]; }; then
    "$PY" -m fedlib.notebook_run --keep-outputs "build/notebooks/$name" "$nb"
  fi
  echo "   done in $((SECONDS - start)) s"
done
FEDLIB_PROFILE="$PROFILE" "$PY" -m fedlib claims
if [ ${#numbers[@]} -eq 0 ] || [ "$BOOK" = 1 ]; then  # a whole run, or asked: the book is rebuilt (about 40 s)
  FEDLIB_PROFILE="$PROFILE" "$PY" -m fedlib book  # build/book/index.html: the executed notebooks, this run's claims
else
  echo ">> the book was not rebuilt for some notebooks: ./run_all.sh --book rebuilds it"
fi
echo ">> figures and tables are in $(FEDLIB_PROFILE="$PROFILE" "$PY" -c 'from fedlib import paths; print(paths.portable(str(paths.figures_dir())) + "/")')"
