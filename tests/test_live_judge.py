"""OpenAIJudge against a real HTTP server on 127.0.0.1 that speaks chat completions,
with the official ``openai`` client on the wire; and the nightly layer, which needs a key."""

import json
import os
import threading
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
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
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
