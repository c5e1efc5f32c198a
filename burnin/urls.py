"""Burn-in pages, under /burnin/."""

from django.urls import path

from burnin import views

app_name = "burnin"

urlpatterns = [
    path("servers/<int:server_id>/", views.server_burnin, name="server"),
    path("runs/<int:run_id>/", views.run_burnin, name="run"),
]
