"""Swagger UI at /api/docs/ works without internet: its assets come from drf-spectacular-sidecar."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders
from django.core.management import call_command

pytestmark = pytest.mark.django_db

ASSET = re.compile(r"""(?:src|href)="([^"]+)\"""")
SCHEMA_URL = re.compile(r"""url: "([^"]+)\"""")


def _docs_assets(client) -> list[str]:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    assets = ASSET.findall(response.content.decode())
    assert len(assets) >= 3, assets  # favicon, stylesheet, bundle (and the standalone preset)
    return assets


def test_the_docs_page_references_only_local_static_files(client, settings):
    assets = _docs_assets(client)
    prefix = "/" + settings.STATIC_URL.lstrip("/")
    assert all(url.startswith(prefix) for url in assets), assets
    assert any(url.endswith("swagger-ui-bundle.js") for url in assets), assets
    for url in assets:
        assert finders.find(url.removeprefix(prefix)), f"no static file behind {url}"
    assert SCHEMA_URL.findall(client.get("/api/docs/").content.decode()) == ["/api/schema/"]


def test_the_docs_assets_are_served_as_runserver_serves_them(client, live_server):
    """live_server serves static files with staticfiles' handler, as `make demo`'s runserver does."""
    for url in _docs_assets(client):
        with urllib.request.urlopen(f"{live_server.url}{url}", timeout=10) as response:
            assert response.status == 200, url
            assert len(response.read()) > 0, url


def test_collectstatic_picks_up_the_docs_assets(client, settings, tmp_path: Path):
    """Production serves STATIC_ROOT as collected; the sidecar's files must be among them."""
    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", interactive=False, verbosity=0)
    prefix = "/" + settings.STATIC_URL.lstrip("/")
    for url in _docs_assets(client):
        assert (settings.STATIC_ROOT / url.removeprefix(prefix)).is_file(), url
