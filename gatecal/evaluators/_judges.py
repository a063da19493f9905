"""Judges: a recording stub, a deterministic word-overlap judge, a seeded flaky judge,
the verdict normaliser, and a live judge on any OpenAI-compatible endpoint."""

from __future__ import annotations

import os
import random
import re
from typing import Any

from gatecal.evaluators._types import Judge, JudgeError, ask

__all__ = [
    "FlakyJudge",
    "OpenAIJudge",
    "RecordingJudge",
    "RuleBasedJudge",
    "VerdictNormalizingJudge",
    "content_words",
    "normalize_verdict",
    "overlap",
]


class RecordingJudge:
    """A stub that keeps every prompt and always gives the same reply."""

    def __init__(self, reply: str = "yes") -> None:
        self.reply = reply
        self.prompts: list[str] = []

    @property
    def calls(self) -> int:
        """Prompts received so far."""
        return len(self.prompts)

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.reply


_STOPWORDS = frozenset(
    """a an the is are was were be been can could may might must shall should will would
    do does did to of in on at by for from with as and or but if then than that this these
    those it its i you your we our they their he she him her my me us what which who whom
    how when where why there here any all some each per into onto about after before not no
    yes so such only just also""".split()  # noqa: SIM905 - a word list reads best as text
)
_TOKEN = re.compile(r"[a-z]+|\d+(?:\.\d+)?")


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words and numbers of `text`, without stop words (and without "not")."""
    return frozenset(t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS)


def overlap(claim: str, evidence: str) -> float:
    """Share of the claim's content words that also appear in the evidence (0 if none)."""
    need = content_words(claim)
    if not need:
        return 0.0
    return len(need & content_words(evidence)) / len(need)


_RELEVANCY = re.compile(r"Response:\n(.*?)\n\nContext:\n(.*?)\n\nAnswer:", re.S)
_FACT = re.compile(r"Document:\n(.*?)\n\nClaim:\n(.*?)\n?\Z", re.S)


class RuleBasedJudge:
    """A deterministic judge that understands nothing: word overlap.

    It reads the claim and the evidence out of a relevancy prompt (response vs.
    context) or a fact-checking prompt (claim vs. document) and answers "yes" when
    at least `minimum_overlap` of the claim's content words and numbers appear in
    the evidence. So it accepts a dropped negation and swapped roles, and rejects a
    correct paraphrase or an honest refusal. It raises on any other prompt.
    """

    def __init__(self, minimum_overlap: float = 0.6) -> None:
        if not 0.0 <= minimum_overlap <= 1.0:
            raise ValueError(f"`minimum_overlap` must lie in [0, 1] (got {minimum_overlap!r})")
        self.minimum_overlap = minimum_overlap
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        relevancy = _RELEVANCY.search(prompt)
        if relevancy:
            claim, evidence = relevancy.group(1), relevancy.group(2)
        else:
            fact = _FACT.search(prompt)
            if fact is None:
                raise ValueError(f"RuleBasedJudge does not recognise this prompt: {prompt!r}")
            evidence, claim = fact.group(1), fact.group(2)
        return "yes" if overlap(claim, evidence) >= self.minimum_overlap else "no"


class FlakyJudge:
    """Wraps a judge and flips its verdict with probability `p`, from a seeded generator.

    One uniform number is drawn per call, flipped or not, so a run is repeatable
    from its seed. A reply that reads as "yes" (stripped, any case) becomes "no";
    anything else becomes "yes".
    """

    def __init__(self, judge: Judge, p: float, seed: int | None = None) -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"`p` must lie in [0, 1] (got {p!r})")
        self.judge = judge
        self.p = p
        self.rng = random.Random(seed)
        self.calls = 0
        self.flips = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        reply = ask(self.judge, prompt)
        if self.rng.random() < self.p:
            self.flips += 1
            return "no" if reply.strip().lower() == "yes" else "yes"
        return reply


_NOT_LETTER = re.compile(r"[^A-Za-z]")


def normalize_verdict(reply: str) -> str:
    """Reduce a reply to "yes" or "no" when its first word is one; else leave it alone.

    The first word, punctuation stripped, lower-cased: ``"Yes."``, ``"**Yes**"`` and
    ``"Yes, the response is in line"`` become ``"yes"``. A reply that does not begin
    with yes or no is returned untouched, so a confused judge still fails.
    """
    words = reply.split(maxsplit=1)
    first = _NOT_LETTER.sub("", words[0]).lower() if words else ""
    return first if first in ("yes", "no") else reply


class VerdictNormalizingJudge:
    """Wraps a judge and applies :func:`normalize_verdict` to each reply."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        return normalize_verdict(ask(self.judge, prompt))


class OpenAIJudge:
    """A real judge: one chat-completions call per prompt, with the official ``openai`` client.

    Works with any OpenAI-compatible endpoint through `base_url` (a local server,
    a gateway, another provider). Needs the optional extra: ``pip install
    'gatecal[live]'``. The prompt is sent as the one user message, after an
    optional system message; the reply is the first choice's text. A call gives up after
    `timeout` seconds (20 by default) and is retried `max_retries` times (once), so an
    endpoint that accepts and never answers costs at most about 40 seconds per call.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        system: str | None = None,
        timeout: float = 20.0,
        max_retries: int = 1,
    ) -> None:
        try:
            from openai import OpenAI
        except ImportError as exc:  # pragma: no cover - depends on the environment
            msg = "OpenAIJudge needs the 'openai' package: pip install 'gatecal[live]'"
            raise ImportError(msg) from exc
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise ValueError("OpenAIJudge needs `api_key` or OPENAI_API_KEY (got neither)")
            key = "unused"  # local OpenAI-compatible servers often need no key
        self.model = model
        self.temperature = temperature
        self.system = system
        self.client: Any = OpenAI(
            base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries
        )
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": prompt})
        completion = self.client.chat.completions.create(
            model=self.model, messages=messages, temperature=self.temperature
        )
        if not completion.choices:
            raise JudgeError("the endpoint returned no choices")
        content = completion.choices[0].message.content
        if not isinstance(content, str):
            raise JudgeError(f"the endpoint returned no text (got {content!r})")
        return content
