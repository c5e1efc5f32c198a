"""What the platform poll reads from a rental platform, whichever platform it is: the host's machines with
their verification, reliability, DLPerf and rental state, and the earnings per machine and month.

A platform client is anything with these two methods (`PlatformClient`); `deployment.platforms.client_for`
builds the one for a platform. Tests point the Vast.ai client at a local server that plays back recorded
responses, so no test reaches the network.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol


class PlatformError(Exception):
    """The platform could not be read. The message names the platform and what went wrong, never the key."""


class PlatformUnavailable(PlatformError):
    """The platform did not answer usefully (unreachable, a timeout, an HTTP error, a body that is not the
    JSON it documents): worth another try later."""


class PlatformKeyRefused(PlatformError):
    """The platform refused the account's API key (HTTP 401 or 403): another try with the same key is
    pointless; someone must enter a valid key."""


@dataclass(frozen=True)
class MachineState:
    """One machine as the platform reports it now. `reliability` is a fraction (0.9879 = 98.79 %); None
    for a figure the platform did not send (the poll keeps the last known value then)."""

    machine_id: str
    hostname: str
    verification: str
    reliability: Decimal | None
    dlperf: Decimal | None
    rental_state: str
    listed: bool
    num_gpus: int | None = None
    gpu_name: str = ""


@dataclass(frozen=True)
class MachineEarning:
    """One machine's earnings in one calendar month (UTC), as the platform pays them out."""

    machine_id: str
    month: datetime.date
    amount: Decimal
    currency: str
    gpu_hours: Decimal | None = None


class PlatformClient(Protocol):
    """A host's read access to a rental platform, with one account's API key."""

    def machines(self) -> list[MachineState]:
        """Every machine the account hosts on the platform."""
        ...

    def earnings(self, *, month_from: datetime.date, month_to: datetime.date) -> list[MachineEarning]:
        """Each machine's earnings per month, from `month_from`'s month to `month_to`'s, both included."""
        ...


def months(month_from: datetime.date, month_to: datetime.date) -> list[datetime.date]:
    """The first days of the months from `month_from`'s to `month_to`'s, both included."""
    first, last = month_from.replace(day=1), month_to.replace(day=1)
    found = []
    while first <= last:
        found.append(first)
        first = (first + datetime.timedelta(days=32)).replace(day=1)
    return found
