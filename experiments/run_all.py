"""Regenerate everything in reports/: python experiments/run_all.py [--skip-benchmark].

``--skip-benchmark`` leaves out the timing benchmarks (``bench_*``) and the long studies
(the recommend coverage study, about 20 minutes; the case-gate study, about 15; the compare
size study, about 3; the sequential shared-rate study, about 2): the benchmarks' reports
carry this machine's timings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    "simulate_article.py",
    "article_transcripts.py",
    "nightly_junit.py",
    "plugin_loop.py",
    "report_charts.py",
    "calibrate_example.py",
    "framework_loops.py",
    "sequential_savings.py",
    "sequential_shared_rate.py",
    "gsdesign_reference/compare.py",
    "anytime_evalue.py",
    "compare_example.py",
    "compare_size.py",
    # the real judge's committed runs, analysed again (running the model is its own step:
    # python experiments/real_judge.py --model FILE, tens of minutes)
    "real_judge.py --analyse-only",
    "real_judge.py --analyse-only --no-report --out reports/real-judge/temperature-0",
    "real_judge.py --analyse-only --no-report --out reports/real-judge/temperature-0-run-major",
    "history_example.py",
    "java_example.py",
    "docs_blocks.py",
    "calibrate_coverage.py",
    "recommend_coverage.py",
    "case_gate_coverage.py",
    "plan_baseline_runs.py",
    "recommend_policy_coverage.py --reps 100 --seed 20261201",
    "many_gates_accuracy.py",
    "bench_readers.py",
    "bench_montecarlo.py",
    "bench_speed.py",
    "bench_limits.py",
    "bench_store.py",
    "bench_policies_scale.py",
    "bench_scale.py",
    "bench_labels_scale.py",
]


#: The long studies --skip-benchmark leaves out with the benchmarks (minutes each).
STUDIES = (
    "recommend_coverage.py",
    "case_gate_coverage.py",
    "compare_size.py",
    "sequential_shared_rate.py",
    "plan_baseline_runs.py",
    "recommend_policy_coverage.py --reps 100 --seed 20261201",
    "many_gates_accuracy.py",
)


def main() -> None:
    skip_bench = "--skip-benchmark" in sys.argv[1:]
    for script in SCRIPTS:
        if skip_bench and (script.startswith("bench_") or script in STUDIES):
            continue
        print(f"== {script}", flush=True)
        name, *args = script.split()
        subprocess.run([sys.executable, str(HERE / name), *args], check=True, cwd=HERE.parent)


if __name__ == "__main__":
    main()
