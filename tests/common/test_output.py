"""Outputs never destroy what is at the path, and a command's outputs land together or not at all.

Every command with an output is tried against every kind of path (new, regular file, symlink,
dangling symlink, a character device, a FIFO, a directory, a full device, a name too long, an
input of the same command, a path two options share); the contract is checked after each.
"""

import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gatecal._common.output import OutputError, check_outputs, write_outputs
from tests.conftest import run_cli
from tests.paths import ROOT

NIGHTLY = ROOT / "reports" / "nightly-junit"


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".gatecal-"))


# -- the library ------------------------------------------------------------------------


def test_a_regular_file_is_replaced_atomically_and_keeps_its_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    (planned,) = check_outputs([("--out", target)])
    write_outputs([(planned, b"new")])
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_a_symlink_is_followed_and_stays_a_symlink(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    (planned,) = check_outputs([("--out", link)])
    write_outputs([(planned, b"new")])
    assert link.is_symlink() and real.read_text() == "new"
    dangling = tmp_path / "dangling.txt"
    dangling.symlink_to(tmp_path / "made.txt")
    (planned,) = check_outputs([("--out", dangling)])
    write_outputs([(planned, b"x")])
    assert dangling.is_symlink() and (tmp_path / "made.txt").read_text() == "x"


def test_dev_null_is_written_through_and_stays_a_device():
    (planned,) = check_outputs([("--out", Path("/dev/null"))])
    assert planned.stream
    write_outputs([(planned, b"anything")])
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_full_device_is_one_error_and_nothing_else_lands(tmp_path):
    keep = tmp_path / "keep.txt"
    keep.write_text("old")
    plans = check_outputs([("--out", keep), ("--chart", Path("/dev/full"))])
    with pytest.raises(
        OutputError, match=r"--chart could not be written \(No space left on device\)"
    ):
        write_outputs([(plans[0], b"new"), (plans[1], b"chart")])
    assert keep.read_text() == "old" and _leftovers(tmp_path) == []


def test_a_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    (planned,) = check_outputs([("--out", fifo)])
    write_outputs([(planned, b"through the pipe")])
    reader.join(timeout=10)
    assert received == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "must be a file path, not a directory"),
        (lambda d: d / "missing" / "out.txt", "must be in an existing directory"),
        (lambda d: d / ("x" * 300), "must have a file name of at most 255 bytes"),
    ],
)
def test_paths_that_cannot_be_outputs(tmp_path, make, message):
    with pytest.raises(OutputError, match=message):
        check_outputs([("--out", make(tmp_path))])


def test_an_input_or_a_shared_path_is_refused(tmp_path):
    data = tmp_path / "runs.csv"
    data.write_text("run,case,passed\n")
    link = tmp_path / "alias.csv"
    link.symlink_to(data)
    with pytest.raises(OutputError, match="--out must not be one of the inputs"):
        check_outputs([("--out", link)], inputs=[data])
    with pytest.raises(OutputError, match="--chart must differ from --out"):
        check_outputs([("--out", tmp_path / "a.txt"), ("--chart", tmp_path / "a.txt")])


def test_a_failed_move_puts_back_what_was_replaced(tmp_path, monkeypatch):
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("first-old")
    second.write_text("second-old")
    plans = check_outputs([("--out", first), ("--export-suite", second)])
    real_replace = os.replace

    def failing(src, dst):
        if Path(dst) == second:
            raise OSError(5, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OutputError, match="--export-suite could not be written"):
        write_outputs([(plans[0], b"first-new"), (plans[1], b"second-new")])
    monkeypatch.undo()
    assert first.read_text() == "first-old" and second.read_text() == "second-old"
    assert _leftovers(tmp_path) == []


# -- every command, every kind of path -------------------------------------------------

# {runs}: a copy of the nightly JUnit files in the test's own folder (never the committed ones)
COMMANDS = {
    "simulate --out": (["simulate", "--runs", "20"], "--out"),
    "simulate --chart": (["simulate", "--runs", "20", "--out", "{other}.txt"], "--chart"),
    "recommend --out": (["recommend", "{runs}", "--regression", "3"], "--out"),
    "recommend --export-suite": (
        ["recommend", "{runs}", "--regression", "3", "--out", "{other}.txt"],
        "--export-suite",
    ),
    "plan --out": (["plan", "--flip", "0.08"], "--out"),
    "runs --out": (["runs", "{runs}", "--format", "csv"], "--out"),
    "golden --export-suite": (["golden", "--out", "{other}.txt"], "--export-suite"),
}

KINDS = ["new", "regular", "symlink", "dangling", "devnull", "directory", "devfull", "long",
         "too-long", "missing-dir", "input", "shared", "proc"]  # fmt: skip


def _make(kind: str, folder: Path, option: str) -> Path:
    suffix = ".png" if option == "--chart" else ".txt"
    path = folder / f"target{suffix}"
    if kind == "regular":
        path.write_bytes(b"precious")
    elif kind == "symlink":
        (folder / f"real{suffix}").write_bytes(b"precious")
        path.symlink_to(folder / f"real{suffix}")
    elif kind == "dangling":
        path.symlink_to(folder / f"made{suffix}")
    elif kind == "devnull":
        return Path("/dev/null")
    elif kind == "directory":
        path.mkdir()
    elif kind == "devfull":
        return Path("/dev/full")
    elif kind == "long":  # 254 bytes: a legal name (the old temporary name overflowed)
        return folder / ("n" * 250 + suffix)
    elif kind == "too-long":
        return folder / ("n" * 300 + suffix)
    elif kind == "proc":
        return Path("/proc/self/status")
    elif kind == "missing-dir":
        return folder / "nope" / f"x{suffix}"
    elif kind == "input":
        return folder / "runs" / "night-00.xml"
    elif kind == "shared":
        return folder / "other.txt"
    return path


def _snapshot(folder: Path) -> dict[str, tuple[str, bytes | str]]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_symlink():
            out[p.name] = ("link", os.readlink(p))
        elif p.is_file():
            out[p.name] = ("file", p.read_bytes())
        elif p.is_dir():
            out[p.name] = ("dir", "")
    return out


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(command=st.sampled_from(sorted(COMMANDS)), kind=st.sampled_from(KINDS))
def test_every_output_follows_the_rules(tmp_path_factory, command, kind):
    folder = tmp_path_factory.mktemp("out")
    (folder / "runs").mkdir()
    for night in sorted(NIGHTLY.iterdir())[:6]:
        (folder / "runs" / night.name).write_bytes(night.read_bytes())
    args, option = COMMANDS[command]
    target = _make(kind, folder, option)
    args = [str(a).replace("{other}", str(folder / "other")).replace("{runs}", str(folder / "runs"))
            for a in args]  # fmt: skip
    before = _snapshot(folder)
    code, _, err = run_cli(*args, option, target)
    assert code in (0, 2), err
    assert "Traceback" not in err
    assert _leftovers(folder) == [] and _leftovers(folder / "runs") == []
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and stat.S_ISCHR(os.stat("/dev/full").st_mode)
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("gatecal: error: ")
        assert _snapshot(folder) == before, "a failing command changed its outputs"
        return
    assert err == ""
    if kind in ("symlink", "dangling"):
        assert target.is_symlink()
        assert Path(os.path.realpath(target)).read_bytes() not in (b"", b"precious")
    elif kind in ("new", "regular", "long"):
        assert target.read_bytes() not in (b"", b"precious")
    expected_fail = {"directory", "devfull", "too-long", "missing-dir", "proc"}
    if "{runs}" in COMMANDS[command][0]:
        expected_fail.add("input")  # only an input of a command that reads runs
    if any("{other}" in str(a) for a in COMMANDS[command][0]):
        expected_fail.add("shared")  # only shared with another option of the command
    assert kind not in expected_fail, f"{command} accepted a {kind} output"


def test_outputs_of_one_command_land_together(tmp_path):
    rec = tmp_path / "rec.txt"
    rec.write_text("old recommendation")
    code, _, err = run_cli("recommend", NIGHTLY, "--regression", "3", "--out", rec,
                         "--export-suite", tmp_path / "missing" / "s.json")  # fmt: skip
    assert code == 2 and "--export-suite must be in an existing directory" in err
    assert rec.read_text() == "old recommendation"
    code, _, err = run_cli("recommend", NIGHTLY, "--regression", "3", "--out", rec,
                         "--export-suite", "/dev/full")  # fmt: skip
    assert code == 2 and "--export-suite could not be written (No space left on device)" in err
    assert rec.read_text() == "old recommendation"


def test_a_runs_file_cannot_be_overwritten_by_its_own_reading(tmp_path):
    data = tmp_path / "runs.csv"
    data.write_text("run,case,passed\nr1,a,true\nr2,a,false\nr3,a,true\n")
    for args in (
        ["recommend", data, "--out", data],
        ["runs", tmp_path, "--format", "csv", "--out", data],
    ):
        code, _, err = run_cli(*args)
        assert code == 2 and "--out must not be one of the inputs" in err
        assert data.read_text().startswith("run,case,passed\nr1,a,true")


def test_the_plugins_runs_file_and_checks_outputs_follow_the_same_rules(tmp_path):
    import subprocess
    import sys

    test = tmp_path / "test_x.py"
    test.write_text("import pytest\n\n@pytest.mark.gatecal\ndef test_a():\n    pass\n")
    (tmp_path / "folder").mkdir()
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)]
    refused = subprocess.run([*run, f"--gatecal-runs-out={tmp_path / 'folder'}"],
                             capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert refused.returncode == 4
    assert "--gatecal-runs-out must be a file path, not a directory" in refused.stderr
    link = tmp_path / "runs.jsonl"
    link.symlink_to(tmp_path / "real.jsonl")
    written = subprocess.run([*run, f"--gatecal-runs-out={link}"], capture_output=True,
                             text=True, cwd=tmp_path)  # fmt: skip
    assert written.returncode == 0, written.stdout + written.stderr
    assert link.is_symlink() and '"case"' in (tmp_path / "real.jsonl").read_text()
    code, _, err = run_cli("check", link, "--baseline", link, "--gate", "all", "--out", link)
    assert code == 2 and "--out must not be one of the inputs" in err


# -- the JSON header every --format json output opens with ------------------------------------

JSON_COMMANDS = [
    ["simulate", "--cases", "6", "--flip", "0.05", "--runs", "20"],
    ["plan", "--flip", "0.05", "--max-cases", "30"],
    ["policies", "--cases", "6", "--flip", "0.05", "--runs", "20", "--policies", "single"],
    ["golden"],
]


@pytest.mark.parametrize("args", JSON_COMMANDS, ids=lambda a: a[0])
def test_every_json_output_opens_with_its_contract(args):
    import json

    from typer.testing import CliRunner

    import gatecal
    from gatecal._common.contracts import CONTRACTS
    from gatecal.cli import app

    result = CliRunner().invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document)[:3] == ["format", "version", "gatecal_version"]
    assert document["format"] == f"gatecal.{args[0]}"
    assert document["version"] == CONTRACTS[args[0]]
    assert document["gatecal_version"] == gatecal.__version__


def test_a_gate_file_of_the_earlier_header_still_reads():
    import gatecal
    from gatecal._model.gatefile import recommended_gate_from

    document = {"format": "gatecal recommend", "version": 1}
    with pytest.raises(gatecal.ParameterError, match="recommends no gate"):
        recommended_gate_from(document)  # read past the header: it is the gate that is missing
