"""API routes of the burn-in app, under /api/v1/burnin/."""

from rest_framework.routers import SimpleRouter

router = SimpleRouter()
