"""Policies from their spellings: the switch between the rules and the sequential gates."""

from __future__ import annotations

from gatecal._analyses.policies.rules import Policy
from gatecal._analyses.policies.sequential import SequentialPolicy, parse_sequential
from gatecal._common.validate import ParameterError
from gatecal._model.policy_names import policy_spellings
from gatecal._model.sequential import spellings

__all__ = ["CHECK_POLICIES", "parse_check_policy", "parse_policy"]

#: The policies `check` can apply: each combines whole runs of the current build.
CHECK_POLICIES = policy_spellings(runs=True, conjunction="or")


_POLICY_HELP = (
    f"{policy_spellings()}, "
    f"or several joined by '+' (majority-3+rerun-1); or one sequential gate: {spellings()}"
)


def parse_policy(
    text: str,
    *,
    tie: str = "fail",
    call_icc: float = 0.0,
    retry_rate: str = "shared",
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> Policy:
    """Read a policy: ``single``, ``majority-3``, ``repeat-2-of-3``, ``pass^3`` (all of 3
    repeats: ``repeat-3-of-3``), ``pass@3`` (any of 3: ``repeat-1-of-3``),
    ``confirm-2`` (a failing call asked twice more, majority decides), ``rerun-failing-1``,
    ``rerun-1``, or several joined by ``+`` (`retry_rate`: see :class:`Policy`); or one
    sequential gate
    (``sprt-5``, ``pocock-4``, ``obf-3``: a :class:`gatecal.SequentialPolicy` whose
    boundaries are searched for `false_alarm` and `detection`).

    Parameters
    ----------
    text : str
        The policy's spelling, as listed above (case is ignored).
    tie : {"fail", "pass"}, default "fail"
        What a tie of an even majority decides.
    call_icc : float, default 0.0
        The correlation between the majority calls on one check, in [0, 1).
    retry_rate : {"shared", "fresh"}, default "shared"
        Whether a rerun of failing cases shares its run's judge rate or draws its own
        (see :class:`Policy`).
    false_alarm : float, default 0.05
        A sequential gate's false-alarm budget, in [0, 1]; ignored by the other policies.
    detection : float, default 0.8
        A sequential gate's detection target, in [0, 1]; ignored by the other policies.

    Returns
    -------
    Policy
        The policy; a :class:`gatecal.SequentialPolicy` for a sequential gate.

    Raises
    ------
    ParameterError
        Named ``policy``: the text does not parse, a sequential gate is joined to another
        policy, or a count is out of range.
    """
    parts = [part.strip() for part in str(text).strip().lower().split("+")]
    sequential = [
        parse_sequential(part, false_alarm=false_alarm, detection=detection) for part in parts
    ]
    if any(sequential):
        if len(parts) > 1:
            rule = f"a sequential gate ({spellings()}) combines with no other"
            raise ParameterError("policy", rule, text)
        found = sequential[0]
        assert found is not None
        return found
    fields: dict[str, int] = {}
    for part in parts:
        if part == "single":
            continue
        pieces = part.split("-")
        try:
            if part.startswith(("pass^", "pass@")) and len(pieces) == 1:
                count = int(part[5:])  # pass^K: all K repeats pass; pass@K: any of K
                fields["repeat"], fields["need"] = count, count if part[4] == "^" else 1
            elif pieces[0] == "confirm" and len(pieces) == 2:
                fields["confirm"] = int(pieces[1])
            elif pieces[0] == "majority" and len(pieces) == 2:
                fields["majority"] = int(pieces[1])
            elif pieces[:2] == ["rerun", "failing"] and len(pieces) == 3:
                fields["rerun_failing"] = int(pieces[2])
            elif pieces[0] == "rerun" and len(pieces) == 2:
                fields["rerun"] = int(pieces[1])
            elif pieces[0] == "repeat" and len(pieces) == 4 and pieces[2] == "of":
                fields["need"], fields["repeat"] = int(pieces[1]), int(pieces[3])
            else:
                raise ValueError(part)
        except ValueError:
            raise ParameterError("policy", f"must be {_POLICY_HELP}", text) from None
    try:
        return Policy(tie=tie, call_icc=call_icc, retry_rate=retry_rate, **fields)  # type: ignore[arg-type]
    except ParameterError as exc:
        raise ParameterError("policy", f"{exc.name} {exc.rule}", text) from None


def parse_check_policy(policy: Policy | str | None) -> Policy:
    """The policy `check` applies to several current runs (None: one run, ``single``).

    Parameters
    ----------
    policy : Policy, str or None
        The policy or its spelling; ``check`` takes ``single``, ``rerun-failing-R``,
        ``rerun-R`` and ``repeat-K-of-N``, one at a time.

    Returns
    -------
    Policy
        The policy; ``single`` for None.

    Raises
    ------
    ParameterError
        Named ``policy``: it does not parse, is sequential, uses a majority or
        confirm-on-fail, or combines several of these.
    """
    if policy is None:
        return Policy()
    chosen = parse_policy(policy) if isinstance(policy, str) else policy
    _refuse_sequential(chosen, policy)
    parts = [chosen.repeat > 1, chosen.rerun_failing > 0, chosen.rerun > 0]
    if chosen.majority > 1 or sum(parts) > 1:
        text = policy if isinstance(policy, str) else chosen.describe()
        raise ParameterError("policy", f"must be {CHECK_POLICIES}: check combines whole runs", text)
    return chosen


def _refuse_sequential(chosen: Policy, given: Policy | str) -> None:
    """A sequential gate decides over runs with its own boundaries (gatecal.check_sequential);
    confirm-on-fail re-asks inside a verdict, which no run file shows."""
    if isinstance(chosen, SequentialPolicy):
        text = given if isinstance(given, str) else chosen.text
        raise ParameterError(
            "policy", "is a sequential gate: decide it with check_sequential", text
        )
    if chosen.confirm:  # re-asked calls happen inside one verdict: no run file shows them
        text = given if isinstance(given, str) else chosen.describe()
        raise ParameterError("policy", f"must be {CHECK_POLICIES}: check combines whole runs", text)
