"""Requests, responses and the two protocols: an evaluator, and a judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "EvaluationRequest",
    "EvaluationResponse",
    "Evaluator",
    "Judge",
    "JudgeCall",
    "JudgeError",
    "JudgeUsage",
]


class JudgeError(RuntimeError):
    """A judge failed to give a reply (raised, or returned something that is not text)."""


@dataclass(frozen=True, slots=True)
class JudgeUsage:
    """The tokens one judge call cost, as the endpoint reported them.

    Attributes
    ----------
    prompt_tokens, completion_tokens, total_tokens : int
        As in the chat-completions ``usage`` object.
    cached_tokens : int or None
        Prompt tokens served from the endpoint's prompt cache, when it says
        (``usage.prompt_tokens_details.cached_tokens``).
    """

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class JudgeCall:
    """One call of a live judge, kept whether it gave a reply or failed.

    Attributes
    ----------
    prompt : str
        The user message sent.
    repeat : int
        How many times this judge had been asked this same prompt before (0 the first time).
    seed : int or None
        The sampling seed sent with the call (None: none sent).
    temperature : float
    max_tokens : int or None
        The reply's token limit sent (None: the endpoint's default).
    reply : str or None
        The reply's text; None when the call failed.
    error : str or None
        Why the call failed after every attempt (None when it gave a reply).
    attempts : int
        Requests made (1 + retries used).
    seconds : float
        Wall time of the call, every attempt and wait between them included.
    usage : JudgeUsage or None
        The tokens of the successful attempt, when the endpoint reported them.
    finish_reason : str or None
        ``"stop"``, or ``"length"`` when `max_tokens` cut the reply short.
    model : str or None
        The model the endpoint says answered.
    """

    prompt: str
    repeat: int
    seed: int | None
    temperature: float
    max_tokens: int | None
    reply: str | None
    error: str | None
    attempts: int
    seconds: float
    usage: JudgeUsage | None = None
    finish_reason: str | None = None
    model: str | None = None

    @property
    def ok(self) -> bool:
        """The call gave a reply."""
        return self.error is None


class Judge(Protocol):
    """Anything that answers a prompt with text: ``judge(prompt) -> reply``."""

    def __call__(self, prompt: str, /) -> str: ...


@dataclass(frozen=True, slots=True)
class EvaluationRequest:
    """What an evaluator judges: the question, the documents shown, and the answer.

    As in Spring AI, there are three ways to build one: question and answer
    (:meth:`from_question`), documents and answer (:meth:`from_documents`), or all
    three (the constructor).

    Attributes
    ----------
    question : str
        The user's question ("" when built from documents only).
    documents : tuple of str
        The context documents the application was given.
    answer : str
        The application's answer.
    """

    question: str
    documents: tuple[str, ...]
    answer: str

    def __post_init__(self) -> None:
        if not isinstance(self.question, str):
            raise TypeError(f"`question` must be a string (got {self.question!r})")
        if not isinstance(self.answer, str):
            raise TypeError(f"`answer` must be a string (got {self.answer!r})")
        docs = self.documents
        if isinstance(docs, str) or not all(isinstance(d, str) for d in docs):
            raise TypeError(f"`documents` must be a sequence of strings (got {docs!r})")
        object.__setattr__(self, "documents", tuple(docs))

    @classmethod
    def from_question(cls, question: str, answer: str) -> EvaluationRequest:
        """A request with no documents."""
        return cls(question, (), answer)

    @classmethod
    def from_documents(cls, documents: Sequence[str], answer: str) -> EvaluationRequest:
        """A request with no question."""
        return cls("", tuple(documents), answer)

    def supporting_data(self) -> str:
        """The documents joined by a bare line break, as Spring AI's evaluators send them.

        No numbering and no source names, so a judge cannot say which document
        disagreed.
        """
        return "\n".join(self.documents)


@dataclass(frozen=True, slots=True)
class EvaluationResponse:
    """An evaluator's verdict.

    Attributes
    ----------
    passed : bool
        The verdict.
    score : float
        A number in [0, 1]; what it means depends on the evaluator.
    feedback : str
        Why, where the evaluator can tell.
    metadata : Mapping
        Anything else (grades, per-evaluator verdicts).
    """

    passed: bool
    score: float = 0.0
    feedback: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)


class Evaluator(Protocol):
    """One method: judge a request."""

    def evaluate(self, request: EvaluationRequest, /) -> EvaluationResponse: ...


def ask(judge: Judge, prompt: str) -> str:
    """Call `judge`; a judge that raises or replies with something other than text is an error.

    Never guessed into a pass: the caller sees :class:`JudgeError`.
    """
    try:
        reply = judge(prompt)
    except Exception as exc:
        raise JudgeError(f"the judge raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(reply, str):
        raise JudgeError(f"the judge must reply with text (got {reply!r})")
    return reply
