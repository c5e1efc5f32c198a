"""The warranty app's public pages, under /verify/ (werkbank/urls.py): no login needed."""

from django.urls import path

from warranty import views

app_name = "verify"

urlpatterns = [
    path("", views.verify_page, name="page"),
    path("keys.json", views.keys_json, name="keys"),
]
