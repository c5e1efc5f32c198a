"""Burn-in: runs from the probe's reports, findings and their waivers, the burn-in gate, telemetry charts."""

from django.apps import AppConfig


class BurninConfig(AppConfig):
    name = "burnin"
    verbose_name = "Burn-in"

    def ready(self) -> None:
        from burnin.exports import register_exports
        from burnin.gates import register_gates, register_steps
        from burnin.health import register_panels
        from burnin.measurements import register_measurements

        register_gates()
        register_steps()
        register_exports()
        register_panels()
        register_measurements()
