"""Upload a burn-in report to the Werkbank server with retries (``urllib`` only).

The report goes to ``POST {url}/api/v1/burnin/servers/{asset_tag}/reports/``, the server named by the
asset tag on its label. The body is the report file, gzip-compressed; the SHA-256 of the file as written
is the ``Idempotency-Key``, and the server's id for the report, so a retry (or re-running the same command
later) is safe: the server stores one report per key and answers a repeat with the stored run (HTTP 200
instead of 201).
Connection errors and 5xx answers are retried with exponential backoff; a 4xx answer stops at once
and shows the server's message, because repeating the same request cannot fix it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class UploadResult:
    """Outcome: ``ok`` with the server's status and body, or the last error and attempt count."""

    ok: bool
    status: int | None
    body: str
    attempts: int
    idempotency_key: str
    error: str | None = None
    retryable: bool = False


def endpoint(url: str, server: str) -> str:
    """``{url}/api/v1/burnin/servers/{asset_tag}/reports/``: the server is named by its asset tag."""
    return f"{url.rstrip('/')}/api/v1/burnin/servers/{urllib.parse.quote(server, safe='')}/reports/"


def _server_message(body: bytes) -> str:
    text = body.decode("utf-8", errors="replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:2000]
    if isinstance(data, dict):
        for key in ("detail", "message", "error", "errors"):
            if key in data:
                return (
                    json.dumps(data[key], ensure_ascii=False)[:2000]
                    if not isinstance(data[key], str)
                    else data[key][:2000]
                )
    return json.dumps(data, ensure_ascii=False)[:2000]


def upload(
    report_bytes: bytes,
    url: str,
    token: str,
    server: str,
    *,
    max_attempts: int = 5,
    backoff_s: float = 2.0,
    max_backoff_s: float = 120.0,
    timeout_s: float = 120.0,
    log: Callable[[str], None] = lambda _m: None,
    sleep: Callable[[float], None] = time.sleep,
) -> UploadResult:
    """POST the report; retry connection errors and 5xx with exponential backoff."""
    key = hashlib.sha256(report_bytes).hexdigest()
    body = gzip.compress(report_bytes, mtime=0)
    target = endpoint(url, server)
    headers = {
        "Authorization": f"Token {token}",
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
        "Idempotency-Key": key,
        "Accept": "application/json",
        "User-Agent": "werkbank-probe",
    }
    last_error = "no attempt made"
    for attempt in range(1, max_attempts + 1):
        request = urllib.request.Request(target, data=body, headers=headers, method="POST")
        try:
            # The URL comes from the operator's command line; http and https are both legitimate here.
            with urllib.request.urlopen(request, timeout=timeout_s) as resp:
                return UploadResult(
                    True, resp.status, resp.read().decode("utf-8", errors="replace"), attempt, key
                )
        except urllib.error.HTTPError as exc:
            message = _server_message(exc.read() or b"")
            if exc.code < 500:
                return UploadResult(
                    False,
                    exc.code,
                    message,
                    attempt,
                    key,
                    f"server rejected the upload with HTTP {exc.code}: {message}",
                    retryable=False,
                )
            last_error = f"HTTP {exc.code}: {message}"
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            last_error = f"connection failed: {reason}"
        if attempt < max_attempts:
            delay = min(backoff_s * 2 ** (attempt - 1), max_backoff_s)
            log(f"attempt {attempt}/{max_attempts} failed ({last_error}); retrying in {delay:g}s")
            sleep(delay)
    return UploadResult(
        False, None, "", max_attempts, key, f"{last_error} (after {max_attempts} attempts)", retryable=True
    )
