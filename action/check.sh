#!/usr/bin/env bash
# The gatecal GitHub Action's check step (action.yml). gatecal check appends its markdown
# summary to $GITHUB_STEP_SUMMARY itself; this step writes the decision to $GITHUB_OUTPUT
# and exits with check's own status: 0 pass, 1 fail or incomplete evidence, 2 bad input.
set -uo pipefail

# space-separated inputs, as a workflow writes them; each word one path or glob pattern
# (gatecal expands the patterns itself, so they need no shell glob)
read -r -a current <<<"${GATECAL_CURRENT:?the action needs the input 'current'}"
read -r -a baseline <<<"${GATECAL_BASELINE:?the action needs the input 'baseline'}"
args=(check --current "${current[@]}" --baseline "${baseline[@]}"
      --false-alarm "${GATECAL_FALSE_ALARM:-0.05}" --max-errors "${GATECAL_MAX_ERRORS:-0}")
[ -n "${GATECAL_GATE_FROM:-}" ] && args+=(--gate-from "$GATECAL_GATE_FROM")
[ -n "${GATECAL_GATE:-}" ] && args+=(--gate "$GATECAL_GATE")
[ -n "${GATECAL_POLICY:-}" ] && args+=(--policy "$GATECAL_POLICY")

report="${RUNNER_TEMP:-/tmp}/gatecal-check-$$.json"
gatecal "${args[@]}" --format json --out "$report"
status=$?
if [ -s "$report" ]; then
  python - "$report" >>"${GITHUB_OUTPUT:-/dev/null}" <<'PY'
import json, sys
result = json.load(open(sys.argv[1], encoding="utf-8"))
for key in ("decision", "k_min", "passed", "p_value"):
    value = result[key]
    print(f"{key}={'' if value is None else value}")
PY
  rm -f "$report"
else
  echo "decision=error" >>"${GITHUB_OUTPUT:-/dev/null}"
fi
exit "$status"
