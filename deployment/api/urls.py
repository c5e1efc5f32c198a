"""API routes of the deployment app, under /api/v1/."""

from rest_framework.routers import SimpleRouter

router = SimpleRouter()
