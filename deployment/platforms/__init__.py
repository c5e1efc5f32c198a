"""Clients of the rental platforms a customer's servers are listed on (seed 000: Vast.ai), behind one
interface (`base.PlatformClient`)."""

from __future__ import annotations

from deployment.choices import Platform
from deployment.platforms.base import (
    MachineEarning,
    MachineState,
    PlatformClient,
    PlatformError,
    PlatformKeyRefused,
    PlatformUnavailable,
)

__all__ = [
    "MachineEarning",
    "MachineState",
    "PlatformClient",
    "PlatformError",
    "PlatformKeyRefused",
    "PlatformUnavailable",
    "client_for",
    "pollable",
]


def pollable(platform: str) -> bool:
    """Whether Werkbank can read `platform` (today Vast.ai only)."""
    return platform == Platform.VAST_AI


def client_for(platform: str, *, api_key: str) -> PlatformClient:
    """The client of `platform` with the account's (decrypted) API key."""
    if platform == Platform.VAST_AI:
        from deployment.platforms.vastai import VastAiClient

        return VastAiClient(api_key=api_key)
    raise PlatformError(f"Werkbank cannot read {Platform(platform).label}; only Vast.ai is polled.")
