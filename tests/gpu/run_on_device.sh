#!/bin/bash
# The GPU evidence in one command, for a CUDA machine with torch (and torchvision) installed:
#   bash tests/gpu/run_on_device.sh [OUTDIR]
# Runs tests/gpu, verifies the seed cases in snippet and entry mode, and verifies torchvision's
# detection models in snippet mode. libcst/flake8 may come as wheels in .whl/ (see docs/verify.md).
set -u
OUTDIR=${1:-${OUT:-/tmp/torchsync-gpu}}
mkdir -p "$OUTDIR"
export PYTHONUNBUFFERED=1
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
TSL="python3 -m torchsync_lint --isolated"
python3 -c "import torch, sys; print('torch', torch.__version__, 'py', sys.version.split()[0], torch.cuda.get_device_name(0))" | tee "$OUTDIR/env.txt"
echo "=== tests/gpu"
timeout 240 python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -15 | tee "$OUTDIR/pytest_gpu.txt"
echo "=== seed cases, snippet mode (+ fix check)"
timeout 200 $TSL --verify --verify-fixes examples/seed_cases/seed000_loss_before.py \
  examples/seed_cases/seed001_masked_before.py 2>&1 | tee "$OUTDIR/seed_snippet.txt" | cut -c1-300
echo "=== seed cases, entry mode (before and after)"
timeout 200 $TSL --verify-entry examples.seed_entries:loss000_before --verify-entry examples.seed_entries:loss000_after \
  --verify-entry examples.seed_entries:loss001_before --verify-entry examples.seed_entries:loss001_after \
  examples/seed_cases 2>&1 | tee "$OUTDIR/seed_entries.txt" | tail -12 | cut -c1-300
echo "=== seed losses, step time before/after"
timeout 120 python3 examples/seed_step_time.py 2>&1 | tee "$OUTDIR/step_time.txt"
if python3 -c "import torchvision" 2>/dev/null; then
  echo "=== torchvision detection, snippet mode"
  TV=$(python3 -c "import torchvision, os; print(os.path.dirname(torchvision.__file__))")/models/detection
  timeout 280 $TSL --verify --verify-timeout 40 --format json "$TV" > "$OUTDIR/tv_detection.json" 2> "$OUTDIR/tv_detection.err"
  python3 - "$OUTDIR/tv_detection.json" <<'PY'
import collections, json, sys
fs = json.load(open(sys.argv[1]))
c = collections.Counter(f["verify"]["status"] for f in fs)
definite = c["confirmed"] + c["refuted"]
print(f"torchvision detection: {len(fs)} findings, {dict(c)}, definite {definite}/{len(fs)}")
PY
fi
