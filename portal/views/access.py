"""Who may open a portal page: the one decorator every view under /portal/ uses.

Anonymous visitors are sent to the login page. A signed-in user who is no customer member (a PM, who has
the admin; an assembly partner, who has the bench; a user of no organization) gets a 404 on every portal
page, as for another customer's order: the portal does not tell them what it has.
tests/portal/test_portal_access.py walks portal/urls.py and proves it for every route.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse

from portal import selectors

View = Callable[..., HttpResponse]


def customer_required(view: View) -> View:
    """Anonymous: the login page. Signed in but no customer member (a PM, a partner, an outsider): 404."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not selectors.is_customer_member(request.user):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    wrapped.customer_required = True  # type: ignore[attr-defined] - read by the portal's route test
    return wrapped
