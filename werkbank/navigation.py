"""The frame's navigation, by role: the links `templates/base.html` shows to PMs, partners and customers.

The core knows no app, so entries name URL patterns; the root URL configuration provides them. An entry
whose name does not resolve is left out (tests/werkbank/test_navigation.py proves every entry resolves, so
a missing page fails CI rather than vanishing from the menu). The roles come from the session (written at
login, werkbank/i18n.py), so the menu costs no query.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

from werkbank.i18n import SESSION_ROLES

#: (role, label, URL name) in menu order. Roles: "pm", "partner", "customer" (werkbank.audiences.Audience).
ENTRIES: tuple[tuple[str, Any, str], ...] = (
    ("pm", _("Pipeline"), "pm:pipeline"),
    ("pm", _("Admin"), "admin:index"),
    ("pm", _("Bench"), "bench:list"),
    ("partner", _("Bench"), "bench:list"),
    ("customer", _("Orders"), "portal:orders"),
    ("customer", _("Warranty"), "portal:warranty"),
    ("customer", _("API tokens"), "portal:tokens"),
)


def menu(roles: list[str] | set[str]) -> list[dict[str, str]]:
    """The links for a user with these roles, each once."""
    links: list[dict[str, str]] = []
    seen: set[str] = set()
    for role, label, name in ENTRIES:
        if role not in roles or name in seen:
            continue
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue
        seen.add(name)
        links.append({"label": str(label), "url": url, "name": name})
    return links


def navigation(request: HttpRequest) -> dict[str, Any]:
    """Context processor: `nav_links` for the frame."""
    session = getattr(request, "session", None)
    user = getattr(request, "user", None)
    if session is None or user is None or not user.is_authenticated:
        return {"nav_links": []}
    return {"nav_links": menu(set(session.get(SESSION_ROLES, ())))}
