"""Root URLs."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from werkbank.views import healthz, home

admin.site.site_header = "Werkbank"
admin.site.site_title = "Werkbank"
admin.site.index_title = "Project management"

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("werkbank.api.urls")),
    path("pm/", include("orders.urls")),
    path("bench/", include("builds.urls")),
    # The admin's login refuses non-staff users; partners (and customers) log in here.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="login"), name="logout"),
]
