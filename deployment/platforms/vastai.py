"""Vast.ai's host REST API (https://console.vast.ai/api/v0), read with the standard library.

The two reads and their fields are the ones Vast.ai's open-source CLI uses (github.com/vast-ai/vast-cli,
`vastai show machines` and `vastai show earnings`) and its API reference documents
(docs.vast.ai/api-reference): the key goes as `Authorization: Bearer <key>`, never in the URL.

- `GET /machines/?owner=me` → `{"machines": [...]}`, one object per hosted machine: `id` (also
  `machine_id`), `hostname`, `verification` (verified / unverified / deverified), `reliability2` (a
  fraction), `dlperf` where sent, `listed`, `timeout`, `current_rentals_running`, `num_gpus`, `gpu_name` …
- `GET /users/me/machine-earnings?owner=me&sday=…&eday=…` (days since the Unix epoch, as the CLI sends
  them) → `{"summary": …, "current": …, "per_machine": [{"machine_id", "gpu_earn", "sto_earn",
  "bwu_earn", "bwd_earn"}], "per_day": […]}`, in US dollars. One request per calendar month gives each
  machine's month.

How the rental state is derived (`rental_state`): offline when the machine's `timeout` is above 0 (the
platform has lost the machine's daemon for that long; host monitors such as begna112/vast-monitor alert on
it), else rented while `current_rentals_running` is above 0, else idle while `listed`, else unknown.
"""

from __future__ import annotations

import datetime
import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from decimal import Decimal, InvalidOperation
from typing import Any

from django.conf import settings

from deployment.choices import RentalState, Verification
from deployment.platforms.base import (
    MachineEarning,
    MachineState,
    PlatformKeyRefused,
    PlatformUnavailable,
    months,
)

#: Vast.ai pays hosts in US dollars.
CURRENCY = "USD"
#: A larger answer is not one of the documented reads (a host with thousands of machines is ~10 MB).
MAX_BODY_BYTES = 20 * 1024 * 1024
_DAY_S = 86400
_EARNING_PARTS = ("gpu_earn", "sto_earn", "bwu_earn", "bwd_earn")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect would carry the Authorization header to wherever it points: refuse it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _decimal(value: Any, quantum: str) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        return None
    return number.quantize(Decimal(quantum)) if number.is_finite() else None


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def rental_state(row: dict[str, Any]) -> str:
    """The `RentalState` of one machine object of `GET /machines/` (the rule in the module docstring)."""
    if _int(row.get("timeout")) > 0:
        return RentalState.OFFLINE
    if _int(row.get("current_rentals_running")) > 0:
        return RentalState.RENTED
    if row.get("listed"):
        return RentalState.IDLE
    return RentalState.UNKNOWN


def machine_state(row: dict[str, Any]) -> MachineState:
    """One machine object of `GET /machines/` as a `MachineState`. An unknown verification value counts as
    unverified; a reliability outside 0…1 or not a number counts as not reported."""
    identifier = row.get("id", row.get("machine_id"))
    if identifier is None or isinstance(identifier, bool):
        raise PlatformUnavailable("Vast.ai sent a machine without an id.")
    verification = row.get("verification")
    if verification not in Verification.values:
        verification = Verification.UNVERIFIED
    reliability = _decimal(row.get("reliability2"), "0.0001")
    if reliability is not None and not 0 <= reliability <= 1:
        reliability = None
    num_gpus = row.get("num_gpus")
    return MachineState(
        machine_id=str(identifier),
        hostname=str(row.get("hostname") or ""),
        verification=str(verification),
        reliability=reliability,
        dlperf=_decimal(row.get("dlperf"), "0.01"),
        rental_state=rental_state(row),
        listed=bool(row.get("listed")),
        num_gpus=num_gpus if isinstance(num_gpus, int) and not isinstance(num_gpus, bool) else None,
        gpu_name=str(row.get("gpu_name") or ""),
    )


class VastAiClient:
    """Vast.ai's host API with one account's key: `machines()` and `earnings()` (`base.PlatformClient`).

    Every failure is a `PlatformUnavailable` (unreachable, a timeout, an HTTP error, a redirect, a body
    that is not the documented JSON) or, for HTTP 401/403, a `PlatformKeyRefused`; no message carries the
    key. The base URL is `WERKBANK_VASTAI_API_URL`, the timeout per request `WERKBANK_VASTAI_TIMEOUT_S`.
    """

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout_s: float | None = None) -> None:
        self._api_key = api_key
        self.base_url = (base_url or settings.WERKBANK_VASTAI_API_URL).rstrip("/")
        self.timeout_s = float(timeout_s if timeout_s is not None else settings.WERKBANK_VASTAI_TIMEOUT_S)
        self._opener = urllib.request.build_opener(_NoRedirect)

    def __repr__(self) -> str:  # never the key
        return f"VastAiClient(base_url={self.base_url!r})"

    def _get(self, path: str, query: dict[str, Any]) -> Any:
        url = f"{self.base_url}{path}?{urllib.parse.urlencode(query)}"
        request = urllib.request.Request(
            url,
            headers={
                "Authorization": f"Bearer {self._api_key}",
                "Accept": "application/json",
                "User-Agent": "werkbank-platform-poll",
            },
        )
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                body = response.read(MAX_BODY_BYTES + 1)
        except urllib.error.HTTPError as error:
            error.close()
            if error.code in (401, 403):
                raise PlatformKeyRefused(
                    f"Vast.ai refused the account's API key (HTTP {error.code} on {path})."
                ) from None
            raise PlatformUnavailable(f"Vast.ai answered HTTP {error.code} on {path}.") from None
        except TimeoutError:
            raise PlatformUnavailable(f"Vast.ai did not answer {path} within {self.timeout_s:g} s.") from None
        except urllib.error.URLError as error:
            reason = error.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise PlatformUnavailable(
                    f"Vast.ai did not answer {path} within {self.timeout_s:g} s."
                ) from None
            raise PlatformUnavailable(f"Vast.ai is unreachable ({reason}).") from None
        except (http.client.HTTPException, OSError) as error:
            raise PlatformUnavailable(
                f"Vast.ai broke off the answer to {path} ({type(error).__name__})."
            ) from None
        if len(body) > MAX_BODY_BYTES:
            raise PlatformUnavailable(f"Vast.ai's answer to {path} exceeds {MAX_BODY_BYTES} bytes.")
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise PlatformUnavailable(f"Vast.ai's answer to {path} is not JSON.") from None

    def machines(self) -> list[MachineState]:
        data = self._get("/machines/", {"owner": "me"})
        rows = data.get("machines") if isinstance(data, dict) else None
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise PlatformUnavailable('Vast.ai\'s answer to /machines/ has no "machines" list.')
        return [machine_state(row) for row in rows]

    def earnings(self, *, month_from: datetime.date, month_to: datetime.date) -> list[MachineEarning]:
        found: list[MachineEarning] = []
        for first in months(month_from, month_to):
            following = (first + datetime.timedelta(days=32)).replace(day=1)
            start, end = (
                datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC).timestamp() / _DAY_S
                for day in (first, following)
            )
            data = self._get("/users/me/machine-earnings", {"owner": "me", "sday": start, "eday": end})
            rows = data.get("per_machine", []) if isinstance(data, dict) else None
            if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
                raise PlatformUnavailable(
                    'Vast.ai\'s answer to /users/me/machine-earnings has no "per_machine" list.'
                )
            for row in rows:
                if row.get("machine_id") is None:
                    continue
                parts = [_decimal(row.get(part) or 0, "0.000001") or Decimal(0) for part in _EARNING_PARTS]
                found.append(
                    MachineEarning(
                        machine_id=str(row["machine_id"]),
                        month=first,
                        amount=sum(parts, Decimal(0)),
                        currency=CURRENCY,
                    )
                )
        return found
