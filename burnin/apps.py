"""Burn-in runs ingested from the probe's reports, findings and their waivers, the burn-in gate,
telemetry charts."""

from django.apps import AppConfig


class BurninConfig(AppConfig):
    name = "burnin"
