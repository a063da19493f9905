"""The gatecal GitHub Action's steps after the python check (action.yml, install.sh).

``step.py install PYTHON``: read the inputs, pip-install gatecal with the extras they need,
and set the output ``python``. ``step.py check``: run ``gatecal check`` on the inputs and
set the outputs ``decision``, ``k_min`` (empty when the gate is not a count), ``passed``,
``p_value``, ``new_failures`` and ``systematic`` (case ids, one a line, each escaped as
gatecal writes a name in text); gatecal appends its
markdown summary to ``$GITHUB_STEP_SUMMARY`` itself; with ``store`` the baseline comes
from the run history (and ``record: 'true'`` appends the current run after deciding).
``step.py nightly``: ``gatecal record`` the ``runs`` into ``store`` as known-good, then
``gatecal recommend --store`` writes the gate to ``gate-file``; outputs ``decision``
(``recorded``) and ``gate-file``. On bad input both exit with 2, write
one line on stderr naming the input, the rule and the value, set ``decision=error`` and
put that line in the job summary too, so the run's page says why.

The list inputs (``current``, ``baseline``) are words separated by spaces or newlines, so a
YAML block list works; a word in quotes may hold spaces; backslashes are kept as they are
(Windows paths). Each word is a path, a folder or a glob pattern that gatecal expands
itself, never an option: a word starting with ``-`` is refused, and each path reaches
gatecal as ``--current=WORD``, so no word can be read as an option of its own.

Standard library only until gatecal is installed (``install`` runs before it is).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
import uuid
from pathlib import Path

#: The list inputs and their environment variables (action.yml maps each input to one).
LISTS = {"current": "GATECAL_CURRENT", "baseline": "GATECAL_BASELINE", "runs": "GATECAL_RUNS"}
#: What the action does: decide a CI run, or record the nightly runs and recommend.
MODES = ("check", "nightly")
#: The single-value inputs of the check step and the option each becomes.
VALUES = {
    "gate-from": ("GATECAL_GATE_FROM", "--gate-from"),
    "gate": ("GATECAL_GATE", "--gate"),
    "false-alarm": ("GATECAL_FALSE_ALARM", "--false-alarm"),
    "policy": ("GATECAL_POLICY", "--policy"),
    "max-errors": ("GATECAL_MAX_ERRORS", "--max-errors"),
    "store": ("GATECAL_STORE", "--store"),
    "judge": ("GATECAL_JUDGE", "--judge"),
    "branch": ("GATECAL_BRANCH", "--branch"),
}
#: The file suffixes whose readers need one of gatecal's extras.
SUFFIX_EXTRAS = {".eval": "frameworks", ".parquet": "parquet"}
#: The outputs the check step sets from gatecal check's JSON.
OUTPUTS = ("decision", "k_min", "passed", "p_value")
#: Outputs that list cases, one a line: check's JSON keys of the same names.
CASE_OUTPUTS = ("new_failures", "systematic")


class InputError(Exception):
    """A bad input: the message names the input, the rule and the value."""


def words(name: str, text: str) -> list[str]:
    """The paths and patterns of list input `name`: words split on spaces and newlines,
    quotes ('...' or "...") keeping spaces inside a word, backslashes kept as they are."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.escape = ""  # a Windows path's backslashes are the path's own
    lexer.commenters = ""  # '#' may be part of a file name
    try:
        found = list(lexer)
    except ValueError:
        raise InputError(
            f"input '{name}' has a quote that is never closed (got {text!r})"
        ) from None
    if not found:
        raise InputError(
            f"input '{name}' is empty: give files, folders or glob patterns (got {text!r})"
        )
    for word in found:
        if not word:
            raise InputError(f"input '{name}' holds an empty path ('' or \"\") (got {text!r})")
        if word.startswith("-"):
            raise InputError(
                f"input '{name}' takes paths and glob patterns, never options: {word!r} starts "
                f"with '-' (write ./{word} for a file of that name) (got {text!r})"
            )
    return found


def value(name: str, variable: str) -> str:
    """A single-value input, without the spaces and newlines around it (a YAML block scalar
    ends in a newline), as GitHub's own actions read their inputs."""
    return os.environ.get(variable, "").strip()


def mode() -> str:
    text = value("mode", "GATECAL_MODE") or "check"
    if text not in MODES:
        raise InputError(f"input 'mode' must be one of {', '.join(MODES)} (got {text!r})")
    return text


def list_inputs() -> dict[str, list[str]]:
    """The list inputs the mode reads: check's current and baseline (none with a store),
    nightly's runs."""
    store = value("store", "GATECAL_STORE")
    if mode() == "nightly":
        if not store:
            raise InputError("input 'store' is empty: the nightly mode records into a store")
        wanted = ["runs"]
    elif store:
        if value("baseline", LISTS["baseline"]):
            raise InputError(
                "input 'baseline' can't be combined with 'store': the baseline comes from "
                f"the store (got {os.environ.get(LISTS['baseline'], '')!r})"
            )
        wanted = ["current"]
    else:
        wanted = ["current", "baseline"]
    return {name: words(name, os.environ.get(LISTS[name], "")) for name in wanted}


def set_outputs(outputs: dict[str, str]) -> None:
    """Append `outputs` to $GITHUB_OUTPUT in its multi-line form, under a random delimiter
    that no value holds, so a newline in a value cannot start an output of its own."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    lines = []
    for key, text in outputs.items():
        delimiter = f"gatecal_{uuid.uuid4().hex}"
        while delimiter in text:  # pragma: no cover - 128 random bits
            delimiter = f"gatecal_{uuid.uuid4().hex}"
        lines.append(f"{key}<<{delimiter}\n{text}\n{delimiter}\n")
    with open(path, "a", encoding="utf-8") as out:
        out.write("".join(lines))


def known_extras() -> list[str]:
    """gatecal's optional-dependency groups, from the pyproject.toml beside this action."""
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    with pyproject.open("rb") as file:
        groups = tomllib.load(file)["project"]["optional-dependencies"]
    return sorted(groups)


def files_of(pattern: str) -> list[str]:
    """The files a word names: a glob's matches, a folder's files at any depth, or itself."""
    paths = glob.glob(pattern, recursive=True) if glob.has_magic(pattern) else [pattern]
    found = []
    for path in paths:
        if os.path.isdir(path):
            found += [os.path.join(top, name) for top, _, names in os.walk(path) for name in names]
        else:
            found.append(path)
    return found


def extras(spec: str, lists: dict[str, list[str]], custom_install: bool) -> list[str]:
    """The extras to install: `spec` is 'auto', 'none' or a list of extras' names."""
    if spec in ("", "auto"):
        if custom_install:
            return []  # 'install' names its own extras
        needed = {
            SUFFIX_EXTRAS[Path(file).suffix.lower()]
            for word in [w for found in lists.values() for w in found]
            for file in files_of(word)
            if Path(file).suffix.lower() in SUFFIX_EXTRAS
        }
        if value("store", "GATECAL_STORE").lower().startswith(("postgresql:", "postgres:")):
            needed.add("store")  # psycopg, for a PostgreSQL run history
        return sorted(needed)
    if spec == "none":
        return []
    names = re.split(r"[\s,]+", spec)
    known = known_extras()
    for name in names:
        if name not in known:
            raise InputError(
                f"input 'extras' must be 'auto', 'none' or extras of gatecal "
                f"({', '.join(known)}): {name!r} is none of them (got {spec!r})"
            )
    if custom_install:
        raise InputError(
            f"input 'extras' applies to this action's own copy of gatecal; with 'install' "
            f"set, name the extras in it, as in gatecal[{','.join(names)}] (got {spec!r})"
        )
    return sorted(set(names))


def refuse(line: str, status: int = 2, *, said: bool = False) -> int:
    """An error: `line` on stderr (unless gatecal `said` it) and in the job summary,
    decision=error, exit `status`."""
    if not said:
        print(line, file=sys.stderr, flush=True)
    set_outputs({"decision": "error"})
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        fence = "`" * max(3, 1 + max(map(len, re.findall("`+", line)), default=0))
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(f"### gatecal check: ERROR\n\n{fence}text\n{line}\n{fence}\n")
    return status


def install(python: str) -> int:
    lists = list_inputs()
    custom = value("install", "GATECAL_INSTALL")
    chosen = extras(value("extras", "GATECAL_EXTRAS"), lists, bool(custom))
    own = str(Path(__file__).resolve().parent.parent)
    spec = custom or (f"{own}[{','.join(chosen)}]" if chosen else own)
    if chosen:
        print(f"gatecal: installing the extras {', '.join(chosen)}", flush=True)
    status = subprocess.call([python, "-m", "pip", "install", "--quiet", spec])
    if status != 0:
        return refuse(f"gatecal: error: pip could not install {spec!r} (exit {status})", status)
    set_outputs({"python": python})
    return 0


def check() -> int:
    lists = list_inputs()
    args = [sys.executable, "-m", "gatecal", "check"]
    for name, found in lists.items():
        args += [f"--{name}={word}" for word in found]
    for name, (variable, option) in VALUES.items():
        text = value(name, variable)
        if text:  # '' is the input left out: gatecal's own default
            args.append(f"{option}={text}")
    record = value("record", "GATECAL_RECORD").lower()
    if record not in ("", "true", "false"):
        raise InputError(f"input 'record' must be 'true' or 'false' (got {record!r})")
    if record == "true":
        args += ["--record", f"--build={build_id()}"]
    with tempfile.TemporaryDirectory(dir=os.environ.get("RUNNER_TEMP")) as scratch:
        report = Path(scratch, "check.json")
        proc = subprocess.run(
            [*args, "--format", "json", "--out", str(report)],
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
        )
        status = proc.returncode
        sys.stderr.write(proc.stderr)
        try:
            result = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            result = None
    if result is None:  # gatecal refused the input, or did not run: it said why on stderr
        said = [line for line in proc.stderr.splitlines() if line.startswith("gatecal: error:")]
        if said:
            return refuse(said[-1], status or 2, said=True)
        return refuse(f"gatecal: error: gatecal check wrote no result (exit {status})", status or 2)
    return _set_check_outputs(result, status)


def _set_check_outputs(result: dict[str, object], status: int) -> int:
    """The outputs from check's JSON: ``k_min`` empty unless the gate is a count (the
    case-aware gate has none), and each listed case on its own line with gatecal's one rule
    for a name in text (a newline or carriage return in a name is ``\\n`` or ``\\r``, so
    a name is never two entries nor a line that a runner reads as a command)."""
    # gatecal is installed by now: the step runs on the Python it was installed into
    from gatecal._common.names import action_lines

    outputs = {key: "" if result.get(key) is None else str(result[key]) for key in OUTPUTS}
    if result.get("gate_kind") not in (None, "count"):
        outputs["k_min"] = ""
    for key in CASE_OUTPUTS:
        listed = result.get(key)
        outputs[key] = action_lines(map(str, listed if isinstance(listed, list) else ()))
    set_outputs(outputs)
    return status


def build_id() -> str:
    """The build the runs are recorded under: the input, else the workflow run's id."""
    found = value("build", "GATECAL_BUILD") or os.environ.get("GITHUB_RUN_ID", "")
    if not found:
        raise InputError("input 'build' is empty and GITHUB_RUN_ID is not set (got '')")
    return found


def repeat() -> int:
    """Nightly: run the input 'repeat' (the command that repeats the suite) with bash."""
    command = value("repeat", "GATECAL_REPEAT")
    status = subprocess.call(["bash", "-c", command])
    if status != 0:
        return refuse(f"gatecal: error: input 'repeat' exited with {status} (got {command!r})", 2)
    return 0


def nightly() -> int:
    """Record the runs as known-good, then write the gate the store's runs recommend."""
    runs = list_inputs()["runs"]
    store, judge = value("store", "GATECAL_STORE"), value("judge", "GATECAL_JUDGE")
    if not judge:
        raise InputError("input 'judge' is empty: name the judge the runs were judged by")
    branch = value("branch", "GATECAL_BRANCH")
    gate_file = value("gate-file", "GATECAL_GATE_FILE") or "gate.json"
    gatecal = [sys.executable, "-m", "gatecal"]
    where = [f"--store={store}", f"--judge={judge}"]
    steps = [
        [*gatecal, "record", *where, f"--build={build_id()}", f"--branch={branch}",
         "--known-good", "--", *runs],
        [*gatecal, "recommend", *where, "--format", "json", f"--out={gate_file}"],
    ]  # fmt: skip
    said = []
    for args in steps:
        proc = subprocess.run(args, capture_output=True, text=True, errors="replace")
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            errors = [x for x in proc.stderr.splitlines() if x.startswith("gatecal: error:")]
            if errors:
                return refuse(errors[-1], proc.returncode, said=True)
            return refuse(f"gatecal: error: {args[3]} failed (exit {proc.returncode})", 2)
        said += proc.stdout.splitlines()[:1]
    set_outputs({"decision": "recorded", "gate-file": gate_file})
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as summary:
            summary.write("### gatecal nightly\n\n" + "".join(f"- {x}\n" for x in said))
            summary.write(f"- gate written to {gate_file}\n")
    return 0


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["install"] and len(argv) == 2:
            return install(argv[1])
        if argv == ["check"]:
            return check()
        if argv == ["nightly"]:
            return nightly()
        if argv == ["repeat"]:
            return repeat()
    except InputError as error:
        return refuse(f"gatecal: error: {error}")
    usage = "step.py install PYTHON | step.py check | step.py repeat | step.py nightly"
    print(f"usage: {usage} (got {argv!r})", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
