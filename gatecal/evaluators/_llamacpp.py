"""A GGUF model served on loopback by llama.cpp's OpenAI-compatible server (``xllamacpp``).

``pip install xllamacpp`` (a prebuilt CPU wheel that embeds llama.cpp's HTTP server); nothing
is imported until a server starts, so ``import gatecal.evaluators`` stays light.
"""

from __future__ import annotations

import gc
import hashlib
import importlib
import json
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["LlamaServer", "sha256_of"]


def sha256_of(path: str | Path) -> str:
    """The sha256 of a file, read in 8 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(8 << 20):
            digest.update(block)
    return digest.hexdigest()


class LlamaServer:
    """Serve one GGUF file on 127.0.0.1 (a free port), as a context manager.

    ``with LlamaServer(path) as server: OpenAIJudge("m", base_url=server.base_url)``.
    One slot (`parallel`), so calls are answered one at a time and a repeated prompt reuses
    the cached prefix; `threads` CPU threads (1 by default: the cores may be shared; more
    threads on a busy machine can be slower, not faster). `context` is the context size
    in tokens. The server stops when the block ends.
    """

    def __init__(
        self, model: str | Path, *, threads: int = 1, context: int = 2048, parallel: int = 1
    ) -> None:
        for name, value in (("threads", threads), ("context", context), ("parallel", parallel)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{name}` must be a whole number >= 1 (got {value!r})")
        self.model = Path(model)
        if not self.model.is_file():
            raise FileNotFoundError(f"{self.model}: no such model file")
        self.threads = threads
        self.context = context
        self.parallel = parallel
        self._server: Any = None
        self.base_url = ""

    def __enter__(self) -> LlamaServer:
        # untyped: an optional dependency without stubs
        xllamacpp: Any = importlib.import_module("xllamacpp")
        params = xllamacpp.CommonParams()
        params.model.path = str(self.model)
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # any free port; the server says which
        params.cpuparams.n_threads = self.threads
        params.cpuparams_batch.n_threads = self.threads
        params.n_parallel = self.parallel
        params.n_ctx = self.context
        params.warmup = False
        params.endpoint_props = True
        self._server = xllamacpp.Server(params)
        address = str(self._server.listening_address).rstrip("/")
        self.base_url = f"{address}/v1"
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server = None  # the server's destructor stops its loop and frees the model
        gc.collect()

    def props(self) -> dict[str, Any]:
        """The server's ``/props``: model path, chat template, default sampling, build."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        root = self.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/props", timeout=10) as response:
            data: dict[str, Any] = json.loads(response.read())
        return data
