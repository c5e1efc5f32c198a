"""Deployment: sites, racks, rack placement, power per circuit, network and BMC, platform onboarding."""

from django.apps import AppConfig


class DeploymentConfig(AppConfig):
    name = "deployment"
    verbose_name = "Deployment"

    def ready(self) -> None:
        from deployment.exports import register_exports
        from deployment.gates import register_gates, register_steps

        register_gates()
        register_steps()
        register_exports()
