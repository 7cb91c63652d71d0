#!/bin/bash
# Issue 10's GPU evidence in one command, on a CUDA machine with torch and torchvision:
#   bash tests/gpu/guard_evidence.sh [OUTDIR]
# tests/gpu (guard, plugin, trace, verifier), `trace` of a Faster R-CNN training run, and verify over
# torchvision (detection, ops, transforms, ...) with and without a planted device-side assert.
# libcst/flake8 may come as wheels in $WHL (default .whl/); see docs/verify.md.
set -u
OUTDIR=${1:-${OUT:-/tmp/tsl-guard}}
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1
WHL=${WHL:-.whl}
export PYTHONPATH=$PWD
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
LOG=$OUTDIR/run.log
TSL="python3 -m torchsync_lint"
python3 -c "import torch, torchvision, sys; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'py', sys.version.split()[0], torch.cuda.get_device_name(0))" 2>&1 | tee "$LOG"
echo "=== tests/gpu" | tee -a "$LOG"
TSL_GUARD_EVIDENCE=$OUTDIR/guard_truth.json timeout ${GPU_TESTS_S:-240} python3 -m pytest -q -p no:cacheprovider ${GPU_TESTS:-tests/gpu} 2>&1 | tail -40 | tee -a "$LOG"
echo "=== trace: Faster R-CNN, 100 steps" | tee -a "$LOG"
t0=$(date +%s%N)
timeout ${TRACE_S:-240} $TSL trace --steps 102 --warmup 2 --format json -- python3 examples/trace_fasterrcnn.py --steps 200 \
  > "$OUTDIR/trace.json" 2>> "$LOG"
echo "trace exit $? wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$LOG"
$TSL trace --from-json "$OUTDIR/trace.json" > "$OUTDIR/trace.txt" 2>> "$LOG"
head -30 "$OUTDIR/trace.txt" | cut -c1-220 | tee -a "$LOG"
# a copy of the installed torchvision, out of the .venv/site-packages folders (excluded from linting)
rm -rf /tmp/tv && mkdir -p /tmp/tv && cp -r "$(python3 -c "import torchvision, os; print(os.path.dirname(torchvision.__file__))")" /tmp/tv/
T=/tmp/tv/torchvision
PATHS="$T/models/detection $T/ops $T/transforms $T/utils.py $T/models/optical_flow $T/models/video $T/models/segmentation"
$TSL --isolated $PATHS 2>&1 | tail -1 | tee -a "$LOG"
mkdir -p /opt/a_planted && cp tests/gpu/planted_assert.py /opt/a_planted/  # sorts first: every finding runs after it
walls=()
for run in clean planted; do
  extra=""; [ $run = planted ] && extra=/opt/a_planted/planted_assert.py
  echo "=== verify ($run)" | tee -a "$LOG"
  t0=$(date +%s%N)
  timeout ${VERIFY_S:-240} $TSL --isolated --verify --verify-timeout 30 --format json $extra $PATHS \
    > "$OUTDIR/verify_$run.json" 2>> "$OUTDIR/verify.err"
  echo "verify $run exit $?" | tee -a "$LOG"
  walls+=("$(python3 -c "print(($(date +%s%N) - $t0) / 1e9)")")
done
python3 tests/gpu/verify_compare.py "$OUTDIR/verify_clean.json" "$OUTDIR/verify_planted.json" "${walls[@]}" 2>&1 \
  | tee "$OUTDIR/verify_summary.txt" | tee -a "$LOG" | cut -c1-300
