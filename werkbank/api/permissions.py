"""API permissions. Visibility is decided by `visible_to`; these decide who may write."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission

from werkbank.access import is_pm


class PMWritesOthersRead(BasePermission):
    """Any authenticated user may read what `visible_to` gives them; only PMs write.

    On detail routes the write check runs per object, after the object was looked up through the scoped
    queryset: another tenant's object is then a 404, never a 403 that would confirm it exists.
    """

    def has_permission(self, request: Any, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in SAFE_METHODS:
            return True
        lookup = getattr(view, "lookup_url_kwarg", None) or getattr(view, "lookup_field", "pk")
        if lookup in getattr(view, "kwargs", {}):
            return True
        return is_pm(request.user)

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        return request.method in SAFE_METHODS or is_pm(request.user)


def require_pm(request: Any, message: str) -> None:
    """A 403 saying `message` unless the caller is a PM: for actions whose object the caller may see (the
    lookup through `visible_to` has already answered 404 to anyone else)."""
    if not is_pm(request.user):
        raise PermissionDenied(message)
