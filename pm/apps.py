"""PM: the project manager's pages that span apps, under /pm/ (the pipeline, the order page and its
transitions, the ROI page, the global search), and the home of cross-app reports. They read through the
selectors of the apps below, scoped by `visible_to`, and write only through their services."""

from django.apps import AppConfig


class PmConfig(AppConfig):
    name = "pm"
    verbose_name = "PM pages"

    def ready(self) -> None:
        # The fleet's quality flags back into purchasing and the bench (pm/quality/checks.py), through the
        # registries of the apps below, which must not import pm.
        from django.db.models.signals import post_delete, post_save

        from builds.proposals import register_blacklist_proposals
        from inventory.gates import register_po_check, register_receipt_check
        from pm.quality import checks
        from pm.quality.cache import bump_generation
        from warranty.models import Attribution

        register_po_check(checks.po_check)
        register_receipt_check(checks.receipt_check)
        register_blacklist_proposals(checks.blacklist_proposals)
        # A re-proposed or corrected cause changes no count that the cache fingerprints (pm/quality/cache.py).
        post_save.connect(bump_generation, sender=Attribution, dispatch_uid="pm.quality.cache.save")
        post_delete.connect(bump_generation, sender=Attribution, dispatch_uid="pm.quality.cache.delete")
