"""The demo world for the handover-pack tests: `manage.py seed_demo` gives a deployed, listed server with a
passed burn-in and 31 serials (the fleet's first, customer Vastfleet, German), and the 7U machine of seed 003
with two blacklisted connectors and an interrupted stage (customer Inferenzlabor, in burn-in).

It is loaded without the warranty's own demo (warranty/demo.py), which asks for that server's pack and
hands it over: these tests ask for packs and hand over themselves, from the deployed server without a pack.
tests/warranty/test_demo.py tests the full demo."""

from __future__ import annotations

import io
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from pypdf import PdfReader

from builds.models import Server
from builds.selectors import blacklist_entries, connector_map
from tests import factories
from werkbank.models import Organization


@dataclass
class Demo:
    pm: Any
    fleet: Server  # deployed: a pack may be asked for
    seven_u: Server  # in burn-in, with blacklisted connectors and an interrupted stage
    vastfleet: Organization
    member: Any  # the demo's member of Vastfleet
    stranger: Any  # a member of another customer
    partner: Any  # a member of the partner that built both


def load_demo() -> Demo:
    with (
        mock.patch("warranty.demo.seed", autospec=True),
        mock.patch("warranty.demo.seed_after_commit", autospec=True),
    ):
        call_command("seed_demo", "--quiet")
    user_model = get_user_model()
    fleet = Server.objects.select_related("order__customer").get(asset_tag="WB-2026-0001-01")
    seven_u = Server.objects.select_related("order__customer").get(asset_tag="WB-2026-0003-01")
    stranger = factories.make_member(
        factories.OrganizationFactory(name="Stranger Compute AG"), username="stranger"
    )
    return Demo(
        pm=user_model.objects.get(username="pm"),
        fleet=fleet,
        seven_u=seven_u,
        vastfleet=fleet.order.customer,
        member=user_model.objects.get(username="vastfleet"),
        stranger=stranger,
        partner=user_model.objects.get(username="kentino"),
    )


def pdf_text(content: bytes) -> tuple[int, str]:
    """(pages, text) of a PDF, by pypdf, with every run of white space (a wrapped line) as one space."""
    reader = PdfReader(io.BytesIO(content))
    return len(reader.pages), " ".join(" ".join(page.extract_text().split()) for page in reader.pages)


def pdftoppm_pages(content: bytes, folder: Path) -> int:
    """How many PNG pages poppler's pdftoppm renders of a PDF (at 40 dpi)."""
    if not shutil.which("pdftoppm"):
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    pdf = folder / "pack.pdf"
    pdf.write_bytes(content)
    subprocess.run(["pdftoppm", "-png", "-r", "40", str(pdf), str(folder / "page")], check=True, timeout=60)
    return len(list(folder.glob("page-*.png")))


def installed_serials(server: Server) -> list[str]:
    return [cell.serial for cell in connector_map(server) if cell.serial]


def blacklisted_connectors(server: Server) -> list[str]:
    return [entry.connector.name for entry in blacklist_entries(server)]


def rehashed_forgery(content: bytes, forged: bytes) -> bytes:
    """The pack ZIP `content` with its telemetry.csv replaced by `forged` and the manifest re-hashed by hand,
    as a forger would: every file matches the manifest, only the signature can tell."""
    import hashlib
    import io
    import json
    import zipfile

    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members["telemetry.csv"] = forged
    manifest = json.loads(members["manifest.json"])
    for entry in manifest["files"]:
        if entry["name"] == "telemetry.csv":
            entry.update(sha256=hashlib.sha256(forged).hexdigest(), size=len(forged))
    members["manifest.json"] = json.dumps(manifest, indent=2).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()
