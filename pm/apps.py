"""PM: the project manager's pages that span apps, under /pm/ (the pipeline, the order page and its
transitions, the ROI page, the global search), and the home of cross-app reports. They read through the
selectors of the apps below, scoped by `visible_to`, and write only through their services."""

from django.apps import AppConfig


class PmConfig(AppConfig):
    name = "pm"
    verbose_name = "PM pages"
