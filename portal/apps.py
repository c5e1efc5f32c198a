"""Portal: the pages that span every app. The customer portal (`/portal/`), and the PM's pipeline, order page
and global search (`/pm/`). They read through the selectors of the apps below, scoped by `visible_to`, and
write only through their services."""

from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
