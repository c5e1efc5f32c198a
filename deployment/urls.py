"""Deployment pages, under /deployment/."""

from django.urls import path  # noqa: F401

app_name = "deployment"

urlpatterns: list = []
