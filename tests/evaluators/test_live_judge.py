"""OpenAIJudge against a real HTTP server on 127.0.0.1 that speaks chat completions,
with the official ``openai`` client on the wire; and the nightly layer, which needs a key."""

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gatecal import evaluators as ev


class ChatCompletionsServer(ThreadingHTTPServer):
    """A minimal chat-completions endpoint: records each request, replies with `reply`."""

    def __init__(self, reply):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply = reply
        self.requests: list[dict] = []
        # one entry used per request, first to last: an HTTP status to fail with, or a
        # number of seconds to wait before answering
        self.faults: list[int | float] = []
        self.usage: dict = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}

    def handle_error(self, request, client_address):
        # a client that gave up (a timeout under test) closed the socket: expected
        if not isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
            super().handle_error(request, client_address)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: ChatCompletionsServer

    def do_POST(self):  # http.server calls this by name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "authorization": self.headers.get("Authorization"), "body": body}
        )
        fault = self.server.faults.pop(0) if self.server.faults else None
        if isinstance(fault, int):
            error = json.dumps({"error": {"code": fault, "message": f"scripted failure {fault}"}})
            self.send_response(fault)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error.encode())
            return
        if isinstance(fault, float):
            time.sleep(fault)
        content = self.server.reply(body) if callable(self.server.reply) else self.server.reply
        payload = json.dumps(
            {
                "id": f"chatcmpl-{len(self.server.requests)}",
                "object": "chat.completion",
                "created": 1767225600,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": self.server.usage,
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def server_factory() -> Iterator:
    servers = []

    def start(reply):
        server = ChatCompletionsServer(reply)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_wire_format_of_one_judge_call(server_factory):
    server = server_factory("yes")
    judge = ev.OpenAIJudge("judge-model", base_url=server.base_url, api_key="test-key")
    assert judge("Is the sky blue?") == "yes"
    assert judge.calls == 1
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer test-key"
    assert request["body"]["model"] == "judge-model"
    assert request["body"]["messages"] == [{"role": "user", "content": "Is the sky blue?"}]
    assert request["body"]["temperature"] == 0.0


def test_system_prompt_goes_first(server_factory):
    server = server_factory("no")
    judge = ev.OpenAIJudge("m", base_url=server.base_url, api_key="k", system="Answer yes or no.")
    assert judge("claim?") == "no"
    assert server.requests[0]["body"]["messages"] == [
        {"role": "system", "content": "Answer yes or no."},
        {"role": "user", "content": "claim?"},
    ]


def test_empty_content_is_an_error_not_a_pass(server_factory):
    server = server_factory(None)
    judge = ev.OpenAIJudge("m", base_url=server.base_url, api_key="k")
    with pytest.raises(ev.JudgeError, match="the endpoint returned no text"):
        ev.RelevancyEvaluator(judge).evaluate(ev.EvaluationRequest("q", ("d",), "a"))


def test_golden_run_through_the_live_judge_and_normaliser(server_factory):
    # A chatty "model" that answers from the rule-based judge, but politely: "Yes." / "No."
    rule = ev.RuleBasedJudge()
    server = server_factory(lambda body: rule(body["messages"][-1]["content"]).capitalize() + ".")
    live = ev.OpenAIJudge("m", base_url=server.base_url, api_key="k")
    raw = ev.run_golden("healthy", live)
    assert raw.pass_rate == 0.0  # "Yes." is not "yes": every judge check fails silently
    normalised = ev.run_golden("regressed", ev.VerdictNormalizingJudge(live))
    assert normalised.failed_ids() == ["refund-annual", "sso-plan", "extra-seat"]
    assert len(server.requests) == 24 + 24
    assert live.calls == 48


@pytest.mark.skipif(
    not os.environ.get("OPENAI_API_KEY"), reason="needs OPENAI_API_KEY (nightly layer)"
)
def test_real_judge_agrees_with_the_known_good_and_known_bad_builds():
    judge = ev.VerdictNormalizingJudge(
        ev.OpenAIJudge(os.environ.get("GATECAL_JUDGE_MODEL", "gpt-4o-mini"))
    )
    assert ev.run_golden("healthy", judge).pass_rate >= 0.9
    assert "extra-seat" in ev.run_golden("regressed", judge).failed_ids()


def test_golden_command_with_a_live_judge_on_loopback(server_factory, monkeypatch, capsys):
    from gatecal.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a local server needs no key
    rule = ev.RuleBasedJudge()
    server = server_factory(lambda body: "**" + rule(body["messages"][-1]["content"]) + "**")
    code = main(
        [
            "golden",
            "--build",
            "regressed",
            "--judge",
            "openai",
            "--model",
            "local",
            "--base-url",
            server.base_url,
        ]
    )
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert "failing: [refund-annual, sso-plan, extra-seat]" in out
    assert {r["body"]["model"] for r in server.requests} == {"local"}
    assert len(server.requests) == 24


def test_an_unreachable_endpoint_is_one_line_naming_the_case(monkeypatch, capsys):
    from gatecal.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["golden", "--judge", "openai", "--base-url", "http://127.0.0.1:9/v1"])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(
        "gatecal: error: golden run failed: case 'refund-annual': the judge raised"
    )


def test_no_key_and_no_endpoint_is_refused(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OpenAIJudge needs `api_key` or OPENAI_API_KEY"):
        ev.OpenAIJudge("m")


# -- sampling, seeds, readings, failures and usage -------------------------------------


def test_sampling_options_on_the_wire_only_when_asked(server_factory):
    server = server_factory("yes")
    ev.OpenAIJudge("m", base_url=server.base_url)("p")
    ev.OpenAIJudge("m", base_url=server.base_url, temperature=0.8, max_tokens=16, seed=5)("p")
    plain, tuned = (r["body"] for r in server.requests)
    assert "seed" not in plain and "max_tokens" not in plain and plain["temperature"] == 0.0
    assert (tuned["temperature"], tuned["max_tokens"]) == (0.8, 16)
    assert tuned["seed"] == ev.call_seed(5, "p", 0)


def test_call_seed_is_pinned_and_the_documented_hash():
    # python -c "import hashlib; d = hashlib.blake2b(b'20261201\x000\x00Is it?',
    #   digest_size=8, person=b'gatecal-seed').digest(); print(int.from_bytes(d, 'big') % (2**31 - 1))"
    assert ev.call_seed(20261201, "Is it?", 0) == 1164222486
    seeds = {ev.call_seed(1, f"prompt {i}", k) for i in range(200) for k in range(5)}
    assert len(seeds) == 1000 and all(0 <= x < 2**31 - 1 for x in seeds)
    assert ev.call_seed(1, "a", 0) != ev.call_seed(2, "a", 0)


def test_each_call_gets_its_own_seed_and_a_second_judge_repeats_them(server_factory):
    server = server_factory("yes")
    first = ev.OpenAIJudge("m", base_url=server.base_url, seed=11)
    for prompt in ("a", "b", "a", "a", "b"):
        first(prompt)
    sent = [(r["body"]["messages"][-1]["content"], r["body"]["seed"]) for r in server.requests]
    assert [c.repeat for c in first.history] == [0, 0, 1, 2, 1]
    assert sent == [(c.prompt, ev.call_seed(11, c.prompt, c.repeat)) for c in first.history]
    assert len({seed for _, seed in sent}) == 5  # never one seed for every call
    second = ev.OpenAIJudge("m", base_url=server.base_url, seed=11)
    for prompt in ("b", "a", "b", "a", "a"):  # another order, the same seeds per prompt
        second(prompt)
    assert sorted((c.prompt, c.repeat, c.seed) for c in second.history) == sorted(
        (c.prompt, c.repeat, c.seed) for c in first.history
    )


@pytest.mark.parametrize(
    ("reply", "strict", "lenient"),
    [
        ("yes", "yes", "yes"),
        (" YES\n", "yes", "yes"),
        ("No", "no", "no"),
        ("Yes.", None, "yes"),
        ("**No**, the claim is not supported", None, "no"),
        ("NO\n\nThe response is not in line", None, "no"),
        ("The answer is yes", None, None),
        ("Yesterday", None, None),
        ("", None, None),
    ],
)
def test_strict_and_lenient_readings(reply, strict, lenient):
    assert ev.read_reply(reply) == ev.read_reply(reply, "strict") == strict
    assert ev.read_reply(reply, "lenient") == lenient


def test_an_unknown_reading_is_refused():
    with pytest.raises(ValueError, match="`reading` must be one of strict, lenient"):
        ev.read_reply("yes", "loose")


def test_usage_finish_reason_and_model_are_kept_with_each_call(server_factory):
    server = server_factory("Yes")
    server.usage = {"prompt_tokens": 131, "completion_tokens": 2, "total_tokens": 133,
                    "prompt_tokens_details": {"cached_tokens": 130}}  # fmt: skip
    judge = ev.OpenAIJudge("judge-model", base_url=server.base_url, max_tokens=4, seed=1)
    assert judge("claim?") == "Yes"
    call = judge.last_call
    assert call.usage == ev.JudgeUsage(131, 2, 133, 130)
    assert (call.reply, call.error, call.attempts, call.ok) == ("Yes", None, 1, True)
    assert (call.finish_reason, call.model, call.max_tokens) == ("stop", "judge-model", 4)
    assert call.seed == ev.call_seed(1, "claim?", 0) and call.seconds > 0


def test_a_server_error_is_retried_and_the_attempts_counted(server_factory):
    server = server_factory("yes")
    server.faults = [500, 429]
    judge = ev.OpenAIJudge("m", base_url=server.base_url, max_retries=2, retry_wait=0)
    assert judge("p") == "yes"
    assert len(server.requests) == 3 and judge.calls == 1
    assert judge.last_call.attempts == 3 and judge.last_call.ok


def test_retries_used_up_is_an_error_kept_in_the_history(server_factory):
    server = server_factory("yes")
    server.faults = [503, 503]
    judge = ev.OpenAIJudge("m", base_url=server.base_url, max_retries=1, retry_wait=0)
    with pytest.raises(
        ev.JudgeError,
        match=r"HTTP 503 \(InternalServerError\): scripted failure 503 \(after 2 attempts\)",
    ):
        judge("p")
    call = judge.last_call
    assert (call.reply, call.attempts, call.usage, call.ok) == (None, 2, None, False)
    assert judge("p") == "yes"  # the next call is fresh
    assert [c.repeat for c in judge.history] == [0, 1]


def test_a_bad_request_is_not_retried(server_factory):
    server = server_factory("yes")
    server.faults = [400]
    judge = ev.OpenAIJudge("m", base_url=server.base_url, max_retries=3, retry_wait=0)
    with pytest.raises(
        ev.JudgeError,
        match=r"^the endpoint answered HTTP 400 \(BadRequestError\): scripted failure 400$",
    ):
        judge("p")
    assert len(server.requests) == 1 and judge.last_call.attempts == 1


def test_a_timeout_is_retried_then_an_error(server_factory):
    server = server_factory("yes")
    server.faults = [1.0, 1.0]
    judge = ev.OpenAIJudge("m", base_url=server.base_url, timeout=0.2, max_retries=1, retry_wait=0)
    with pytest.raises(
        ev.JudgeError, match=r"did not answer in time \(APITimeoutError\) \(after 2 attempts\)"
    ):
        judge("p")
    assert judge.last_call.attempts == 2 and not judge.last_call.ok


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("temperature", -0.1, "`temperature` must be a number in [0, 2] (got -0.1)"),
        ("temperature", float("nan"), "`temperature` must be a number in [0, 2] (got nan)"),
        ("max_tokens", 0, "`max_tokens` must be a whole number >= 1 (got 0)"),
        ("max_tokens", True, "`max_tokens` must be a whole number >= 1 (got True)"),
        ("seed", -1, "`seed` must be a whole number >= 0 (got -1)"),
        ("timeout", 0, "`timeout` must be a number in (0, 3600] (got 0)"),
        ("max_retries", -1, "`max_retries` must be a whole number >= 0 (got -1)"),
        ("retry_wait", "1", "`retry_wait` must be a number in [0, 60] (got '1')"),
    ],
)
def test_bad_options_are_refused(option, value, message):
    with pytest.raises(ValueError) as info:
        ev.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", **{option: value})
    assert str(info.value) == message


def _rule_reply(body):
    """The rule-based verdict, as a chatty model would put it."""
    return ev.RuleBasedJudge()(body["messages"][-1]["content"]).capitalize() + "."


def test_repeated_golden_runs_read_back_as_runs(server_factory, tmp_path):
    import gatecal

    server = server_factory(_rule_reply)
    judge = ev.OpenAIJudge("m", base_url=server.base_url, seed=3)
    verdicts = ev.repeat_golden(judge, 2)
    assert len(server.requests) == 2 * 12 * 2 * 2 and len(verdicts) == 2 * 12 * 3 * 2
    # one judge for both builds: a prompt the builds share is asked with fresh seeds
    assert len({c.seed for c in judge.history}) == len(judge.history)
    for reading, failing in (("strict", 12), ("lenient", 3)):
        path = ev.write_runs(tmp_path / f"{reading}.jsonl", ev.runs_rows(verdicts, reading))
        data = gatecal.read_runs([path])
        assert data.builds() == ["healthy", "regressed"]
        assert data.runs("healthy") == ["healthy-000", "healthy-001"]
        assert len(data.verdicts) == 144 and data.errors == data.unscored == 0
        regressed = [
            v for v in data.verdicts if v.build == "regressed" and v.run == "regressed-000"
        ]
        failed = {v.case for v in regressed if not v.passed}
        assert len(failed) == failing  # "Yes." fails every strict judge check
    # the lenient reading through the evaluators is the rule-based judge's own verdict
    assert failed == {"refund-annual", "sso-plan", "extra-seat"}
    rows = [json.loads(line) for line in (tmp_path / "lenient.jsonl").read_text().splitlines()]
    judged = [r for r in rows if r["kind"] == "judge"]
    assert {r["word"] for r in judged} == {"yes", "no"} and {r["reply"] for r in judged} == {
        "Yes.",
        "No.",
    }
    assert all(r["prompt_tokens"] == 10 and r["attempts"] == 1 for r in judged)


def test_case_major_and_run_major_send_the_same_seeds(server_factory):
    server = server_factory("yes")
    sent = {}
    for order in ev.ORDERS:
        judge = ev.OpenAIJudge("m", base_url=server.base_url, seed=9)
        verdicts = ev.repeat_golden(judge, 3, ("healthy",), order=order)
        sent[order] = [(c.prompt, c.seed) for c in judge.history]
        keyed = {(v.run, v.case, v.check): v.call.seed for v in verdicts if v.call}
        assert len(keyed) == 72
    assert sent["case-major"] != sent["run-major"]  # the order differs ...
    assert sorted(sent["case-major"]) == sorted(sent["run-major"])  # ... the seeds do not
    first = sent["case-major"]
    assert first[0][0] == first[1][0] == first[2][0]  # case-major: one prompt, three times


def test_unparseable_and_failed_calls_in_the_runs(server_factory, tmp_path):
    import gatecal

    def reply(body):
        return "Maybe." if "2 TB" in body["messages"][-1]["content"] else "yes"

    server = server_factory(reply)
    cases = ev.load_golden()[:3]  # refund-annual, refund-monthly, storage-pro
    judge = ev.OpenAIJudge("m", base_url=server.base_url, max_retries=0)
    server.faults = [400]  # the very first call fails for good
    verdicts = ev.repeat_golden(judge, 2, ("healthy",), cases=cases)
    error = [v for v in verdicts if v.call and not v.call.ok]
    assert [(v.case, v.check, v.run, v.strict, v.lenient) for v in error] == [
        ("refund-annual", "relevancy", 0, None, None)
    ]
    failed = ev.runs_rows(verdicts, "lenient")
    unscored = ev.runs_rows(verdicts, "lenient", unparseable="unscored")
    storage = [r for r in failed if r["case"] == "storage-pro" and r["kind"] == "judge"]
    assert {(r["passed"], r["status"], r["word"]) for r in storage} == {(False, "ok", None)}
    data = gatecal.read_runs([ev.write_runs(tmp_path / "u.jsonl", unscored)])
    assert (data.errors, data.unscored) == (1, 4)
    data = gatecal.read_runs([ev.write_runs(tmp_path / "f.jsonl", failed)])
    assert (data.errors, data.unscored) == (1, 0)
    assert sum(v.passed is False for v in data.verdicts) == 4


def test_the_runs_file_is_written_whole_or_not_at_all(tmp_path):
    target = tmp_path / "runs.jsonl"
    target.write_text("old\n")
    with pytest.raises(TypeError):
        ev.write_runs(target, [{"run": "r", "case": "c", "passed": True}, {"bad": object()}])
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.jsonl"]
