"""``upload``: retries, idempotency key, 4xx handling and the resume message, against a local HTTP server."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from probe.upload import endpoint, upload


class Recorder:
    """Scripted answers (status, body) per attempt, and every request that arrived."""

    def __init__(self, answers: list[tuple[int, dict]]) -> None:
        self.answers = answers
        self.requests: list[dict] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder([])

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            recorder.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            index = min(len(recorder.requests), len(recorder.answers)) - 1
            status, payload = recorder.answers[index]
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", recorder
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_two_503_then_accepted(server, sample_report: dict, tmp_path: Path, run_probe) -> None:
    url, rec = server
    rec.answers = [
        (503, {"detail": "busy"}),
        (503, {"detail": "busy"}),
        (201, {"id": 17, "status": "stored"}),
    ]
    report_file = tmp_path / "report.json"
    report_file.write_text(json.dumps(sample_report))
    raw = report_file.read_bytes()
    proc = run_probe(
        [
            "upload",
            str(report_file),
            "--url",
            url + "/",
            "--token",
            "s3cret",
            "--server",
            "WB-2026-0003-01",
            "--backoff",
            "0.05",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    assert len(rec.requests) == 3
    key = hashlib.sha256(raw).hexdigest()
    for req in rec.requests:
        assert req["path"] == "/api/v1/burnin/servers/WB-2026-0003-01/reports/"
        assert req["headers"]["Authorization"] == "Token s3cret"
        assert req["headers"]["Content-Encoding"] == "gzip"
        assert req["headers"]["Content-Type"] == "application/json"
        assert req["headers"]["Idempotency-Key"] == key  # stable across attempts
        assert gzip.decompress(req["body"]) == raw
    assert proc.stderr.count("retrying in") == 2
    assert f"HTTP 201, attempt 3, Idempotency-Key {key}" in proc.stdout and '"stored"' in proc.stdout


def test_client_error_stops_at_once_with_server_message(server) -> None:
    url, rec = server
    rec.answers = [(400, {"detail": "schema_version 1.0.0 is not supported"})]
    result = upload(b'{"x": 1}', url, "t", "7", max_attempts=5, backoff_s=0.01)
    assert not result.ok and result.status == 400 and result.attempts == 1 and len(rec.requests) == 1
    assert result.error == "server rejected the upload with HTTP 400: schema_version 1.0.0 is not supported"
    assert result.retryable is False


def test_final_failure_prints_resume_message(server, sample_report: dict, tmp_path: Path, run_probe) -> None:
    url, rec = server
    rec.answers = [(502, {"detail": "bad gateway"})]
    report_file = tmp_path / "report.json"
    report_file.write_text(json.dumps(sample_report))
    proc = run_probe(
        [
            "upload",
            str(report_file),
            "--url",
            url,
            "--token",
            "t",
            "--server",
            "9",
            "--max-attempts",
            "2",
            "--backoff",
            "0.01",
        ]
    )
    assert proc.returncode == 1 and len(rec.requests) == 2
    assert "HTTP 502: bad gateway (after 2 attempts)" in proc.stderr
    assert "Re-running the same command is safe and resumes the upload" in proc.stderr
    assert hashlib.sha256(report_file.read_bytes()).hexdigest() in proc.stderr


def test_connection_refused_is_retried(tmp_path: Path) -> None:
    delays: list[float] = []
    result = upload(
        b"{}", "http://127.0.0.1:9", "t", "1", max_attempts=3, backoff_s=0.5, sleep=delays.append, timeout_s=2
    )
    assert not result.ok and result.retryable and result.attempts == 3
    assert result.error.startswith("connection failed") and delays == [0.5, 1.0]


def test_invalid_report_is_not_uploaded(server, tmp_path: Path, run_probe, repo_root: Path) -> None:
    url, rec = server
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "gpu-burnin-report"}))
    proc = run_probe(["upload", str(bad), "--url", url, "--token", "t", "--server", "1"])
    assert proc.returncode == 1 and rec.requests == []
    assert "$: required property" in proc.stderr
    env = {k: v for k, v in os.environ.items() if k != "WERKBANK_TOKEN"}
    env["PYTHONPATH"] = str(repo_root)
    env_token_missing = run_probe(["upload", str(bad), "--url", url, "--server", "1"], env=env)
    assert env_token_missing.returncode == 2 and "WERKBANK_TOKEN" in env_token_missing.stderr


def test_endpoint_names_the_server_by_its_asset_tag_quoted() -> None:
    assert (
        endpoint("https://wb.example/", "WB-2026-0003-01")
        == "https://wb.example/api/v1/burnin/servers/WB-2026-0003-01/reports/"
    )
    assert (
        endpoint("https://wb.example", "rack 3/7")
        == "https://wb.example/api/v1/burnin/servers/rack%203%2F7/reports/"
    )
