"""Builds: servers, connectors, assembly, burn-in and deployment (models arrive with their issues)."""

from django.apps import AppConfig


class BuildsConfig(AppConfig):
    name = "builds"
