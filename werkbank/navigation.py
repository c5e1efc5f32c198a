"""The frame's navigation, by role: the links `templates/base.html` shows to PMs, partners and customers, and
the search box that PMs and partners get (`SEARCH_ROLES`, the global search `pm:search`).

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
    ("pm", _("Warranty report"), "pm:warranty"),
    ("pm", _("Quality"), "pm:quality"),
    ("partner", _("Bench"), "bench:list"),
    ("partner", _("API tokens"), "bench:tokens"),
    ("customer", _("Orders"), "portal:orders"),
    ("customer", _("Warranty"), "portal:warranty"),
    ("customer", _("API tokens"), "portal:tokens"),
)

#: The roles whose frame has the search box, and the page it searches (partners' results are scoped there).
SEARCH_ROLES = frozenset({"pm", "partner"})
SEARCH_URL_NAME = "pm:search"


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


def search_url(roles: list[str] | set[str]) -> str | None:
    """Where the frame's search box sends a user with these roles; None: no search box."""
    if not SEARCH_ROLES & set(roles):
        return None
    try:
        return reverse(SEARCH_URL_NAME)
    except NoReverseMatch:
        return None


def navigation(request: HttpRequest) -> dict[str, Any]:
    """Context processor: `nav_links` and `nav_search_url` for the frame."""
    session = getattr(request, "session", None)
    user = getattr(request, "user", None)
    if session is None or user is None or not user.is_authenticated:
        return {"nav_links": [], "nav_search_url": None}
    roles = set(session.get(SESSION_ROLES, ()))
    return {"nav_links": menu(roles), "nav_search_url": search_url(roles)}
