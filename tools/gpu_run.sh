#!/usr/bin/env bash
# Run graphlab's GPU work on this machine: record what the course bundles, run the GPU tests and
# re-execute the notebooks, so that recordings and stored outputs come from a real GPU.
#
# Usage, from the repository root of a checkout on a machine with an NVIDIA GPU, with graphlab
# and its test extras importable (pip install -e ".[dev]"):
#
#   tools/gpu_run.sh [--out DIR] STEP...
#
# Steps:
#   traces          small real traces for the tests (tests/traces/)
#   recordings      graphlab record: the timing experiments the course shows on CPU machines
#   compiled        lesson 10's torch.compile recording (reduce-overhead replays, kept outputs)
#   fidelity        the emulator's reference outcomes (tests/fidelity/h200_outcomes.json)
#   cudatests       the tests marked `cuda`
#   notebooks       re-execute the lessons in place (NOTEBOOKS="a.ipynb b.ipynb" for some;
#                   NOTEBOOKS="notebooks/zh_CN/*.ipynb" for the Chinese ones, run in Chinese)
#   nbval           nbval over every lesson against its stored outputs (NBVAL_WORKERS=N runs N
#                   lessons at once with pytest-xdist: only for pass/fail, never for timings)
#   nbval16         nbval with every kernel capped at 16 GB, as on a smaller card
#   peaks           every lesson's run time and GPU memory peak (peaks.json: the gpu section
#                   to copy into graphlab/course/; give it STEP_TIMEOUT=1800), and each lesson
#                   as it ran, with its outputs (executed/)
#   updatecosts     lesson 12's recording of update against recapture costs
#   memory, memoryfid, memory16, failedcapture   the memory benchmarks (JSON results)
#   profiledlaunch  how much the profiler inflates launch calls (JSON results)
#
# Each step has a time limit (STEP_TIMEOUT seconds, 300 by default) and its own log; everything a
# step produced is packed into DIR/results.tgz (DIR defaults to gpu-results/), so one failing step
# never hides the results of the others. Copy what you want to keep into the repository by hand:
# recordings into graphlab/timing/recorded/, outcomes into tests/fidelity/.
set -u
out=gpu-results
if [ "${1:-}" = "--out" ]; then out=$2; shift 2; fi
mkdir -p "$out"
stage=$(mktemp -d)
export PYTHONUNBUFFERED=1
run_step() {  # name, command...
  local name=$1; shift
  echo "=== $name: $*"
  local t0=$SECONDS
  timeout "${STEP_TIMEOUT:-300}" "$@" >"$stage/$name.log" 2>&1
  local rc=$?
  echo "=== $name: rc=$rc in $((SECONDS - t0)) s"
  tail -n 25 "$stage/$name.log"
}
card16() {  # an IPython start-up file that caps each kernel at 16 GB of this GPU
  mkdir -p "$stage/ipython16/profile_default/startup"
  printf '%s\n' 'import torch' 'share = 16e9 / torch.cuda.mem_get_info()[1]' \
    'torch.cuda.set_per_process_memory_fraction(share)' \
    >"$stage/ipython16/profile_default/startup/00-card16.py"
  echo "$stage/ipython16"
}
for step in "$@"; do
  case $step in
    traces) run_step traces python3 tests/traces/make_traces.py "$stage/traces" ;;
    recordings) run_step recordings python3 -m graphlab record --out "$stage/recordings" ;;
    compiled) run_step compiled python3 -c "from graphlab.timing.experiments import \
      record_compiled; print(record_compiled('$stage/compiled'))" ;;
    updatecosts) run_step updatecosts python3 -c "from graphlab.timing.experiments.graph_update \
      import record_update_costs; print(record_update_costs('$stage/graph_update'))" ;;
    fidelity) run_step fidelity python3 tests/fidelity/record_outcomes.py "$stage/h200_outcomes.json" ;;
    # A GPU machine may lack the Jupyter server and hub packages: their test modules hold no
    # cuda-marked test, so a collection error there must not stop the GPU tests.
    # -n 0: one GPU test at a time, so that no other test shares the GPU while one times it.
    cudatests) run_step cudatests python3 -m pytest -m cuda -p no:cacheprovider -q -rs -n 0 \
      --continue-on-collection-errors tests ;;
    notebooks) run_step notebooks python3 tools/execute_notebooks.py ${NOTEBOOKS:-}
      mkdir -p "$stage/notebooks/zh_CN" && cp notebooks/*.ipynb "$stage/notebooks/"
      cp notebooks/zh_CN/*.ipynb "$stage/notebooks/zh_CN/" ;;
    nbval) run_step nbval python3 -m pytest -p no:cacheprovider -q \
      -n "${NBVAL_WORKERS:-0}" notebooks ;;
    peaks) cp graphlab/workshop/peaks.json "$stage/peaks.json"
      run_step peaks python3 tools/measure_lessons.py --out "$stage/peaks.json" \
        --executed "$stage/executed" ;;
    nbval16) IPYTHONDIR=$(card16) run_step nbval16 python3 -m pytest -p no:cacheprovider -q -n 0 \
      notebooks ;;
    memory) run_step memory python3 benchmarks/memory_rounds.py --json "$stage/memory_rounds.json" ;;
    memoryfid) run_step memoryfid python3 benchmarks/memory_rounds.py --only fidelity \
      --json "$stage/memory_rounds_fidelity.json" ;;
    memory16) run_step memory16 python3 benchmarks/memory_rounds.py --full --rounds 3 \
      --card-gb 16 --json "$stage/memory_rounds_16gb.json" ;;
    failedcapture) run_step failedcapture python3 benchmarks/failed_capture_memory.py \
      --json "$stage/failed_capture_memory.json" ;;
    profiledlaunch) run_step profiledlaunch python3 benchmarks/profiled_launch.py \
      --json "$stage/profiled_launch.json" ;;
    *) echo "unknown step $step (see the list at the top of $0)" ;;
  esac
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$stage/gpu.txt" 2>&1
tar czf "$out/results.tgz" -C "$stage" --exclude ipython16 .
cp "$stage"/*.log "$out/" 2>/dev/null
ls -la "$out"
