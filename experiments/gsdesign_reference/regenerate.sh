#!/usr/bin/env bash
# Regenerate tests/fixtures/gsdesign/ by running gsDesign's own R code, offline.
#
#   bash experiments/gsdesign_reference/regenerate.sh [OUT_DIR]
#
# 1. designs.py (gatecal, this checkout) writes the designs and rates to check.
# 2. gsdesign_reference.R sources R/gsUtilities.R and R/gsBinomialExact.R of gsDesign at
#    $GSDESIGN_COMMIT from the git checkout $GSDESIGN_GIT (nothing installed from CRAN) and
#    evaluates them, inside `unshare -n` (a network namespace with only loopback) when that
#    works. Needs R (4.2.2 used, Debian r-base-core) and git.
# Everything is written to a scratch folder first and moved into OUT_DIR only when both
# steps have finished.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${1:-$ROOT/tests/fixtures/gsdesign}
PYTHON=${PYTHON:-python3}
GSDESIGN_GIT=${GSDESIGN_GIT:-/work/.mirror/keaven+gsDesign/repo}
GSDESIGN_COMMIT=${GSDESIGN_COMMIT:-2a5688846651a56f469cdb0997c2adf325c1b7d6}

if unshare -n true 2>/dev/null; then
  NET=(unshare -n)
else
  echo "regenerate.sh: unshare -n unavailable; R runs with the network as it is" >&2
  NET=()
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

(cd "$ROOT" && PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" "$HERE/designs.py" "$WORK")
"${NET[@]}" Rscript "$HERE/gsdesign_reference.R" "$GSDESIGN_GIT" "$GSDESIGN_COMMIT" "$WORK"

mkdir -p "$OUT"
for f in designs.csv thetas.csv sprt_calls.csv gsbinomialexact.csv binomialsprt.csv versions.txt; do
  mv "$WORK/$f" "$OUT/$f"
done
echo "wrote $OUT"
