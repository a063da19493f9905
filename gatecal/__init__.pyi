"""The public names of gatecal, declared once: ``gatecal/__init__.py`` loads each lazily
from the module named here (lazy_loader.attach_stub), and type checkers read them here."""

from ._analyses.calibrate import (
    UNPARSEABLE_VALUES as UNPARSEABLE_VALUES,
)
from ._analyses.calibrate import (
    Calibration as Calibration,
)
from ._analyses.calibrate import (
    CheckCalibration as CheckCalibration,
)
from ._analyses.calibrate import (
    ConfusionMatrix as ConfusionMatrix,
)
from ._analyses.calibrate import (
    Estimate as Estimate,
)
from ._analyses.calibrate import (
    Label as Label,
)
from ._analyses.calibrate import (
    LabelPlan as LabelPlan,
)
from ._analyses.calibrate import (
    LabelsError as LabelsError,
)
from ._analyses.calibrate import (
    SelfConsistency as SelfConsistency,
)
from ._analyses.calibrate import (
    calibrate_judge as calibrate_judge,
)
from ._analyses.calibrate import (
    labels_for_width as labels_for_width,
)
from ._analyses.calibrate import (
    observed_from_runs as observed_from_runs,
)
from ._analyses.calibrate import (
    plan_labels as plan_labels,
)
from ._analyses.calibrate import (
    read_labels as read_labels,
)
from ._analyses.check import (
    CHECK_POLICIES as CHECK_POLICIES,
)
from ._analyses.check import (
    FailingCase as FailingCase,
)
from ._analyses.check import (
    GateCheck as GateCheck,
)
from ._analyses.check import (
    RecommendedGate as RecommendedGate,
)
from ._analyses.check import (
    check_gate as check_gate,
)
from ._analyses.check import (
    load_recommended_gate as load_recommended_gate,
)
from ._analyses.check import (
    parse_check_policy as parse_check_policy,
)
from ._analyses.check import (
    recommended_gate_from as recommended_gate_from,
)
from ._analyses.correct import (
    CORRECTION_METHODS as CORRECTION_METHODS,
)
from ._analyses.correct import (
    TOO_WIDE as TOO_WIDE,
)
from ._analyses.correct import (
    CorrectedRate as CorrectedRate,
)
from ._analyses.correct import (
    correct_pass_rate as correct_pass_rate,
)
from ._analyses.correct import (
    corrected_intervals as corrected_intervals,
)
from ._analyses.plan import (
    SuitePlan as SuitePlan,
)
from ._analyses.plan import (
    SuitePlans as SuitePlans,
)
from ._analyses.plan import (
    cases_needed as cases_needed,
)
from ._analyses.plan import (
    plan_suite as plan_suite,
)
from ._analyses.policies import (
    Policy as Policy,
)
from ._analyses.policies import (
    PolicyComparisonRow as PolicyComparisonRow,
)
from ._analyses.policies import (
    PolicyRates as PolicyRates,
)
from ._analyses.policies import (
    PolicyReport as PolicyReport,
)
from ._analyses.policies import (
    PolicyRow as PolicyRow,
)
from ._analyses.policies import (
    PolicySample as PolicySample,
)
from ._analyses.policies import (
    compare_policies as compare_policies,
)
from ._analyses.policies import (
    majority_pass as majority_pass,
)
from ._analyses.policies import (
    parse_policy as parse_policy,
)
from ._analyses.policies import (
    policy_rates as policy_rates,
)
from ._analyses.policies import (
    simulate_policy as simulate_policy,
)
from ._analyses.recommend import (
    CaseNoise as CaseNoise,
)
from ._analyses.recommend import (
    Overdispersion as Overdispersion,
)
from ._analyses.recommend import (
    Recommendation as Recommendation,
)
from ._analyses.recommend import (
    fit_overdispersion as fit_overdispersion,
)
from ._analyses.recommend import (
    recommend_gate as recommend_gate,
)
from ._analyses.simulate import (
    BuildComparison as BuildComparison,
)
from ._analyses.simulate import (
    GateRow as GateRow,
)
from ._analyses.simulate import (
    SimulationReport as SimulationReport,
)
from ._analyses.simulate import (
    compare_samples as compare_samples,
)
from ._analyses.simulate import (
    noise_at as noise_at,
)
from ._analyses.simulate import (
    simulate_gates as simulate_gates,
)
from ._common.defaults import (
    DEFAULT_FLIPS as DEFAULT_FLIPS,
)
from ._common.defaults import (
    DEFAULT_GATES as DEFAULT_GATES,
)
from ._common.defaults import (
    DEFAULT_RUNS as DEFAULT_RUNS,
)
from ._common.defaults import (
    DEFAULT_SEED as DEFAULT_SEED,
)
from ._common.intervals import (
    CI_METHODS as CI_METHODS,
)
from ._common.intervals import (
    Interval as Interval,
)
from ._common.intervals import (
    RateEstimate as RateEstimate,
)
from ._common.intervals import (
    binomial_interval as binomial_interval,
)
from ._common.intervals import (
    proportion_interval as proportion_interval,
)
from ._common.tables import (
    FORMATS as FORMATS,
)
from ._common.tables import (
    format_probability as format_probability,
)
from ._common.validate import (
    ParameterError as ParameterError,
)
from ._engines.exact import (
    PassCountDistribution as PassCountDistribution,
)
from ._engines.exact import (
    beta_nodes as beta_nodes,
)
from ._engines.exact import (
    exact_pass_counts as exact_pass_counts,
)
from ._engines.exact import (
    false_alarm_grid as false_alarm_grid,
)
from ._engines.exact import (
    operating_table as operating_table,
)
from ._engines.exact import (
    pass_count_pmf as pass_count_pmf,
)
from ._engines.exact import (
    pass_count_pmfs as pass_count_pmfs,
)
from ._engines.montecarlo import (
    CHUNK_VERDICTS as CHUNK_VERDICTS,
)
from ._engines.montecarlo import (
    SKIP_BELOW as SKIP_BELOW,
)
from ._engines.montecarlo import (
    PassCountSample as PassCountSample,
)
from ._engines.montecarlo import (
    SeedLike as SeedLike,
)
from ._engines.montecarlo import (
    simulate_pass_counts as simulate_pass_counts,
)
from ._model.gates import (
    Gate as Gate,
)
from ._model.gates import (
    as_gates as as_gates,
)
from ._model.gates import (
    equivalent_gates as equivalent_gates,
)
from ._model.gates import (
    parse_gate as parse_gate,
)
from ._model.gates import (
    parse_gates as parse_gates,
)
from ._model.regression import (
    REGRESSION_HELP as REGRESSION_HELP,
)
from ._model.regression import (
    Regression as Regression,
)
from ._model.regression import (
    parse_regression as parse_regression,
)
from ._model.spec import (
    SPEC_FORMAT as SPEC_FORMAT,
)
from ._model.spec import (
    SpecError as SpecError,
)
from ._model.spec import (
    SuiteSpec as SuiteSpec,
)
from ._model.spec import (
    load_spec as load_spec,
)
from ._model.spec import (
    load_suite as load_suite,
)
from ._model.spec import (
    spec_from_data as spec_from_data,
)
from ._model.spec import (
    suite_from_spec as suite_from_spec,
)
from ._model.spec import (
    suite_to_spec as suite_to_spec,
)
from ._model.suite import (
    BUILDS as BUILDS,
)
from ._model.suite import (
    Check as Check,
)
from ._model.suite import (
    JudgeNoise as JudgeNoise,
)
from ._model.suite import (
    Suite as Suite,
)
from ._model.suite import (
    beta_shape as beta_shape,
)
from ._model.suite import (
    case_fail_probabilities as case_fail_probabilities,
)
from ._model.suite import (
    case_pass_probabilities as case_pass_probabilities,
)
from ._render.calibrate import (
    render_calibration as render_calibration,
)
from ._render.check import (
    CHECK_FORMATS as CHECK_FORMATS,
)
from ._render.check import (
    render_check as render_check,
)
from ._render.plans import (
    render_plans as render_plans,
)
from ._render.policies import (
    render_policies as render_policies,
)
from ._render.recommend import (
    render_recommendation as render_recommendation,
)
from ._render.simulate import (
    render as render,
)
from .readers import (
    INPUT_FORMATS as INPUT_FORMATS,
)
from .readers import (
    FileRead as FileRead,
)
from .readers import (
    ReadOptions as ReadOptions,
)
from .readers import (
    RunsData as RunsData,
)
from .readers import (
    RunsError as RunsError,
)
from .readers import (
    Skip as Skip,
)
from .readers import (
    Verdict as Verdict,
)
from .readers import (
    detect_format as detect_format,
)
from .readers import (
    read_runs as read_runs,
)

__version__: str
