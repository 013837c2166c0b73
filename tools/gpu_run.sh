#!/usr/bin/env bash
# The lead's one-call GPU run (device tool, NVIDIA H200, no network): records what the course bundles
# and runs the GPU tests. Usage on the GPU machine, from the repository root, after installing the
# carried wheels (see ../shared/gpu/wheels.sh):  bash tools/gpu_run.sh STEP...
# Steps: traces recordings fidelity cudatests notebooks (NOTEBOOKS=paths for some) nbval nbval16
# memory memoryfid memory16 failedcapture; the ...16 steps cap GPU memory at 16 GB, as on a
# smaller card.
# Everything lands in $OUT/results.tgz plus one log per step, so a failing step never hides the
# others' results.
set -u
stage=$(mktemp -d)
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/site:$PWD" PATH="/tmp/site/bin:$PATH"
run_step() {  # name, command...
  local name=$1; shift
  echo "=== $name: $*"
  local t0=$SECONDS
  timeout "${STEP_TIMEOUT:-300}" "$@" >"$stage/$name.log" 2>&1
  local rc=$?
  echo "=== $name: rc=$rc in $((SECONDS - t0)) s"
  tail -n 25 "$stage/$name.log"
}
for step in "$@"; do
  case $step in
    traces) run_step traces python3 tests/traces/make_traces.py "$stage/traces" ;;
    recordings) run_step recordings python3 -m graphlab record --out "$stage/recordings" ;;
    fidelity) run_step fidelity python3 tests/fidelity/record_outcomes.py "$stage/h200_outcomes.json" ;;
    cudatests) run_step cudatests python3 -m pytest -m cuda -p no:cacheprovider -q -rs --continue-on-collection-errors tests ;;
    notebooks) run_step notebooks python3 tools/execute_notebooks.py ${NOTEBOOKS:-}
      mkdir -p "$stage/notebooks" && cp notebooks/*.ipynb "$stage/notebooks/" ;;
    nbval) run_step nbval python3 -m pytest -p no:cacheprovider -q --nbval-lax notebooks ;;
    nbval16)  # every notebook in a kernel that may use only 16 GB, as on a 16 GB card
      mkdir -p /tmp/ipython16/profile_default/startup
      printf '%s\n' 'import torch' 'share = 16e9 / torch.cuda.mem_get_info()[1]' \
        'torch.cuda.set_per_process_memory_fraction(share)' \
        'open("/tmp/ipython16/capped", "a").write(f"kernel capped at {share:.3f} of the GPU\n")' \
        >/tmp/ipython16/profile_default/startup/00-card16.py
      IPYTHONDIR=/tmp/ipython16 run_step nbval16 python3 -m pytest -p no:cacheprovider -q \
        --nbval-lax notebooks
      sort /tmp/ipython16/capped | uniq -c ;;
    memory16) run_step memory16 python3 benchmarks/memory_rounds.py --full --rounds 3 \
      --card-gb 16 --json "$stage/memory_rounds_16gb.json" ;;
    memory) run_step memory python3 benchmarks/memory_rounds.py --json "$stage/memory_rounds.json" ;;
    memoryfid) run_step memoryfid python3 benchmarks/memory_rounds.py --only fidelity \
      --json "$stage/memory_rounds_fidelity.json" ;;
    failedcapture) run_step failedcapture python3 benchmarks/failed_capture_memory.py \
      --json "$stage/failed_capture_memory.json" ;;
    *) echo "unknown step $step" ;;
  esac
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$stage/gpu.txt" 2>&1
tar czf "$OUT/results.tgz" -C "$stage" .
cp "$stage"/*.log "$OUT/" 2>/dev/null
ls -la "$OUT"
