"""Inventory: the part catalogue (suppliers, lots and components arrive with procurement)."""

from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "inventory"

    def ready(self) -> None:
        from inventory.exports import register_exports

        register_exports()
