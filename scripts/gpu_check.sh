#!/usr/bin/env bash
# The GPU issue's checks on a bare GPU machine that cannot download anything:
#
#   scripts/gpu_check.sh DEPS OUT [PART ...]      PART: env tests bench pfllib paper (default: all, in that order)
#
# DEPS (git-ignored, prepared on a machine with a network by `python scripts/gpu_deps.py DEPS`):
#   DEPS/wheels/   wheels of fedlib's pure-Python dependencies the GPU machine's Python lacks
#   DEPS/data/     fedlib's data folder (MNIST, FashionMNIST; compressed, to stay under a call's 64 MiB)
#   DEPS/PFLlib/   a checkout of TsingZ0/PFLlib, for the `pfllib` part (optional; its main.py needs cvxpy)
# OUT: every result, log and timing goes here (OUT/results is the results folder, OUT/*.log the logs).
# It uses the torch the machine already has (pip install --no-deps -e .), and FEDLIB_DEVICE=cuda for everything;
# FEDLIB_DEVICE=cpu runs the same path on a CPU (what tests/test_gpu_check.py does with the `env` part).
# Each part fits within 10 minutes; `paper` resumes through the runs' checkpoints when called again on a warm machine.
set -euo pipefail
usage() { echo "usage: $0 DEPS OUT [env|tests|bench|pfllib|paper ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
DEPS="$1"; OUT="$2"; shift 2
PARTS=("$@"); [ ${#PARTS[@]} -gt 0 ] || PARTS=(env tests bench pfllib paper)
for part in "${PARTS[@]}"; do
  case "$part" in env|tests|bench|pfllib|paper) ;; *) echo "unknown part '$part'" >&2; usage ;; esac
done
[ -d "$DEPS" ] || { echo "DEPS folder '$DEPS' does not exist (it holds wheels/, data/ and PFLlib/)" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"; DEPS="$(cd "$DEPS" && pwd)"
PY="${PYTHON:-python3}"
export FEDLIB_DEVICE="${FEDLIB_DEVICE:-cuda}" FEDLIB_DATA="$DEPS/data" FEDLIB_RESULTS="$OUT/results"
export FEDLIB_CHECKPOINT_SECONDS="${FEDLIB_CHECKPOINT_SECONDS:-120}"
cd "$ROOT"

for part in "${PARTS[@]}"; do
  echo ">> $part ($(date -u +%H:%M:%S))"
  case "$part" in
    env)
      "$PY" -m pip install -q --no-deps --no-build-isolation -e . > "$OUT/env.log" 2>&1  # offline: the machine's setuptools
      missing=$("$PY" - <<'EOF'
import importlib
names = {"numpy": "numpy", "scipy": "scipy", "matplotlib": "matplotlib", "seaborn": "seaborn", "tqdm": "tqdm",
         "papermill": "papermill", "jupytext": "jupytext", "nbval": "nbval", "pytest": "pytest",
         "ipykernel": "ipykernel", "pingouin": "pingouin", "dp_accounting": "dp-accounting"}
print(" ".join(pkg for mod, pkg in names.items() if importlib.util.find_spec(mod) is None))
EOF
)
      if [ -n "$missing" ]; then  # a DEPS for paper runs alone may carry no wheels: say what is missing, go on
        "$PY" -m pip install -q --no-index --find-links "$DEPS/wheels" $missing >> "$OUT/env.log" 2>&1 \
          || echo "not installed (no wheels for them in $DEPS/wheels): $missing" | tee -a "$OUT/env.log"
      fi
      "$PY" -c "import torch, fedlib.engine as e; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'device', e.resolve_device('auto'), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')" \
        | tee -a "$OUT/env.log"
      (nvidia-smi || true) > "$OUT/nvidia-smi.txt" 2>&1
      ;;
    tests)  # the fast lane, on every core where pytest-xdist is there; interrupted (and summarised) at 9 minutes
      workers=(); "$PY" -c "import xdist" 2>/dev/null && workers=(-n "$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))" --dist loadfile)
      timeout -s INT 540 "$PY" -m pytest tests -q -m "not slow" -p no:cacheprovider -rfE --tb=line "${workers[@]}" \
        > "$OUT/tests.log" 2>&1 || true
      tail -3 "$OUT/tests.log"
      ;;
    bench)
      "$PY" benchmarks/bench_round.py --device "$FEDLIB_DEVICE" > "$OUT/bench_round.log" 2>&1
      tail -5 "$OUT/bench_round.log"
      timeout 360 "$PY" benchmarks/bench_gpu_rounds.py --device "$FEDLIB_DEVICE" --rounds 3 \
        > "$OUT/bench_gpu_rounds.log" 2>&1 || true
      tail -8 "$OUT/bench_gpu_rounds.log"
      ;;
    pfllib)
      if [ -d "$DEPS/PFLlib/system" ]; then
        "$PY" benchmarks/bench_pfllib.py "$DEPS/PFLlib" --device "$FEDLIB_DEVICE" > "$OUT/bench_pfllib.log" 2>&1 || true
        tail -3 "$OUT/bench_pfllib.log"
      else
        echo "no PFLlib checkout in $DEPS/PFLlib: part skipped" | tee "$OUT/bench_pfllib.log"
      fi
      ;;
    paper)  # $PAPER_SETS (default: the paper-scale issue's queue, in its order: FedCR's Table 2 n2 and Table 9, FedLog's
      # Table 1 and Fig. 3 left on FashionMNIST, then FedRD's Table I; a set already shipped costs one --list), $PAPER_JOBS
      # processes at a time (default 4: a round of these small models is launch-bound, so processes share the GPU),
      # each set sharded over them, all within 9 minutes. The results folder (default build/gpu_results) stays on a
      # warm machine, so the next call resumes through the runs' checkpoints. Every set is then packed into the tree's
      # archive/ (merged with the runs already there) and its archive file copied to OUT; here, merge it with
      # `scripts/paper_runs.py SET --merge FILE`.
      sets=(${PAPER_SETS:-fedcr_table2_n2 fedcr_table9 table1_fashion_mnist fig3_left_fashion_mnist fedrd_table1})
      jobs="${PAPER_JOBS:-4}"
      [[ "$jobs" =~ ^[1-9][0-9]?$ ]] || { echo "PAPER_JOBS=$jobs: a number of processes, 1 to 99" >&2; exit 2; }
      export FEDLIB_RESULTS="${GPU_RESULTS:-$ROOT/build/gpu_results}"
      for set in "${sets[@]}"; do "$PY" scripts/paper_runs.py "$set" --list > /dev/null || exit 2; done
      threads=$(( $(nproc) / jobs > 0 ? $(nproc) / jobs : 1 ))
      deadline=$(( $(date +%s) + ${PAPER_SECONDS:-540} ))
      for set in "${sets[@]}"; do
        left=$(( deadline - $(date +%s) )); [ "$left" -gt 30 ] || break
        pids=()
        for ((i = 0; i < jobs; i++)); do
          timeout "$left" env OMP_NUM_THREADS="$threads" "$PY" scripts/paper_runs.py "$set" --shard "$i/$jobs" \
            >> "$OUT/paper_runs.log" 2>&1 & pids+=($!)
        done
        for pid in "${pids[@]}"; do wait "$pid" || true; done
      done
      for set in "${sets[@]}"; do
        "$PY" scripts/paper_runs.py "$set" --pack >> "$OUT/paper_runs.log" 2>&1
        "$PY" -c "import sys, shutil; from fedlib import archive; from fedlib.papers import RUN_SETS
shutil.copy(archive.folder() / RUN_SETS[sys.argv[1]].archive_file, sys.argv[2])" "$set" "$OUT/" 2>/dev/null || true
      done
      tail -5 "$OUT/paper_runs.log"
      ;;
  esac
done
echo ">> done: results, logs and timings in $OUT"
