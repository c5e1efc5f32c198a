"""Orders: configurations, customer orders and their lifecycle."""

from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
