"""The public names of gatecal, declared once: ``gatecal/__init__.py`` loads each lazily
from the module named here (lazy_loader.attach_stub), and type checkers read them here."""

from ._analyses.calibrate import (
    read_labels as read_labels,
)
from ._analyses.check import (
    recommended_gate_from as recommended_gate_from,
)
from ._analyses.correct import (
    corrected_intervals as corrected_intervals,
)
from ._analyses.overdispersion import (
    Overdispersion as Overdispersion,
)
from ._analyses.overdispersion import (
    fit_overdispersion as fit_overdispersion,
)
from ._analyses.plan import (
    plan_suite as plan_suite,
)
from ._analyses.policies import (
    simulate_policy as simulate_policy,
)
from ._analyses.recommend import (
    recommend_gate as recommend_gate,
)
from ._analyses.simulate import (
    simulate_gates as simulate_gates,
)
from ._common.defaults import (
    DEFAULT_SEED as DEFAULT_SEED,
)
from ._common.intervals import (
    proportion_interval as proportion_interval,
)
from ._common.seeds import (
    SeedLike as SeedLike,
)
from ._common.tables import (
    format_probability as format_probability,
)
from ._common.validate import (
    ParameterError as ParameterError,
)
from ._engines.exact import (
    pass_count_pmfs as pass_count_pmfs,
)
from ._engines.montecarlo import (
    simulate_pass_counts as simulate_pass_counts,
)
from ._model.gates import (
    parse_gates as parse_gates,
)
from ._model.regression import (
    parse_regression as parse_regression,
)
from ._model.spec import (
    suite_to_spec as suite_to_spec,
)
from ._model.suite import (
    case_pass_probabilities as case_pass_probabilities,
)
from ._render.calibrate import (
    render_calibration as render_calibration,
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
    read_runs as read_runs,
)

__version__: str
