"""Warranty: handover packs, warranty records and registrations, claims (RMA), expiry notices."""

from django.apps import AppConfig


class WarrantyConfig(AppConfig):
    name = "warranty"
