"""`{% host_minimums_checks server as checks %}`: a rental platform's host minimums against the server, for
the server page's include (templates/deployment/_minimums.html), read from the selector."""

from __future__ import annotations

from django import template

from builds.models import Server
from deployment.minimum_selectors import PlatformCheck, host_minimums_checks

register = template.Library()


@register.simple_tag(name="host_minimums_checks")
def host_minimums_checks_tag(server: Server) -> list[PlatformCheck]:
    return host_minimums_checks(server=server)
