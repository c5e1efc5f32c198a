"""Ops: tools that write every app's rows (the scale dataset, order export and import). The top of the
house: it may import every app, and no app imports it."""

from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "ops"
    verbose_name = "Operations tools"
