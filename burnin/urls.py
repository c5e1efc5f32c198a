"""Burn-in pages, under /burnin/, and the gate's POSTs (PMs only)."""

from django.urls import path

from burnin import views

app_name = "burnin"

urlpatterns = [
    path("servers/<int:server_id>/", views.server_burnin, name="server"),
    path("servers/<int:server_id>/pass/", views.server_pass_view, name="server-pass"),
    path("servers/<int:server_id>/fail/", views.server_fail_view, name="server-fail"),
    path("runs/<int:run_id>/", views.run_burnin, name="run"),
    path("findings/<int:finding_id>/waive/", views.finding_waive_view, name="finding-waive"),
]
