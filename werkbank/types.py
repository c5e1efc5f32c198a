"""Types that the services, selectors and gates of every app share.

The names are aliases for the type checker only: the modules that use them have
`from __future__ import annotations`, so nothing here is evaluated at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

#: Who performs a service call (`actor`), or whom a selector reads for (`user`). A view passes
#: `request.user` (an AnonymousUser when nobody is logged in); tasks, beat and management commands pass
#: None for the system. The audit row and every `*_by` column record None for both
#: (`werkbank.audit.user_or_none`); `visible_to` and `is_pm` grant them nothing.
#: `User` is the project's user model (Django's own: settings leave AUTH_USER_MODEL at its default).
Actor: TypeAlias = "User | AnonymousUser | None"
