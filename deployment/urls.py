"""Deployment pages, under /deployment/."""

from django.urls import path

from deployment import views

app_name = "deployment"

urlpatterns = [
    path("racks/<int:rack_id>/", views.rack_page, name="rack"),
    path("sites/<int:site_id>/", views.site_page, name="site"),
    path("servers/<int:server_id>/", views.server_page, name="server"),
    path("servers/<int:server_id>/deploy/", views.server_deploy_view, name="deploy"),
]
