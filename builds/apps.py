"""Builds: servers, chassis layouts and connectors, allocation, installation, blacklist, build steps."""

from django.apps import AppConfig


class BuildsConfig(AppConfig):
    name = "builds"

    def ready(self) -> None:
        from builds.gates import register_gates
        from builds.receivers import create_servers_on_procurement
        from orders.signals import order_transitioned

        order_transitioned.connect(create_servers_on_procurement, dispatch_uid="builds.create_servers")
        register_gates()
