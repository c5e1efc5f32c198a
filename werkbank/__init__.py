"""Werkbank: build orders and assets for GPU servers built to order."""

from .celery import app as celery_app

__all__ = ["celery_app"]
