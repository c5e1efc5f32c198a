"""Portal: the customer's pages (`/portal/`) and the customer field rule. They read through the selectors
of the apps below, scoped by `visible_to`, and write only through their services."""

from django.apps import AppConfig


class PortalConfig(AppConfig):
    name = "portal"
