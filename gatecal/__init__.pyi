"""The public names of gatecal, declared once: ``gatecal/__init__.py`` loads each lazily
from the module named here (lazy_loader.attach_stub), and type checkers read them here."""

from ._analyses.calibrate.correct import (
    CORRECTION_METHODS as CORRECTION_METHODS,
    CorrectedRate as CorrectedRate,
    correct_pass_rate as correct_pass_rate,
    corrected_intervals as corrected_intervals,
)
from ._analyses.calibrate.judge import (
    Calibration as Calibration,
    CheckCalibration as CheckCalibration,
    ConfusionMatrix as ConfusionMatrix,
    LabelPlan as LabelPlan,
    SelfConsistency as SelfConsistency,
    calibrate_judge as calibrate_judge,
    labels_for_width as labels_for_width,
    observed_from_runs as observed_from_runs,
    plan_labels as plan_labels,
)
from ._analyses.check.gate import (
    FailingCase as FailingCase,
    GateCheck as GateCheck,
    check_gate as check_gate,
)
from ._analyses.check.sequential import (
    SequentialCheck as SequentialCheck,
    check_sequential as check_sequential,
)
from ._analyses.compare.builds import (
    compare_builds as compare_builds,
    compare_matrices as compare_matrices,
)
from ._analyses.compare.oc import (
    CompareDesign as CompareDesign,
    CompareOC as CompareOC,
    compare_oc as compare_oc,
    plan_compare as plan_compare,
)
from ._analyses.compare.result import (
    CaseChange as CaseChange,
    CaseChanges as CaseChanges,
    ComparedRuns as ComparedRuns,
    Comparison as Comparison,
    ComparisonRates as ComparisonRates,
    Discordant as Discordant,
    PairedTest as PairedTest,
)
from ._analyses.history.changes import (
    CaseShift as CaseShift,
    Shift as Shift,
)
from ._analyses.history.record import (
    History as History,
    case_history as case_history,
)
from ._analyses.noise.measured import (
    BaselineEvidence as BaselineEvidence,
    MeasuredNoise as MeasuredNoise,
)
from ._analyses.noise.overdispersion import (
    Overdispersion as Overdispersion,
    fit_overdispersion as fit_overdispersion,
)
from ._analyses.plan._search import (
    SuitePlan as SuitePlan,
    SuitePlans as SuitePlans,
)
from ._analyses.plan.baseline import (
    BaselineRuns as BaselineRuns,
    baseline_runs as baseline_runs,
)
from ._analyses.plan.sequential import (
    SequentialSuitePlan as SequentialSuitePlan,
    plan_sequential as plan_sequential,
)
from ._analyses.plan.suite import (
    cases_needed as cases_needed,
    plan_suite as plan_suite,
)
from ._analyses.policies.compare import compare_policies as compare_policies
from ._analyses.policies.exact import policy_rates as policy_rates
from ._analyses.policies.parse import (
    parse_check_policy as parse_check_policy,
    parse_policy as parse_policy,
)
from ._analyses.policies.rules import (
    Policy as Policy,
    PolicyComparisonRow as PolicyComparisonRow,
    PolicyRates as PolicyRates,
    PolicyReport as PolicyReport,
    PolicyRow as PolicyRow,
    PolicySample as PolicySample,
    majority_pass as majority_pass,
)
from ._analyses.policies.sequential import (
    SequentialComparisonRow as SequentialComparisonRow,
    SequentialPolicy as SequentialPolicy,
    SequentialSample as SequentialSample,
    parse_sequential as parse_sequential,
    sequential_gate as sequential_gate,
    sequential_rows as sequential_rows,
    simulate_sequential as simulate_sequential,
)
from ._analyses.policies.simulate import simulate_policy as simulate_policy
from ._analyses.recommend.gate import (
    CaseNoise as CaseNoise,
    Recommendation as Recommendation,
    recommend_gate as recommend_gate,
)
from ._analyses.recommend.policy import (
    PolicyRecommendation as PolicyRecommendation,
    RuleGate as RuleGate,
    recommend_policy as recommend_policy,
)
from ._analyses.sequential.designs import (
    SEQUENTIAL_DESIGNS as SEQUENTIAL_DESIGNS,
    SequentialBoundary as SequentialBoundary,
    SequentialDesign as SequentialDesign,
    SequentialGate as SequentialGate,
    SequentialOutcome as SequentialOutcome,
    WaldApproximation as WaldApproximation,
    design_sequential as design_sequential,
    sequential_outcome as sequential_outcome,
    wald_approximation as wald_approximation,
    wald_sprt as wald_sprt,
)
from ._analyses.sequential.evalue import (
    EvalueDesign as EvalueDesign,
    design_evalue as design_evalue,
    evalue_gate as evalue_gate,
)
from ._analyses.simulate import (
    BuildComparison as BuildComparison,
    GateRow as GateRow,
    SimulationReport as SimulationReport,
    compare_samples as compare_samples,
    noise_at as noise_at,
    simulate_gates as simulate_gates,
)
from ._common.defaults import (
    DEFAULT_FLIPS as DEFAULT_FLIPS,
    DEFAULT_GATES as DEFAULT_GATES,
    DEFAULT_RUNS as DEFAULT_RUNS,
    DEFAULT_SEED as DEFAULT_SEED,
)
from ._common.intervals import (
    CI_METHODS as CI_METHODS,
    Estimate as Estimate,
    Interval as Interval,
    RateEstimate as RateEstimate,
    binomial_interval as binomial_interval,
    proportion_interval as proportion_interval,
)
from ._common.seeds import (
    SeedLike as SeedLike,
)
from ._common.tables import (
    FORMATS as FORMATS,
    format_probability as format_probability,
)
from ._common.validate import (
    ParameterError as ParameterError,
)
from ._engines.exact import (
    PassCountDistribution as PassCountDistribution,
    beta_nodes as beta_nodes,
    exact_pass_counts as exact_pass_counts,
    false_alarm_grid as false_alarm_grid,
    operating_table as operating_table,
    pass_count_pmf as pass_count_pmf,
    pass_count_pmfs as pass_count_pmfs,
)
from ._engines.montecarlo import (
    PassCountSample as PassCountSample,
    simulate_pass_counts as simulate_pass_counts,
)
from ._model.gatefile import (
    RecommendedGate as RecommendedGate,
    load_recommended_gate as load_recommended_gate,
    recommended_gate_from as recommended_gate_from,
)
from ._model.gates import (
    Gate as Gate,
    as_gates as as_gates,
    equivalent_gates as equivalent_gates,
    parse_gate as parse_gate,
    parse_gates as parse_gates,
)
from ._model.regression import (
    Regression as Regression,
    as_regression as as_regression,
    parse_regression as parse_regression,
)
from ._model.spec import (
    SPEC_FORMAT as SPEC_FORMAT,
    SpecError as SpecError,
    SuiteSpec as SuiteSpec,
    load_spec as load_spec,
    load_suite as load_suite,
    spec_from_data as spec_from_data,
    suite_from_spec as suite_from_spec,
    suite_to_spec as suite_to_spec,
)
from ._model.suite import (
    BUILDS as BUILDS,
    Check as Check,
    JudgeNoise as JudgeNoise,
    Suite as Suite,
    beta_shape as beta_shape,
    case_fail_probabilities as case_fail_probabilities,
    case_pass_probabilities as case_pass_probabilities,
)
from ._model.targets import Targets as Targets
from ._render import CHECK_FORMATS as CHECK_FORMATS
from ._render.calibrate import (
    render_calibration as render_calibration,
)
from ._render.check import render_check as render_check
from ._render.compare import (
    render_compare_design as render_compare_design,
    render_comparison as render_comparison,
)
from ._render.dispatch import (
    render as render,
)
from ._render.history import render_history as render_history
from ._render.plans import (
    render_plans as render_plans,
)
from ._render.policies import (
    render_policies as render_policies,
)
from ._render.recommend import (
    render_recommendation as render_recommendation,
)
from ._render.recommend_policy import (
    render_policy_recommendation as render_policy_recommendation,
)
from ._render.sequential import (
    render_sequential_check as render_sequential_check,
)
from ._render.simulate import (
    render_simulation as render_simulation,
)
from .readers._base import ReadOptions as ReadOptions
from .readers._data import FileRead as FileRead, RunsData as RunsData, Skip as Skip
from .readers._read import detect_format as detect_format, read_runs as read_runs
from .readers._registry import INPUT_FORMATS as INPUT_FORMATS
from .readers._verdict import RunsError as RunsError, Verdict as Verdict
from .readers.labels.columns import (
    UNPARSEABLE_VALUES as UNPARSEABLE_VALUES,
    Label as Label,
    LabelsError as LabelsError,
)
from .readers.labels.reader import read_labels as read_labels
from .store import (
    Recorded as Recorded,
    RunRecord as RunRecord,
    Selection as Selection,
    StoredRuns as StoredRuns,
    StoreError as StoreError,
    record_runs as record_runs,
    stored_runs as stored_runs,
)

__version__: str
