"""Builds: servers, chassis layouts and connectors, allocation, installation, blacklist, build steps."""

from django.apps import AppConfig


class BuildsConfig(AppConfig):
    name = "builds"

    def ready(self) -> None:
        from builds.exports import register_exports
        from builds.gates import register_gates, register_steps
        from builds.receivers import create_servers_on_procurement
        from orders.signals import order_transitioned

        order_transitioned.connect(create_servers_on_procurement, dispatch_uid="builds.create_servers")
        register_gates()
        register_steps()
        register_exports()
