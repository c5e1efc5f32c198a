"""Warranty: handover packs, warranty records and registrations, claims (RMA), expiry notices."""

from django.apps import AppConfig


class WarrantyConfig(AppConfig):
    name = "warranty"

    def ready(self) -> None:
        from builds.signals import components_allocated
        from warranty.gates import register_gates
        from warranty.receivers import register_allocated_components

        components_allocated.connect(register_allocated_components, dispatch_uid="warranty.register")
        register_gates()
