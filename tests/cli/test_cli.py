import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gatecal
from gatecal.cli import main
from tests.paths import FIXTURES


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_default_command_prints_the_article_table(capsys):
    code, out, err = run(capsys, "simulate", "--cases", "12", "--flip", "0.03,0.08")
    assert code == 0 and err == ""
    assert "== 3% of judge verdicts flipped ==" in out
    assert "== 8% of judge verdicts flipped ==" in out
    assert out.count("healthy build fails it") == 2
    assert "every case must pass  12" in out
    assert "P = 0.5186" in out and "P = 0.8648" in out
    assert "same gate:" in out
    # the table is exactly the library's rendering of the same report
    report = gatecal.simulate_gates(gatecal.Suite.uniform(), flips=[0.03, 0.08])
    assert out == gatecal.render(report, "table")


def test_json_and_csv_formats(capsys):
    code, out, _ = run(capsys, "simulate", "--format", "json", "--runs", "500", "--seed", "4")
    assert code == 0
    data = json.loads(out)
    assert data["seed"] == 4 and data["runs"] == 500 and len(data["rows"]) == 16
    assert all(row["runs"] == 500 for row in data["rows"])
    code, out, _ = run(capsys, "simulate", "--format", "csv", "--runs", "500", "--seed", "4")
    lines = out.strip().splitlines()
    assert lines[0].startswith("flip,build,gate,")
    assert len(lines) == 17


def test_options_reach_the_model(capsys):
    code, out, _ = run(
        capsys,
        "simulate",
        "--cases",
        "20",
        "--judge-checks",
        "1",
        "--code-checks",
        "0",
        "--failing",
        "5",
        "--flip",
        "0.1",
        "--gates",
        "all,fails<=3",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    assert (data["cases"], data["judge_checks"], data["code_checks"], data["failing"]) == (
        20,
        1,
        0,
        5,
    )
    assert [r["gate"] for r in data["rows"][:2]] == ["all", "fails<=3"]
    assert data["rows"][1]["k_min"] == 17


def test_out_writes_the_file_and_nothing_on_stdout(capsys, tmp_path):
    target = tmp_path / "gates.json"
    code, out, err = run(capsys, "simulate", "--format", "json", "--out", str(target))
    assert (code, out, err) == (0, "", "")
    assert json.loads(target.read_text())["rows"]
    assert [p.name for p in tmp_path.iterdir()] == ["gates.json"]  # no temporary left
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's 0600


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--flip", "1.5"],
            "--flip must be a comma-separated list of numbers in [0, 1] (got '1.5')",
        ),
        (
            ["--flip", "0.03,abc"],
            "--flip must be a comma-separated list of numbers in [0, 1] (got 'abc')",
        ),
        (
            ["--flip", "nan"],
            "--flip must be a comma-separated list of numbers in [0, 1] (got 'nan')",
        ),
        (["--flip", "-0.1"], "(got '-0.1')"),
        (["--cases", "0"], "--cases must be an integer >= 1 (got 0)"),
        (["--runs", "0"], "--runs must be an integer >= 1 (got 0)"),
        (["--failing", "13"], "--failing must be an integer in [0, 12] (got 13)"),
        (["--gates", "all,most"], "--gates must be 'all', a pass rate t in [0, 1]"),
        (["--gates", "1.5"], "--gates must be a pass rate in [0, 1] (got '1.5')"),
        (["--gates", "fails<=x"], "--gates fails<=F needs a whole number F >= 0 (got 'fails<=x')"),
        (["--seed", "-1"], "--seed must be a whole number >= 0 (got '-1')"),
        (
            ["--judge-checks", "0", "--code-checks", "0"],
            "--judge-checks and --code-checks can't both be 0",
        ),
        (["--cases", "abc"], "--cases must be a whole number (got 'abc')"),
        (["--runs", "2.5"], "--runs must be a whole number (got '2.5')"),
        (["--format", "xml"], "--format must be one of table, markdown, csv, json (got 'xml')"),
        (["--cases"], "Option '--cases' requires an argument"),
        (["--workers", "0"], "--workers must be an integer >= 1 (got 0)"),
        (
            ["--out", "/nonexistent-dir/x.json"],
            "--out must be in an existing directory (got '/nonexistent-dir/x.json')",
        ),
        (["--bogus"], "No such option: --bogus"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    code, out, err = run(capsys, "simulate", *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("gatecal: error: ")
    assert message in err
    assert "Traceback" not in err


def test_out_that_cannot_be_a_file(capsys, tmp_path):
    code, _, err = run(capsys, "simulate", "--out", str(tmp_path))
    assert code == 2 and "--out must be a file path, not a directory" in err
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    code, _, err = run(capsys, "simulate", "--out", str(plain / "x.csv"))
    assert code == 2 and "--out must be in an existing directory" in err
    assert plain.read_text() == "x"


def test_bad_value_leaves_existing_out_file_untouched(capsys, tmp_path):
    target = tmp_path / "gates.csv"
    target.write_text("previous\n")
    code, _, _ = run(capsys, "simulate", "--flip", "2", "--out", str(target))
    assert code == 2
    assert target.read_text() == "previous\n"
    code, _, _ = run(capsys, "simulate", "--out", str(target / "child"))
    assert code == 2


def test_help_documents_every_option(capsys):
    code, out, _ = run(capsys, "simulate", "--help")
    assert code == 0
    for option in (
        "--cases",
        "--flip",
        "--runs",
        "--seed",
        "--judge-checks",
        "--code-checks",
        "--failing",
        "--gates",
        "--format",
        "--out",
        "--workers",
    ):
        assert option in out


def test_console_script_end_to_end(tmp_path):
    exe = Path(sys.executable).parent / "gatecal"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gatecal"]
    ok = subprocess.run(
        [*cmd, "simulate", "--cases", "12", "--flip", "0.03,0.08"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0 and "every case must pass" in ok.stdout and ok.stderr == ""
    bad = subprocess.run(
        [*cmd, "simulate", "--flip", "7"], capture_output=True, text=True, check=False
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert (
        bad.stderr
        == "gatecal: error: --flip must be a comma-separated list of numbers in [0, 1] (got '7')\n"
    )
    module = subprocess.run(
        [sys.executable, "-m", "gatecal", "simulate", "--runs", "10", "--format", "csv"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert module.returncode == 0 and module.stdout.startswith("flip,build,gate")


def test_import_gatecal_stays_light():
    code = "import sys, gatecal; print(sorted(m for m in ('typer', 'matplotlib', 'pandas', 'scipy', 'rich') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_progress_bar_only_on_a_terminal(tmp_path):
    """A long simulation shows rich's progress bar on a terminal's stderr."""
    import pty

    exe = Path(sys.executable).parent / "gatecal"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "gatecal"]
    # the bar shows after a second: 2 x 1e8 runs in one process take 5 s here (30M
    # runs did once, until the engine got faster and the bar never came)
    args = [
        "simulate",
        "--workers",
        "1",
        "--runs",
        "100000000",
        "--flip",
        "0.03",
        "--gates",
        "all",
        "--format",
        "csv",
        "--out",
        str(tmp_path / "out.csv"),
    ]
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [*cmd, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=secondary
    )
    os.close(secondary)
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 4096)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    assert proc.wait(timeout=120) == 0
    assert b"simulating runs" in seen
    assert (tmp_path / "out.csv").read_text().startswith("flip,build,gate")
    # the same command off a terminal prints nothing on stderr
    quiet = subprocess.run(
        [*cmd, *args[:-1], str(tmp_path / "quiet.csv")], capture_output=True, text=True, check=True
    )
    assert quiet.stderr == ""


def test_bare_command_prints_help_and_version(capsys):
    code, out, err = run(capsys)
    assert code == 0 and err == ""
    assert "Commands:" in out and "simulate" in out and "recommend" in out
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"gatecal {gatecal.__version__}\n"


def test_fast_options_are_what_typer_builds():
    """The options the fast path reads are exactly the command's options as typer builds
    them, each a single text or path value with no callback, flag, envvar or prompt, and
    each with the parser typer uses."""
    import typer

    from gatecal.cli import _fast, app

    group = typer.main.get_command(app)
    for name in _fast.FAST:
        command = group.commands[name]
        options = _fast.fast_options(_fast._commands()[name])
        assert {p.opts[0]: p.name for p in command.params} == {
            option: parameter for option, (parameter, _) in options.items()
        }
        for p in command.params:
            assert len(p.opts) == 1 and not p.secondary_opts, p.name
            assert p.nargs == 1 and not p.multiple and not p.is_flag, p.name
            assert p.callback is None and not p.envvar and not p.prompt, p.name
            assert not p.is_eager and not p.required, p.name


@pytest.mark.parametrize(
    "args",
    [
        ("simulate", "--cases", "12", "--flip", "0.03,0.08"),
        ("simulate",),
        ("simulate", "--format", "json", "--runs", "500", "--seed", "4", "--workers", "2"),
        ("simulate", "--format", "csv", "--gates", "all,0.9,fails<=2", "--fpr", "0.1"),
        ("simulate", "--icc", "0.1", "--cases", "30", "--runs", "300"),
        ("simulate", "--flip", "7"),
        ("simulate", "--flip", "0.1", "--format", "yaml"),
        ("simulate", "--runs", "ten"),
        ("simulate", "--cases", "0"),
        ("simulate", "--chart", "gates.pdf"),
        ("simulate", "--suite", "no-such-file.json"),
        ("simulate", "--unparseable", "0.5", "--judge-checks", "3", "--code-checks", "0"),
        ("simulate", "--failing", "20", "--cases", "12"),
        ("simulate", "--flip", "0,05"),
        ("simulate", "--seed", "١٢"),  # Arabic-Indic digits: text, as typer passes it
    ],
)
def test_direct_call_prints_what_typer_prints(capsys, monkeypatch, args):
    """`gatecal simulate --option value ...` skips typer (a third of a second of building
    the command line) and must print, and exit with, exactly what typer's way does."""
    from gatecal import cli
    from gatecal.cli import CliError, _fast

    with contextlib.suppress(CliError):  # the fast path reads the values, or refuses one
        assert _fast.fast_arguments(list(args)) is not None
    direct = run(capsys, *args)
    monkeypatch.setattr(cli, "fast_arguments", lambda args: None)
    assert run(capsys, *args) == direct


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["simulate", "--help"],
        ["simulate", "--cases", "12", "--cases", "13"],
        ["simulate", "--cases=12"],
        ["simulate", "--seed", "-1"],
        ["simulate", "--cases"],
        ["simulate", "--case", "12"],
        ["simulate", "--flip", "0.1\udcff"],
        ["--version", "simulate"],
        ["plan", "--flip", "0.08"],
    ],
)
def test_anything_else_goes_through_typer(args):
    from gatecal.cli import _fast

    assert _fast.fast_arguments(args) is None


# Every kind of value is read by one parser: ASCII digits only, no "_" separators, no nan or
# inf (int() and float() accept all of these), whichever option and command it is.
NUMBER_OPTIONS = [
    ["simulate", "--cases"],
    ["simulate", "--runs"],
    ["simulate", "--seed"],
    ["simulate", "--workers"],
    ["simulate", "--fpr"],
    ["simulate", "--icc"],
    ["plan", "--flip"],
    ["plan", "--max-cases"],
    ["plan", "--false-alarm"],
    ["policies", "--call-icc"],
    ["golden", "--pass-rate"],
    ["golden", "--timeout"],
    ["check", "x.xml", "--baseline", "y", "--max-errors"],
    ["check", "x.xml", "--baseline", "y", "--flaky-rate"],
    ["calibrate", "labels.csv", "--width"],
]


@pytest.mark.parametrize("command", NUMBER_OPTIONS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("value", ["\u0663", "1_0", "nan", "inf", "1e999", "0x1", ""])
def test_every_number_option_reads_numbers_one_way(capsys, command, value):
    code, out, err = run(capsys, *command, value)
    option = command[-1]
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"gatecal: error: {option} must be ") and f"(got {value!r})" in err


@pytest.mark.parametrize("value", ["\u0663/5", "1_0/20", "3/5/7", "nan/5", "3/0"])
def test_observed_reads_ascii_whole_numbers(capsys, value):
    code, _, err = run(capsys, "calibrate", "labels.csv", "--observed", value)
    assert code == 2 and err.startswith("gatecal: error: --observed must be K/N"), err


def test_old_spellings_still_work_with_a_note(capsys):
    code, out, err = run(capsys, "golden", "--threshold", "0.8", "--build", "healthy")
    assert code == 0 and "0.80" in out
    assert err == "gatecal: note: golden --threshold is now --pass-rate (the old spelling works)\n"
    assert run(capsys, "golden", "--pass-rate", "0.8", "--build", "healthy")[1] == out


def _on_a_terminal(*args, env=None, stdout=subprocess.DEVNULL):
    """Run gatecal with stderr on a pseudo-terminal; (exit code, what the terminal got)."""
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gatecal", *args],
        stdin=slave, stdout=stdout, stderr=slave,
        env={**os.environ, "COLUMNS": "100", **(env or {})},
    )  # fmt: skip
    os.close(slave)
    seen = b""
    while select.select([master], [], [], 60)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    return proc.wait(), seen.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["plan", "--regression", "0.1", "--policies", "single"], "searching suite sizes"),
        (["runs", str(FIXTURES / "junit" / "artefacts")], "reading runs"),
    ],
)
def test_long_steps_show_a_spinner_on_a_terminal(args, what):
    """GATECAL_PROGRESS_AFTER=0 shows it at once (it waits 2 s by default), on stderr only
    when stderr is a terminal."""
    code, seen = _on_a_terminal(*args, env={"GATECAL_PROGRESS_AFTER": "0"})
    assert code == 0 and what in seen
    # quicker than the wait (a long one: a loaded machine can take 2 s over this)
    code, seen = _on_a_terminal(*args, env={"GATECAL_PROGRESS_AFTER": "600"})
    assert code == 0 and what not in seen
    plain = subprocess.run([sys.executable, "-m", "gatecal", *args], capture_output=True,
                           text=True, env={**os.environ, "GATECAL_PROGRESS_AFTER": "0"})  # fmt: skip
    assert plain.returncode == 0 and plain.stderr == ""


def test_policies_show_a_progress_bar_on_a_terminal_only():
    """GATECAL_PROGRESS_AFTER=0 shows the bar at the first chunk (1 s by default); nothing
    on stderr when it is not a terminal."""
    args = ["policies", "--cases", "500", "--runs", "2000", "--policies", "single"]
    code, seen = _on_a_terminal(*args, env={"GATECAL_PROGRESS_AFTER": "0"})
    assert code == 0 and "computing and simulating" in seen
    plain = subprocess.run([sys.executable, "-m", "gatecal", *args], capture_output=True,
                           text=True, env={**os.environ, "GATECAL_PROGRESS_AFTER": "0"})  # fmt: skip
    assert plain.returncode == 0 and plain.stderr == "" and "consistent" in plain.stdout


def test_the_progress_bar_starts_no_thread():
    """The bar is refreshed from the simulation's own thread, not by a thread of rich's: a
    process running a second thread is never forked (`gatecal._engines.pool`), so on a
    terminal too the simulation's helpers stay forked copies of the process."""
    import threading

    from gatecal.cli._outputs import ProgressBar

    before = threading.active_count()
    bar = ProgressBar(total=10)
    bar.enabled, bar.after = True, 0.0
    with bar:
        bar(5)
        assert bar.bar is not None and threading.active_count() == before
