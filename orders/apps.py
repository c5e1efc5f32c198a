"""Orders: configurations, customer orders and their lifecycle."""

from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"

    def ready(self) -> None:
        from orders.exports import register_exports

        register_exports()
