#!/usr/bin/env bash
# The gatecal GitHub Action's install step (action.yml). It finds the python gatecal will
# run on (the one actions/setup-python provided, else the runner's own), refuses one older
# than gatecal's 3.11 with one line saying so, then hands over to step.py, which reads the
# inputs (refusing a bad one before anything is installed) and pip-installs gatecal with
# the extras the inputs need. On bad input: decision=error, one line on stderr and in the
# job summary, exit 2.
set -uo pipefail

output="${GITHUB_OUTPUT:-/dev/null}"

# one line on stderr and in the job summary, decision=error (a one-word value), exit 2
refuse() {
  echo "gatecal: error: $1" >&2
  echo "decision=error" >>"$output"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    # shellcheck disable=SC2016 # the backticks are markdown's fence, not a command
    printf '### gatecal check: ERROR\n\n````text\ngatecal: error: %s\n````\n' "$1" >>"$GITHUB_STEP_SUMMARY"
  fi
  exit 2
}

python="${GATECAL_PYTHON:-}"
if [ -z "$python" ]; then
  python="$(command -v python3 || command -v python || true)"
  [ -n "$python" ] || refuse "input 'python-version' is '' (the runner's python), but the runner has no python3 or python on PATH; set python-version: '3.12'"
fi

# major.minor.micro, by a line any Python (2 or 3) can run
version="$("$python" -c 'import sys; print("%d.%d.%d" % tuple(sys.version_info[:3]))' 2>/dev/null)"
if ! [[ "$version" =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]]; then
  refuse "the python at '$python' does not run (got '$version'); set the input python-version to 3.11 or newer"
fi
major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
if ((major < 3 || (major == 3 && minor < 11))); then
  if [ -n "${GATECAL_PYTHON_VERSION:-}" ]; then
    refuse "input 'python-version' must be 3.11 or newer, as gatecal requires (got '$GATECAL_PYTHON_VERSION', which is Python $version)"
  fi
  refuse "input 'python-version' is '' (the runner's python), but gatecal requires Python 3.11 or newer and the runner's is $version ($python); set python-version: '3.12'"
fi

exec "$python" "$GITHUB_ACTION_PATH/action/step.py" install "$python"
