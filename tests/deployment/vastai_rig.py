"""A local stand-in for Vast.ai's host API: an `http.server` on 127.0.0.1 (a free port, in a thread) that
plays back the recorded responses of tests/fixtures/vastai/, with the settings pointed at it.

`rig.answer(path, fixture=..., status=..., delay_s=...)` sets what a path answers; `rig.requests` records
every request (path, query, headers) so a test can check what the client sent.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vastai"
PREFIX = "/api/v0"


@dataclass
class Answer:
    body: bytes
    status: int = 200
    delay_s: float = 0.0


@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class VastRig:
    base_url: str = ""
    answers: dict[str, Answer] = field(default_factory=dict)
    requests: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    def answer(
        self,
        path: str,
        *,
        fixture: str | None = None,
        body: Any = None,
        raw: bytes | None = None,
        status: int = 200,
        delay_s: float = 0.0,
    ) -> None:
        if fixture is not None:
            data = (FIXTURES / fixture).read_bytes()
        elif raw is not None:
            data = raw
        else:
            data = json.dumps(body if body is not None else {}).encode()
        self.answers[path] = Answer(body=data, status=status, delay_s=delay_s)

    def machines(self, fixture: str) -> None:
        self.answer("/machines/", fixture=fixture)

    def stop(self) -> None:
        """Take the server away: the next request finds nothing listening."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None


def _handler(rig: VastRig) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            path = parsed.path.removeprefix(PREFIX)
            rig.requests.append(
                Seen(path=path, query=urllib.parse.parse_qs(parsed.query), headers=dict(self.headers.items()))
            )
            answer = rig.answers.get(path) or Answer(body=b'{"error": "not_found"}', status=404)
            if answer.delay_s:
                time.sleep(answer.delay_s)
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def vastai(settings: Any):
    """The local Vast.ai, answering the baseline machines and one month of earnings, and the settings
    pointed at it with a short timeout."""
    rig = VastRig()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(rig))
    server.daemon_threads = True
    rig.server = server
    rig.base_url = f"http://127.0.0.1:{server.server_address[1]}{PREFIX}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.WERKBANK_VASTAI_API_URL = rig.base_url
    settings.WERKBANK_VASTAI_TIMEOUT_S = 0.5
    settings.WERKBANK_PLATFORM_EARNINGS_MONTHS = 1
    rig.machines("machines_verified.json")
    rig.answer("/users/me/machine-earnings", fixture="machine_earnings.json")
    yield rig
    rig.stop()
    thread.join(timeout=5)
