"""gatecal: calibrate the CI gates of LLM-judge test suites.

How often does each gate rule fail a healthy build, and how often does it catch a
regressed one? Exactly (Poisson-binomial) and by seeded Monte Carlo, side by side.

The public names load lazily (PEP 562): ``import gatecal`` costs nothing until a name
is used, and ``import gatecal.evaluators`` never pulls in numpy.

PYTEST_DONT_REWRITE: gatecal ships a pytest plugin, so pytest would rewrite the asserts
of this package, and warn (an error under ``-W error``) when gatecal was imported before
pytest started, as in ``pytest.main()`` or pytester; the library's asserts are not tests.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gatecal._analyses.calibrate import (
        UNPARSEABLE_VALUES,
        Calibration,
        CheckCalibration,
        ConfusionMatrix,
        Estimate,
        Label,
        LabelPlan,
        LabelsError,
        SelfConsistency,
        calibrate_judge,
        labels_for_width,
        observed_from_runs,
        plan_labels,
        read_labels,
    )
    from gatecal._analyses.check import (
        CHECK_POLICIES,
        FailingCase,
        GateCheck,
        RecommendedGate,
        check_gate,
        load_recommended_gate,
        parse_check_policy,
        recommended_gate_from,
    )
    from gatecal._analyses.correct import (
        CORRECTION_METHODS,
        TOO_WIDE,
        CorrectedRate,
        correct_pass_rate,
        corrected_intervals,
    )
    from gatecal._analyses.plan import (
        REGRESSION_HELP,
        Regression,
        SuitePlan,
        SuitePlans,
        cases_needed,
        parse_regression,
        plan_suite,
    )
    from gatecal._analyses.policies import (
        Policy,
        PolicyComparisonRow,
        PolicyRates,
        PolicyReport,
        PolicyRow,
        PolicySample,
        compare_policies,
        majority_pass,
        parse_policy,
        policy_rates,
        simulate_policy,
    )
    from gatecal._analyses.recommend import (
        CI_METHODS,
        CaseNoise,
        Overdispersion,
        RateEstimate,
        Recommendation,
        fit_overdispersion,
        proportion_interval,
        recommend_gate,
    )
    from gatecal._analyses.simulate import (
        DEFAULT_FLIPS,
        DEFAULT_GATES,
        DEFAULT_RUNS,
        DEFAULT_SEED,
        BuildComparison,
        GateRow,
        Interval,
        SimulationReport,
        binomial_interval,
        compare_samples,
        noise_at,
        simulate_gates,
    )
    from gatecal._common.validate import (
        ParameterError,
    )
    from gatecal._engines.exact import (
        PassCountDistribution,
        beta_nodes,
        exact_pass_counts,
        false_alarm_grid,
        operating_table,
        pass_count_pmf,
        pass_count_pmfs,
    )
    from gatecal._engines.montecarlo import (
        CHUNK_VERDICTS,
        SKIP_BELOW,
        PassCountSample,
        SeedLike,
        simulate_pass_counts,
    )
    from gatecal._model.gates import (
        Gate,
        as_gates,
        equivalent_gates,
        parse_gate,
        parse_gates,
    )
    from gatecal._model.spec import (
        SPEC_FORMAT,
        SpecError,
        SuiteSpec,
        load_spec,
        load_suite,
        spec_from_data,
        suite_from_spec,
        suite_to_spec,
    )
    from gatecal._model.suite import (
        BUILDS,
        Check,
        JudgeNoise,
        Suite,
        beta_shape,
        case_fail_probabilities,
        case_pass_probabilities,
    )
    from gatecal._render.calibrate import render_calibration
    from gatecal._render.check import CHECK_FORMATS, render_check
    from gatecal._render.simulate import (
        FORMATS,
        format_probability,
        render,
        render_plans,
        render_policies,
        render_recommendation,
    )
    from gatecal.readers import (
        INPUT_FORMATS,
        FileRead,
        ReadOptions,
        RunsData,
        RunsError,
        Skip,
        Verdict,
        detect_format,
        read_runs,
    )

__version__ = "0.1.0"

__all__ = [
    "BUILDS",
    "CHECK_FORMATS",
    "CHECK_POLICIES",
    "CHUNK_VERDICTS",
    "CI_METHODS",
    "CORRECTION_METHODS",
    "DEFAULT_FLIPS",
    "DEFAULT_GATES",
    "DEFAULT_RUNS",
    "DEFAULT_SEED",
    "FORMATS",
    "INPUT_FORMATS",
    "REGRESSION_HELP",
    "SKIP_BELOW",
    "SPEC_FORMAT",
    "TOO_WIDE",
    "UNPARSEABLE_VALUES",
    "BuildComparison",
    "Calibration",
    "CaseNoise",
    "Check",
    "CheckCalibration",
    "ConfusionMatrix",
    "CorrectedRate",
    "Estimate",
    "FailingCase",
    "FileRead",
    "Gate",
    "GateCheck",
    "GateRow",
    "Interval",
    "JudgeNoise",
    "Label",
    "LabelPlan",
    "LabelsError",
    "Overdispersion",
    "ParameterError",
    "PassCountDistribution",
    "PassCountSample",
    "Policy",
    "PolicyComparisonRow",
    "PolicyRates",
    "PolicyReport",
    "PolicyRow",
    "PolicySample",
    "RateEstimate",
    "ReadOptions",
    "Recommendation",
    "RecommendedGate",
    "Regression",
    "RunsData",
    "RunsError",
    "SeedLike",
    "SelfConsistency",
    "SimulationReport",
    "Skip",
    "SpecError",
    "Suite",
    "SuitePlan",
    "SuitePlans",
    "SuiteSpec",
    "Verdict",
    "as_gates",
    "beta_nodes",
    "beta_shape",
    "binomial_interval",
    "calibrate_judge",
    "case_fail_probabilities",
    "case_pass_probabilities",
    "cases_needed",
    "check_gate",
    "compare_policies",
    "compare_samples",
    "correct_pass_rate",
    "corrected_intervals",
    "detect_format",
    "equivalent_gates",
    "exact_pass_counts",
    "false_alarm_grid",
    "fit_overdispersion",
    "format_probability",
    "labels_for_width",
    "load_recommended_gate",
    "load_spec",
    "load_suite",
    "majority_pass",
    "noise_at",
    "observed_from_runs",
    "operating_table",
    "parse_check_policy",
    "parse_gate",
    "parse_gates",
    "parse_policy",
    "parse_regression",
    "pass_count_pmf",
    "pass_count_pmfs",
    "plan_labels",
    "plan_suite",
    "policy_rates",
    "proportion_interval",
    "read_labels",
    "read_runs",
    "recommend_gate",
    "recommended_gate_from",
    "render",
    "render_calibration",
    "render_check",
    "render_plans",
    "render_policies",
    "render_recommendation",
    "simulate_gates",
    "simulate_pass_counts",
    "simulate_policy",
    "spec_from_data",
    "suite_from_spec",
    "suite_to_spec",
]

_MODULES = {
    "gatecal._analyses.calibrate": (
        "UNPARSEABLE_VALUES",
        "Calibration",
        "CheckCalibration",
        "ConfusionMatrix",
        "Estimate",
        "Label",
        "LabelPlan",
        "LabelsError",
        "SelfConsistency",
        "calibrate_judge",
        "labels_for_width",
        "observed_from_runs",
        "plan_labels",
        "read_labels",
    ),
    "gatecal._render.calibrate": ("render_calibration",),
    "gatecal._analyses.correct": (
        "CORRECTION_METHODS",
        "TOO_WIDE",
        "CorrectedRate",
        "correct_pass_rate",
        "corrected_intervals",
    ),
    "gatecal._engines.exact": (
        "PassCountDistribution",
        "beta_nodes",
        "exact_pass_counts",
        "false_alarm_grid",
        "operating_table",
        "pass_count_pmf",
        "pass_count_pmfs",
    ),
    "gatecal._analyses.check": (
        "CHECK_POLICIES",
        "FailingCase",
        "GateCheck",
        "RecommendedGate",
        "check_gate",
        "load_recommended_gate",
        "parse_check_policy",
        "recommended_gate_from",
    ),
    "gatecal._render.check": ("CHECK_FORMATS", "render_check"),
    "gatecal._model.gates": (
        "Gate",
        "as_gates",
        "equivalent_gates",
        "parse_gate",
        "parse_gates",
    ),
    "gatecal._engines.montecarlo": (
        "CHUNK_VERDICTS",
        "SKIP_BELOW",
        "PassCountSample",
        "SeedLike",
        "simulate_pass_counts",
    ),
    "gatecal._analyses.plan": (
        "REGRESSION_HELP",
        "Regression",
        "SuitePlan",
        "SuitePlans",
        "cases_needed",
        "parse_regression",
        "plan_suite",
    ),
    "gatecal._analyses.policies": (
        "Policy",
        "PolicyComparisonRow",
        "PolicyRates",
        "PolicyReport",
        "PolicyRow",
        "PolicySample",
        "compare_policies",
        "majority_pass",
        "parse_policy",
        "policy_rates",
        "simulate_policy",
    ),
    "gatecal._analyses.recommend": (
        "CI_METHODS",
        "CaseNoise",
        "Overdispersion",
        "RateEstimate",
        "Recommendation",
        "fit_overdispersion",
        "proportion_interval",
        "recommend_gate",
    ),
    "gatecal._render.simulate": (
        "FORMATS",
        "format_probability",
        "render",
        "render_plans",
        "render_policies",
        "render_recommendation",
    ),
    "gatecal.readers": (
        "INPUT_FORMATS",
        "FileRead",
        "ReadOptions",
        "RunsData",
        "RunsError",
        "Skip",
        "Verdict",
        "detect_format",
        "read_runs",
    ),
    "gatecal._analyses.simulate": (
        "DEFAULT_FLIPS",
        "DEFAULT_GATES",
        "DEFAULT_RUNS",
        "DEFAULT_SEED",
        "BuildComparison",
        "GateRow",
        "Interval",
        "SimulationReport",
        "binomial_interval",
        "compare_samples",
        "noise_at",
        "simulate_gates",
    ),
    "gatecal._model.spec": (
        "SPEC_FORMAT",
        "SpecError",
        "SuiteSpec",
        "load_spec",
        "load_suite",
        "spec_from_data",
        "suite_from_spec",
        "suite_to_spec",
    ),
    "gatecal._model.suite": (
        "BUILDS",
        "Check",
        "JudgeNoise",
        "Suite",
        "beta_shape",
        "case_fail_probabilities",
        "case_pass_probabilities",
    ),
    "gatecal._common.validate": ("ParameterError",),
}
_WHERE = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'gatecal' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    # Show the public path in reprs and docs (as httpx does): gatecal.Suite.
    if (isinstance(value, type) or callable(value)) and value.__module__.startswith("gatecal._"):
        value.__module__ = "gatecal"
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
