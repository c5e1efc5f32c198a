"""Warranty: handover packs, warranty records and registrations, claims (RMA), expiry notices."""

from django.apps import AppConfig


class WarrantyConfig(AppConfig):
    name = "warranty"

    def ready(self) -> None:
        from django.core import checks

        from builds.signals import components_allocated, connector_blacklisted
        from burnin.signals import drift_failed, run_analysed
        from warranty.exports import register_exports
        from warranty.gates import register_gates, register_steps
        from warranty.receivers import (
            attribute_blacklisted_connector,
            attribute_run_failures,
            draft_claims_from_drift,
            register_allocated_components,
        )
        from warranty.signing import check_signing_keys

        # Production without a signing key, or any malformed one, fails `manage.py check` (and migrate).
        checks.register(check_signing_keys, checks.Tags.security)

        components_allocated.connect(register_allocated_components, dispatch_uid="warranty.register")
        drift_failed.connect(draft_claims_from_drift, dispatch_uid="warranty.draft_claims")
        run_analysed.connect(attribute_run_failures, dispatch_uid="warranty.attribute_run")
        connector_blacklisted.connect(
            attribute_blacklisted_connector, dispatch_uid="warranty.attribute_blacklist"
        )
        register_gates()
        register_steps()
        register_exports()
