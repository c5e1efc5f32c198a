"""The bench pages (/bench/): build steps with photos, blacklisting a connector, and the gaps that keep a
server from being assembled."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from builds.choices import ServerStatus
from builds.models import (
    BuildPhoto,
    BuildStep,
    Connector,
    ConnectorBlacklist,
    Installation,
    Server,
)
from builds.selectors import connector_map
from builds.services import (
    server_start_assembly,
)
from tests.builds.bench_page_rig import X8_REASON, cell, installed, logged_in, make_build, page_of, png_1x1
from tests.builds.bench_rig import pixels

pytestmark = pytest.mark.django_db


# --- Build steps ------------------------------------------------------------------------------------------


def test_step_log_with_photo(tenants, settings, tmp_path, django_capture_on_commit_callbacks):
    settings.MEDIA_ROOT = tmp_path
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/bench/servers/{build.server.pk}/steps/",
            {
                "kind": "cable_routing",
                "notes": "Riser cables along the left wall",
                "cable_ties": "12",
                "airflow_clear": "on",
                "photos": [SimpleUploadedFile("cables.png", png_1x1(), content_type="image/png")],
            },
        )
    assert response.status_code == 302
    step = BuildStep.objects.get(server=build.server)
    assert (step.kind, step.notes, step.data, step.actor) == (
        "cable_routing",
        "Riser cables along the left wall",
        {"cable_ties": 12, "airflow_clear": True},
        tenants.user_p,
    )
    photo = BuildPhoto.objects.get(step=step)
    assert photo.content_type == "image/png"
    assert pixels((tmp_path / photo.file.name).read_bytes()) == pixels(png_1x1())  # stored re-encoded
    html = client.get(response["Location"]).content.decode()
    assert "Logged Cable routing for airflow with 1 photo." in html
    assert f'<img src="/api/v1/builds/photos/{photo.pk}/download/"' in html
    assert "Cable ties used: <strong>12</strong>" in html
    assert "Airflow path clear: <strong>yes</strong>" in html


@pytest.mark.parametrize(
    ("fields", "photo", "message"),
    [
        # The form's own range check, from the step's definition (builds.steps).
        ({"kind": "qc_signoff", "cpu_idle_temp_c": "140"}, None, "less than or equal to 110"),
        ({"kind": "pcie_topology_check"}, None, "GPUs detected: This field is required."),
        ({"kind": "pcie_topology_check", "gpus_detected": "8", "link_width": "x12"}, None, "x12 is not one"),
        (
            {"kind": "note"},
            b"MZ\x90\x00 not an image",
            "notes.png is not a JPEG or PNG image that decodes in full",
        ),
    ],
)
def test_step_log_refuses_bad_input_and_writes_nothing(
    tenants, settings, tmp_path, django_capture_on_commit_callbacks, fields, photo, message
):
    settings.MEDIA_ROOT = tmp_path
    build = make_build(tenants)
    payload = dict(fields)
    if photo is not None:
        payload["photos"] = [SimpleUploadedFile("ok.png", png_1x1()), SimpleUploadedFile("notes.png", photo)]
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in(tenants.user_p).post(f"/bench/servers/{build.server.pk}/steps/", payload)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not BuildStep.objects.exists() and not BuildPhoto.objects.exists()
    assert not list(tmp_path.rglob("*.png"))


def test_step_form_shows_each_checklist_items_fields_with_units_and_ranges(tenants):
    build = make_build(tenants)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    qc = re.search(r'<details class="step-form" id="step-qc_signoff".*?</details>', html, re.S).group(0)
    assert "CPU temperature at idle (°C)" in qc
    cpu = re.search(r"<input[^>]*name=\"cpu_idle_temp_c\"[^>]*>", qc).group(0)
    for attribute in ('type="number"', 'min="0"', 'max="110"', 'step="0.1"', 'inputmode="decimal"'):
        assert attribute in cpu, attribute
    passes = re.search(r"<input[^>]*name=\"memory_test_passes\"[^>]*>", qc).group(0)
    assert 'inputmode="numeric"' in passes and 'step="1"' in passes
    firmware = re.search(r'<details class="step-form" id="step-firmware".*?</details>', html, re.S).group(0)
    assert re.search(r"<input[^>]*name=\"bios_version\"[^>]*required", firmware)
    steps = re.search(r'<section id="steps".*?</section>', html, re.S).group(0)
    assert re.findall(r'<textarea name="(\w+)"', steps) == ["notes"] * 6  # notes only, no JSON box
    assert "JSON" not in re.search(r'<section id="steps".*?</section>', html, re.S).group(0)


def test_a_step_logged_from_the_form_stores_typed_values(tenants):
    """Numbers as numbers, an unticked box as false, an empty optional field left out."""
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/steps/",
        {"kind": "chassis_preparation", "psu_count": "4", "standoff_torque_nm": "0.6", "fans_fitted": ""},
    )
    assert response.status_code == 302
    assert BuildStep.objects.get().data == {
        "standoff_torque_nm": 0.6,
        "psu_count": 4,
        "dust_filters_fitted": False,
    }


def test_old_free_form_step_data_stays_readable(tenants):
    build = make_build(tenants)
    BuildStep.objects.create(
        server=build.server, kind="pcie_topology_check", data={"link": "Gen4 x16", "cards": 6}
    )
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert "link: <strong>Gen4 x16</strong>" in html and "cards: <strong>6</strong>" in html


# --- Blacklist --------------------------------------------------------------------------------------------


def test_blacklisting_an_occupied_connector_needs_a_target_then_moves_and_blacklists(
    tenants, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    build = make_build(tenants)
    serial = build.gpu_serials[0]
    installed(build, serial, "GPU2", tenants.user_p)
    client = logged_in(tenants.user_p)
    url = f"/bench/servers/{build.server.pk}/blacklist/"
    form = {
        "connector": "GPU2",
        "reason": X8_REASON,
        "evidence": "probe: GPU in GPU2 at Gen4 x8 under load",
        "measured_gbps": "13.9",
        "expected_gbps": "27.7",
        "confirm": "on",
    }
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(url, {**form, "photo": SimpleUploadedFile("slot.png", png_1x1())})
    assert refused.status_code == 409
    assert f"Connector GPU2 holds {serial}: name a free target connector" in refused.content.decode()
    assert not ConnectorBlacklist.objects.exists() and not BuildPhoto.objects.exists()
    assert not list(tmp_path.rglob("*.png"))  # the photo's file went with the rolled-back row

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            url, {**form, "target_connector": "GPU3", "photo": SimpleUploadedFile("slot.png", png_1x1())}
        )
    assert response.status_code == 302
    entry = ConnectorBlacklist.objects.get()
    assert (entry.connector.name, entry.reason, entry.created_by) == ("GPU2", X8_REASON, tenants.user_p)
    assert entry.measurements == {"h2d_gbps": 13.9, "expected_gbps": 27.7}
    assert entry.photo is not None and entry.photo.server_id == build.server.pk
    assert pixels((tmp_path / entry.photo.file.name).read_bytes()) == pixels(png_1x1())
    assert Installation.objects.get(removed_at__isnull=True).connector.name == "GPU3"
    html = client.get(response["Location"]).content.decode()
    assert f"Blacklisted GPU2: “{X8_REASON}”. {serial} moved to GPU3." in html
    assert cell(html, "GPU2")["data-state"] == "blacklisted"
    assert cell(html, "GPU3")["data-serial"] == serial
    entry_html = re.search(
        r'<div class="blacklist-entry" data-connector="GPU2">.*?</div>\s*</div>', html, re.S
    )
    assert entry_html and "H2D 13.9 GB/s, expected 27.7 GB/s" in entry_html.group(0)
    assert "probe: GPU in GPU2 at Gen4 x8 under load" in entry_html.group(0)
    assert "petr" in entry_html.group(0)
    # A blacklisted connector is offered neither for blacklisting again nor for scanning.
    blacklist_form = re.search(
        r'<select name="connector" required id="blacklist_connector">.*?</select>', html, re.S
    )
    assert '<option value="GPU2">' not in blacklist_form.group(0)


def test_blacklist_needs_a_reason(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/blacklist/", {"connector": "GPU1", "reason": "  "}
    )
    assert response.status_code == 400
    assert "reason: This field is required." in response.content.decode()
    assert not ConnectorBlacklist.objects.exists()


def test_blacklist_takes_named_measurements(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/blacklist/",
        {
            "connector": "GPU1",
            "reason": "bent pin",
            "link_gen": "Gen4",
            "link_width": "x8",
            "measured_gbps": "14",
            "confirm": "on",
        },
    )
    assert response.status_code == 302
    assert ConnectorBlacklist.objects.get().measurements == {"link": "Gen4 x8", "h2d_gbps": 14.0}
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert "Link trained at Gen4 x8" in html


def test_blacklist_without_the_confirmation_is_a_400_naming_the_field(tenants):
    build = make_build(tenants)
    response = logged_in(tenants.user_p).post(
        f"/bench/servers/{build.server.pk}/blacklist/", {"connector": "GPU1", "reason": "bent pin"}
    )
    assert response.status_code == 400
    assert "confirm: confirm that the blacklist cannot be undone." in response.content.decode()
    assert not ConnectorBlacklist.objects.exists()


def test_blacklist_form_asks_for_the_confirmation_without_script_and_loads_the_dialog(tenants):
    build = make_build(tenants)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    form = re.search(r'<form [^>]*id="blacklist-form".*?</form>', html, re.S).group(0)
    assert re.search(r'<input type="checkbox" name="confirm"[^>]*required', form)
    assert "this cannot be undone" in form
    assert 'data-question="Blacklist {connector} for good?' in form
    assert "This cannot be undone." in form
    assert "Other measurements" not in html and "JSON" not in form
    assert re.search(r'<script src="/static/builds/blacklist-confirm.js" nonce="[^"]+"></script>', html)
    assert '<dialog id="blacklist-dialog"' in html


# --- Assembled --------------------------------------------------------------------------------------------


def test_mark_assembled_is_refused_with_the_list_of_gaps(tenants):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    client = logged_in(tenants.user_p)
    html = client.get(page_of(build.server)).content.decode()
    assert "build step not logged: QC sign-off" in html
    assert "Mark assembled" not in html  # planned: the assembly starts first
    assert client.post(f"/bench/servers/{build.server.pk}/start-assembly/").status_code == 302
    response = client.post(f"/bench/servers/{build.server.pk}/mark-assembled/")
    assert response.status_code == 409
    refusal = re.search(
        r'<div class="error-box" role="alert" id="assembly-refusal">.*?</div>',
        response.content.decode(),
        re.S,
    )
    assert refusal
    for gap in (
        "build step not logged: QC sign-off",
        "1 of 2 RTX-PRO-6000-MQ-1652 not installed",
        "1 of 1 KT-4GPU-1652 not installed",
    ):
        assert f"<li>{gap}</li>" in refusal.group(0)
    assert Server.objects.get(pk=build.server.pk).status == ServerStatus.ASSEMBLING


def test_mark_assembled_once_nothing_is_missing(tenants):
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    server_start_assembly(server=build.server, actor=tenants.user_p)
    installed(build, build.chassis_serial, "CHASSIS", tenants.user_p)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    installed(build, build.gpu_serials[1], "GPU3", tenants.user_p)
    client.post(f"/bench/servers/{build.server.pk}/steps/", {"kind": "qc_signoff", "notes": "all seated"})
    assert "Nothing is missing." in client.get(page_of(build.server)).content.decode()
    response = client.post(f"/bench/servers/{build.server.pk}/mark-assembled/")
    assert response.status_code == 302
    assert Server.objects.get(pk=build.server.pk).status == ServerStatus.ASSEMBLED
    assert f"{build.server.hostname} is assembled." in client.get(response["Location"]).content.decode()


def test_connector_map_selector_has_a_fixed_query_count(tenants, django_assert_num_queries):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    installed(build, build.gpu_serials[1], "GPU2", tenants.user_p)
    with django_assert_num_queries(2):
        cells = connector_map(build.server)
    assert [c.state for c in cells] == ["free", "occupied", "occupied", "free", "free"]
    assert Connector.objects.filter(server=build.server).count() == 5
