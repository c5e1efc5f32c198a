"""The deployment server page's platform-poll section (`templates/deployment/_platform.html`)."""

from __future__ import annotations

from typing import Any

from django import template

from builds.models import Server
from deployment.selectors_platform import PlatformStatus, platform_status

register = template.Library()


@register.simple_tag
def server_platform_status(server: Server, user: Any) -> PlatformStatus:
    return platform_status(server=server, user=user)
