"""Deployment pages, under /deployment/."""

from django.urls import path

from deployment import views

app_name = "deployment"

urlpatterns = [
    path("racks/<int:rack_id>/", views.rack_page, name="rack"),
    path("racks/<int:rack_id>/place/", views.rack_place_view, name="rack-place"),
    path("sites/<int:site_id>/", views.site_page, name="site"),
    path("sites/<int:site_id>/netbox.zip", views.site_netbox_export, name="site-netbox"),
    path("servers/<int:server_id>/", views.server_page, name="server"),
    path("servers/<int:server_id>/deploy/", views.server_deploy_view, name="deploy"),
    path("servers/<int:server_id>/bmc-rotate/", views.bmc_rotate_view, name="bmc-rotate"),
]
