"""OpenAIJudge against a hostile endpoint on 127.0.0.1, the official openai client on the
wire: every failure is a JudgeError kept in the history, the key never shows, an attempt
is bounded in wall time and a reply in size.

Before: an endpoint echoing the key put it verbatim into the JudgeError and the history;
a 200 reply that is not JSON, not UTF-8 or HTML raised JSONDecodeError, UnicodeDecodeError
or AttributeError with no history entry; a reply dripping a byte every half second held
an attempt with ``timeout=2`` for 21-32 s; a 50 MB reply was kept whole.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("openai")

from gatecal import evaluators as ev

KEY = "sk-test-5f3c9a0b7e1d2468ace0"


def _completion(content: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1767225600, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }).encode()  # fmt: skip


class Hostile(ThreadingHTTPServer):
    """Answers every request by `mode`; `cut` is set when the client hung up mid-reply."""

    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.cut = threading.Event()
        self.requests = 0

    def handle_error(self, request, client_address):
        pass  # a client that gave up closed the socket: expected here

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: Hostile

    def do_POST(self):  # http.server calls this by name
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests += 1
        mode = self.server.mode
        status, kind, body = 200, "application/json", _completion("yes")
        if mode in ("echo-401", "echo-500"):
            status = int(mode[-3:])
            said = f"Incorrect API key provided: {KEY}; partial {KEY[3:15]}"
            body = json.dumps({"error": {"message": said, "key": KEY}}).encode()
        elif mode == "not-json":
            body = b"this is not json"
        elif mode == "not-utf8":
            body = b'{"choices": "\xff\xfe\xfd"}'
        elif mode == "html":
            kind, body = "text/html", b"<html><body>Bad gateway</body></html>"
        elif mode == "huge":
            body = _completion("x" * 5_000_000)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode != "drip":
            self.wfile.write(body)
            return
        try:
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(0.1)
        except OSError:
            self.server.cut.set()

    def log_message(self, *args):
        pass


@pytest.fixture
def hostile() -> Iterator:
    servers: list[Hostile] = []

    def start(mode: str) -> Hostile:
        server = Hostile(mode)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", ["echo-401", "echo-500"])
def test_an_echoed_key_never_shows(hostile, mode):
    server = hostile(mode)
    judge = ev.OpenAIJudge("m", base_url=server.base_url, api_key=KEY, retry_wait=0)
    with pytest.raises(ev.JudgeError) as caught:
        judge("p")
    shown = [str(caught.value), repr(judge.history), judge.last_call.error or ""]
    for text in shown:
        assert KEY not in text and KEY[3:15] not in text and KEY[-8:] not in text
    assert "[redacted]" in str(caught.value)
    assert f"HTTP {mode[-3:]}" in str(caught.value)


def test_a_password_in_the_base_url_is_a_secret_too():
    from gatecal.evaluators._judges import _redact, _secrets

    secrets = _secrets("unused", "http://user:hunter2hunter2@127.0.0.1:9/v1")
    assert _redact("could not reach http://user:hunter2hunter2@host", secrets) == (
        "could not reach http://user:[redacted]@host"
    )
    assert _redact("nothing secret", secrets) == "nothing secret"


@pytest.mark.parametrize("mode", ["not-json", "not-utf8", "html"])
def test_a_200_that_is_no_chat_completion_is_a_judge_error_in_the_history(hostile, mode):
    server = hostile(mode)
    judge = ev.OpenAIJudge("m", base_url=server.base_url, retry_wait=0)
    with pytest.raises(ev.JudgeError, match="not a chat completion"):
        judge("p")
    assert judge.calls == 1 and not judge.last_call.ok
    assert "not a chat completion" in (judge.last_call.error or "")


def test_a_dripping_reply_is_cut_at_the_attempts_wall_time(hostile):
    """About 250 bytes at one per 0.1 s: 25 s whole. Each read is quick, so a per-read
    timeout never fires; the attempt's wall time must. The server sees the client hang up
    before the reply is whole."""
    server = hostile("drip")
    judge = ev.OpenAIJudge("m", base_url=server.base_url, timeout=1.0, max_retries=0)
    with pytest.raises(ev.JudgeError, match="did not answer in time"):
        judge("p")
    assert server.cut.wait(10), "the client read the dripping reply to its end"
    assert judge.last_call.seconds < 12.5  # half the drip: generous, not a benchmark


def test_a_huge_reply_is_cut_at_the_cap_and_not_kept(hostile):
    server = hostile("huge")
    judge = ev.OpenAIJudge("m", base_url=server.base_url, max_reply_bytes=100_000)
    with pytest.raises(ev.JudgeError, match=r"longer than 100,000 bytes"):
        judge("p")
    assert judge.last_call.reply is None and len(repr(judge.history)) < 10_000
    assert server.requests == 1  # a reply too long is not asked for again
    judge = ev.OpenAIJudge("m", base_url=server.base_url)  # the default cap: 1 MB
    with pytest.raises(ev.JudgeError, match=r"longer than 1,000,000 bytes"):
        judge("p")


def test_the_cap_is_refused_when_not_a_whole_number():
    with pytest.raises(ValueError, match="`max_reply_bytes` must be a whole number >= 1"):
        ev.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", max_reply_bytes=0)
