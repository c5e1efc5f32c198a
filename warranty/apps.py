"""Warranty: handover packs, warranty records and claims (models arrive with their issues)."""

from django.apps import AppConfig


class WarrantyConfig(AppConfig):
    name = "warranty"
