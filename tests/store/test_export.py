"""history --export: the stored runs as Parquet that DuckDB queries."""

from __future__ import annotations

from gatecal.cli import main
from tests.store.nightly import CASES, nightly


def test_the_export_is_the_long_table_with_each_runs_judge_and_time(tmp_path, capsys):
    import duckdb

    store = str(tmp_path / "h.db")
    for night, path in enumerate(nightly(tmp_path / "n", count=4)):
        judge = "judge-a" if night < 2 else "judge-b"
        args = ["record", str(path), "--store", store, "--build", f"b{night}", "--judge", judge]
        assert main([*args, "--known-good", "--at", f"2026-11-0{night + 1}T02:00Z"]) == 0
    out = tmp_path / "history.parquet"
    report = str(tmp_path / "history.txt")
    assert main(["history", "--store", store, "--export", str(out), "--out", report]) == 0
    rows = duckdb.sql(
        f"SELECT judge, count(DISTINCT run), count(*), min(recorded_at)::VARCHAR "
        f"FROM '{out}' GROUP BY judge ORDER BY judge"
    ).fetchall()
    assert rows == [
        ("judge-a", 2, 2 * len(CASES), "2026-11-01 02:00:00+00"),
        ("judge-b", 2, 2 * len(CASES), "2026-11-03 02:00:00+00"),
    ]
    (failed,) = duckdb.sql(f"SELECT count(*) FROM '{out}' WHERE NOT passed").fetchall()
    written = sum(p.read_text().count('"passed": false') for p in (tmp_path / "n").iterdir())
    assert failed == (written,)
    capsys.readouterr()
    assert main(["history", "--store", store, "--export", str(tmp_path / "h.csv")]) == 2
    assert "--export must end in .parquet" in capsys.readouterr().err
