"""Judges: a recording stub, a deterministic word-overlap judge, a seeded flaky judge,
the verdict normaliser, and a live judge on any OpenAI-compatible endpoint."""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import re
import time
from typing import Any

from gatecal.evaluators._types import Judge, JudgeCall, JudgeError, JudgeUsage, ask

__all__ = [
    "READINGS",
    "FlakyJudge",
    "OpenAIJudge",
    "RecordingJudge",
    "RuleBasedJudge",
    "VerdictNormalizingJudge",
    "call_seed",
    "content_words",
    "normalize_verdict",
    "overlap",
    "read_reply",
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


READINGS = ("strict", "lenient")


def read_reply(reply: str, reading: str = "strict") -> str | None:
    """What a reply says under one reading: ``"yes"``, ``"no"``, or None (unparseable).

    ``strict`` is Spring AI's reading: the stripped reply, any case, must be exactly yes or
    no (the evaluators fail anything but yes, so an unparseable reply is a fail there).
    ``lenient`` reads the first word, punctuation stripped, as :func:`normalize_verdict`
    does: ``"Yes."`` and ``"**No**, the claim..."`` are read, ``"The answer is yes"`` is not.
    """
    if reading == "strict":
        word = reply.strip().lower()
    elif reading == "lenient":
        word = normalize_verdict(reply)
    else:
        raise ValueError(f"`reading` must be one of {', '.join(READINGS)} (got {reading!r})")
    return word if word in ("yes", "no") else None


_SEED_RANGE = 2**31 - 1  # positive, below llama.cpp's "random seed" value 2**32 - 1


def call_seed(root: int, prompt: str, repeat: int) -> int:
    """The sampling seed of the `repeat`-th call (from 0) of `prompt` under the root seed.

    A hash (BLAKE2b) of the three, reduced to [0, 2**31 - 1): a function of what is asked
    and how often, not of the order of the calls, so a case-major and a run-major loop
    send the same seeds, and different prompts draw unrelated seeds (one seed reused for
    every call would correlate the verdicts of different cases). The system message is
    not part of it.
    """
    if isinstance(root, bool) or not isinstance(root, int) or root < 0:
        raise ValueError(f"`seed` must be a whole number >= 0 (got {root!r})")
    digest = hashlib.blake2b(
        f"{root}\x00{repeat}\x00{prompt}".encode(), digest_size=8, person=b"gatecal-seed"
    ).digest()
    return int.from_bytes(digest, "big") % _SEED_RANGE


# The statuses the official client itself retries: timeouts, conflicts, rate limits and
# server errors; anything else (a bad request, a wrong key) fails at once.
_RETRY_STATUS = frozenset({408, 409, 429})


class OpenAIJudge:
    """A real judge: one chat-completions call per prompt, with the official ``openai`` client.

    Works with any OpenAI-compatible endpoint through `base_url` (a local server,
    a gateway, another provider). Needs ``openai`` (``pip install openai``,
    gatecal's extra ``live``). The prompt is sent as the one user message, after an
    optional system message; the reply is the first choice's text.

    Sampling: `temperature` (0 by default), `max_tokens` (None: the endpoint's default)
    and `seed`: None sends no seed; a whole number is the root from which each call's
    seed is derived by :func:`call_seed` (the prompt and how often it was asked before).

    Failures: an attempt is bounded in wall time, not per read: it gives up once
    `timeout` seconds (20 by default) have passed since it began and the endpoint sends
    its next bytes, and no wait for bytes is longer than `timeout`, so one attempt ends
    within twice `timeout` whatever the endpoint does (a reply dripping a byte every half
    second ends at about `timeout` plus half a second). A reply longer than
    `max_reply_bytes` (1 MB by default) is cut off there and is an error: neither it nor
    any part of it is kept. A timeout, a lost connection, HTTP 408, 409, 429 or 5xx is
    retried `max_retries` times (once), after `retry_wait` seconds doubled each time.
    Anything else (a bad request, a wrong key, a 200 reply that is not a chat completion:
    not JSON, not UTF-8, HTML), or the last failure, raises :class:`JudgeError`; a reply
    without text is one too. Never a guessed verdict.

    Secrets: the API key never appears in an error, the history or anything written from
    them; where an endpoint echoes it (whole, or any 8 characters of it in a row), that
    part of its message is replaced by ``[redacted]``, as is a password in `base_url`.

    Every call, reply or failure, is kept in :attr:`history` as a :class:`JudgeCall`
    (prompt, seed, reply, attempts, seconds, token usage, finish reason, model).
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
        max_tokens: int | None = None,
        seed: int | None = None,
        retry_wait: float = 0.5,
        max_reply_bytes: int = 1_000_000,
    ) -> None:
        try:
            from openai import OpenAI
        except ImportError as exc:  # pragma: no cover - depends on the environment
            msg = "OpenAIJudge needs the 'openai' package: pip install openai (the extra 'live')"
            raise ImportError(msg) from exc
        _check_number("temperature", temperature, 0.0, 2.0)
        _check_number("timeout", timeout, 0.0, 3600.0, open_low=True)
        _check_number("retry_wait", retry_wait, 0.0, 60.0)
        _check_whole("max_retries", max_retries, 0)
        _check_whole("max_reply_bytes", max_reply_bytes, 1)
        if max_tokens is not None:
            _check_whole("max_tokens", max_tokens, 1)
        if seed is not None:
            call_seed(seed, "", 0)  # the same rule, the same message
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise ValueError("OpenAIJudge needs `api_key` or OPENAI_API_KEY (got neither)")
            key = "unused"  # local OpenAI-compatible servers often need no key
        self.model = model
        self.temperature = float(temperature)
        self.system = system
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.seed = seed
        self.retry_wait = float(retry_wait)
        self.max_reply_bytes = max_reply_bytes
        self._secrets = _secrets(key, base_url)
        # the client retries nothing: every attempt is counted and kept here; its HTTP
        # client bounds each attempt's wall time and the reply's size
        self.client: Any = OpenAI(
            base_url=base_url,
            api_key=key,
            timeout=timeout,
            max_retries=0,
            http_client=_bounded_http_client(float(timeout), max_reply_bytes),
        )
        self.history: list[JudgeCall] = []
        self._asked: dict[str, int] = {}

    @property
    def calls(self) -> int:
        """Prompts sent so far (replies and failures)."""
        return len(self.history)

    @property
    def last_call(self) -> JudgeCall:
        """The most recent call (an error before the first)."""
        if not self.history:
            raise JudgeError("the judge has not been called yet")
        return self.history[-1]

    def __call__(self, prompt: str) -> str:
        import openai

        key = hashlib.sha256(prompt.encode()).hexdigest()
        repeat = self._asked.get(key, 0)
        self._asked[key] = repeat + 1
        seed = None if self.seed is None else call_seed(self.seed, prompt, repeat)
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": prompt})
        options: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            options["max_tokens"] = self.max_tokens
        if seed is not None:
            options["seed"] = seed
        started = time.monotonic()
        attempts = 0
        error = ""
        while True:
            attempts += 1
            try:
                completion = self.client.chat.completions.create(
                    model=self.model, messages=messages, **options
                )
                reply, error, extra = _read_completion(completion)
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                error = _redact(_describe(exc, self.max_reply_bytes), self._secrets)
                too_large = isinstance(exc.__cause__, ReplyTooLarge)
                retry = not too_large and (
                    not isinstance(exc, openai.APIStatusError)
                    or (exc.status_code in _RETRY_STATUS or exc.status_code >= 500)
                )
                if retry and attempts <= self.max_retries:
                    time.sleep(self.retry_wait * 2 ** (attempts - 1))
                    continue
            except ReplyTooLarge:
                error = f"the endpoint's reply is longer than {self.max_reply_bytes:,} bytes"
            except Exception as exc:  # a 200 that is no chat completion: never a crash
                error = _redact(
                    "the endpoint's reply is not a chat completion "
                    f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})",
                    self._secrets,
                )
            else:
                error = _redact(error, self._secrets)
                if reply is not None:
                    self.history.append(JudgeCall(
                        prompt, repeat, seed, self.temperature, self.max_tokens, reply, None,
                        attempts, time.monotonic() - started, **extra,
                    ))  # fmt: skip
                    return reply
            self.history.append(JudgeCall(
                prompt, repeat, seed, self.temperature, self.max_tokens, None, error,
                attempts, time.monotonic() - started,
            ))  # fmt: skip
            raise JudgeError(error if attempts == 1 else f"{error} (after {attempts} attempts)")


class ReplyTooLarge(Exception):
    """A reply longer than the judge's `max_reply_bytes`: read no further."""


def _bounded_http_client(timeout: float, max_bytes: int) -> Any:
    """The openai client's HTTP client, each request bounded in wall time (`timeout`
    seconds from its start, checked as bytes arrive; each wait for bytes is at most
    `timeout` too) and its reply in size (`max_bytes`). The HTTP library is the one the
    installed openai client speaks (httpx2, or httpx before it)."""
    import importlib
    import importlib.util

    name = "httpx2" if importlib.util.find_spec("openai._httpx2") else "httpx"
    hx: Any = importlib.import_module(name)

    class Bounded(hx.SyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any, request: Any, deadline: float) -> None:
            self.inner, self.request, self.deadline = inner, request, deadline

        def __iter__(self) -> Any:
            size = 0
            for chunk in self.inner:
                size += len(chunk)
                if size > max_bytes:
                    raise ReplyTooLarge(max_bytes)
                if time.monotonic() > self.deadline:
                    raise hx.ReadTimeout(
                        f"no whole reply within {timeout:g} s", request=self.request
                    )
                yield chunk

        def close(self) -> None:
            self.inner.close()

    class Transport(hx.HTTPTransport):  # type: ignore[misc]
        def handle_request(self, request: Any) -> Any:
            deadline = time.monotonic() + timeout
            response = super().handle_request(request)
            response.stream = Bounded(response.stream, request, deadline)
            return response

    class Client(hx.Client):  # type: ignore[misc]
        def __del__(self) -> None:  # as the openai client's own: no socket left open
            with contextlib.suppress(Exception):
                self.close()

    return Client(transport=Transport(), timeout=timeout)


_REDACTED = "[redacted]"
#: Characters of a secret in a row that count as echoing it.
_ECHO = 8


def _secrets(key: str, base_url: str | None) -> tuple[str, ...]:
    """What must never be shown: the API key (unless the placeholder for none), and a
    password in `base_url`."""
    from urllib.parse import urlsplit

    found = [key] if key and key != "unused" else []
    if base_url:
        try:
            password = urlsplit(base_url).password
        except ValueError:
            password = None
        if password:
            found.append(password)
    return tuple(found)


def _redact(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with every secret, and every run of at least 8 of its characters in a row
    (an endpoint's partial echo), replaced by ``[redacted]``."""
    if not text:
        return text
    covered = [False] * len(text)
    for secret in secrets:
        width = min(_ECHO, len(secret))
        pieces = {secret[i : i + width] for i in range(len(secret) - width + 1)}
        for piece in pieces:
            at = text.find(piece)
            while at >= 0:
                covered[at : at + width] = [True] * width
                at = text.find(piece, at + 1)
    if not any(covered):
        return text
    out, i = [], 0
    while i < len(text):
        if covered[i]:
            while i < len(text) and covered[i]:
                i += 1
            out.append(_REDACTED)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _describe(exc: Exception, max_bytes: int = 0) -> str:
    import openai

    if isinstance(exc.__cause__, ReplyTooLarge):
        return f"the endpoint's reply is longer than {max_bytes:,} bytes"
    if isinstance(exc, openai.APITimeoutError):
        return "the endpoint did not answer in time (APITimeoutError)"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body.get("error", exc.body) if isinstance(exc.body, dict) else None
        said = body.get("message") if isinstance(body, dict) else None
        tail = f": {' '.join(said.split())[:200]}" if isinstance(said, str) and said else ""
        return f"the endpoint answered HTTP {exc.status_code} ({type(exc).__name__}){tail}"
    return f"the endpoint could not be reached ({type(exc).__name__}: {exc})"


def _read_completion(completion: Any) -> tuple[str | None, str, dict[str, Any]]:
    """(reply, error, the call's usage, finish reason and model) of one completion."""
    if isinstance(completion, str | bytes) or not hasattr(completion, "choices"):
        return None, "the endpoint's reply is not a chat completion (not JSON)", {}
    if not completion.choices:
        return None, "the endpoint returned no choices", {}
    choice = completion.choices[0]
    content = choice.message.content
    if not isinstance(content, str):
        return None, f"the endpoint returned no text (got {content!r})", {}
    usage = None
    if completion.usage is not None:
        details = getattr(completion.usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        usage = JudgeUsage(
            completion.usage.prompt_tokens,
            completion.usage.completion_tokens,
            completion.usage.total_tokens,
            cached if isinstance(cached, int) else None,
        )
    extra = {"usage": usage, "finish_reason": choice.finish_reason, "model": completion.model}
    return content, "", extra


def _check_number(
    name: str, value: object, low: float, high: float, *, open_low: bool = False
) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and not (low < value <= high if open_low else low <= value <= high):  # type: ignore[operator]
        ok = False
    if not ok:  # NaN fails the comparisons too
        where = f"({low:g}, {high:g}]" if open_low else f"[{low:g}, {high:g}]"
        raise ValueError(f"`{name}` must be a number in {where} (got {value!r})")


def _check_whole(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"`{name}` must be a whole number >= {low} (got {value!r})")
