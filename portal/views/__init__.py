"""The portal's pages, one module per area; `portal/urls.py` joins their `urlpatterns`."""
