"""Build steps and bench photos: checked by content and size, stored under a generated name, served after the
access check only."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from builds.choices import BuildStepKind
from builds.models import BuildPhoto, BuildStep
from tests.builds.bench_rig import JPEG, get, pixels, png, post, snapshot
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Runs what waits for the commit (files are written then), as the end of a real request would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _upload(name: str, data: bytes, content_type: str = "image/jpeg") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=content_type)


def _photo(bench, data: bytes, name: str = "bench.jpg", user=None, **body):
    return post(
        user or bench.t.user_p,
        bench.url("photos/"),
        {"photo": _upload(name, data), **body},
        format="multipart",
    )


def _stored_files(media) -> list:
    return [path for path in media.rglob("*") if path.is_file()] if media.exists() else []


@pytest.mark.parametrize("data, content_type", [(png(), "image/png"), (JPEG, "image/jpeg")])
def test_a_real_image_is_stored_under_a_generated_name(bench, _media, committed, data, content_type):
    with committed():
        response = _photo(bench, data, name="IMG_0042 my bench.jpg")
        assert _stored_files(_media) == []  # not before the commit

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["server"], body["content_type"], body["size_bytes"], body["uploaded_by"]) == (
        bench.server.pk,
        content_type,
        len(_stored_files(_media)[0].read_bytes()),  # the re-encoded file's size
        "petr",
    )
    photo = BuildPhoto.objects.get(pk=body["id"])
    assert photo.file.name.startswith(f"build-photos/{bench.server.pk}/")
    assert photo.file.name.endswith("." + content_type.split("/")[1])
    assert "IMG_0042" not in photo.file.name and "bench" not in photo.file.name
    assert [pixels(path.read_bytes()) for path in _stored_files(_media)] == [pixels(data)]


def test_a_text_file_named_jpg_is_a_400(bench, _media, committed):
    before = snapshot()
    with committed():
        response = _photo(bench, b"#!/bin/sh\necho not a photo\n", name="photo.jpg")
    assert response.status_code == 400
    assert "is not a JPEG or PNG image that decodes in full" in response.json()["photo"][0]
    assert snapshot() == before
    assert _stored_files(_media) == []


def test_the_size_limit_holds_to_the_byte(bench, settings, _media, committed):
    settings.WERKBANK_MAX_PHOTO_BYTES = 1000
    before = snapshot()

    with committed():
        response = _photo(bench, png(size=1001), name="big.png")

    assert response.status_code == 400
    assert "at most 1,000 bytes" in response.json()["photo"][0]
    assert snapshot() == before
    assert _stored_files(_media) == []
    with committed():
        assert _photo(bench, png(size=1000), name="exact.png").status_code == 201
    assert len(_stored_files(_media)) == 1


def test_download_gives_the_bytes_to_the_bench_only(bench, committed):
    data = png()
    with committed():
        photo_id = _photo(bench, data).json()["id"]
    url = f"/api/v1/builds/photos/{photo_id}/download/"

    for user in (bench.t.user_p, bench.t.pm):
        response = api_client(user).get(url)
        assert response.status_code == 200
        # consuming it closes the file; what was stored is the re-encoded image
        assert b"".join(response.streaming_content) == BuildPhoto.objects.get(pk=photo_id).file.read()
        assert response["Content-Type"] == "image/png"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Disposition"].startswith("attachment;")

    for user in (bench.t.user_q, bench.t.user_a, bench.t.user_b, bench.t.outsider):
        assert api_client(user).get(url).status_code == 404, user.username
        assert api_client(user).get(f"/api/v1/builds/photos/{photo_id}/").status_code == 404
    assert api_client(None).get(url).status_code in {401, 403}


def test_a_step_with_measurements_and_photos(bench, _media, committed):
    with committed():
        response = post(
            bench.t.user_p,
            bench.url("steps/"),
            {
                "kind": BuildStepKind.PCIE_TOPOLOGY_CHECK,
                "notes": "all eight at x16",
                "data": json.dumps({"gpus_detected": 8, "link_gen": "Gen5", "link_width": "x16"}),
                "photos": [_upload("a.png", png()), _upload("b.jpg", JPEG)],
            },
            format="multipart",
        )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["kind"], body["notes"], body["data"], body["actor"]) == (
        "pcie_topology_check",
        "all eight at x16",
        {"gpus_detected": 8, "link_gen": "Gen5", "link_width": "x16"},
        "petr",
    )
    assert len(body["photos"]) == 2
    step = BuildStep.objects.get(pk=body["id"])
    assert sorted(step.photos.values_list("content_type", flat=True)) == ["image/jpeg", "image/png"]
    assert sorted(pixels(path.read_bytes()) for path in _stored_files(_media)) == sorted(
        [pixels(png()), pixels(JPEG)]
    )

    listed = get(bench.t.user_p, bench.url("steps/")).json()
    assert [row["id"] for row in listed] == [step.pk]
    by_kind = get(bench.t.user_p, "/api/v1/builds/steps/", kind="pcie_topology_check", server=bench.server.pk)
    assert [row["id"] for row in by_kind.json()["results"]] == [step.pk]
    assert get(bench.t.user_p, "/api/v1/builds/photos/", step=step.pk).json()["count"] == 2


def test_a_step_as_json(bench):
    data = {"memory_test_passes": 4, "cpu_idle_temp_c": 38.5, "torque_checked": True}
    response = post(bench.t.user_p, bench.url("steps/"), {"kind": "qc_signoff", "data": data})
    assert response.status_code == 201, response.json()
    assert response.json()["data"] == data


@pytest.mark.parametrize(
    ("kind", "data", "field", "message"),
    [
        ("qc_signoff", {"torque_nm": 0.6}, "data.torque_nm", "is not a field of the step “QC sign-off”"),
        ("qc_signoff", {"cpu_idle_temp_c": 140}, "data.cpu_idle_temp_c", "must be at most 110 °C."),
        ("qc_signoff", {"memory_test_passes": 2.5}, "data.memory_test_passes", "must be a whole number."),
        ("qc_signoff", {"torque_checked": "yes"}, "data.torque_checked", "must be true or false."),
        ("pcie_topology_check", {}, "data.gpus_detected", "is required for the step “PCIe topology check”"),
        (
            "pcie_topology_check",
            {"gpus_detected": 8, "link_width": "x12"},
            "data.link_width",
            "must be one of",
        ),
        ("firmware", {"bios_version": "v" * 40}, "data.bios_version", "has at most 32 characters."),
        (
            "chassis_preparation",
            {"psu_count": 4, "standoff_torque_nm": 0.605},
            "data.standoff_torque_nm",
            "has at most 2 decimal places.",
        ),
    ],
)
def test_step_data_is_checked_against_its_kinds_fields(bench, kind, data, field, message):
    """builds.steps defines each kind's fields; the service refuses anything else with a 400 naming the
    field and the rule, and writes nothing."""
    before = snapshot()
    response = post(bench.t.user_p, bench.url("steps/"), {"kind": kind, "data": data})
    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert message in response.json()[field][0]
    assert snapshot() == before


def test_the_schema_lists_each_kinds_fields(bench):
    schema = api_client(bench.t.pm).get("/api/schema/", {"format": "json"}).json()
    text = schema["components"]["schemas"]["StepLogRequest"]["properties"]["data"]["description"]
    assert "`firmware`: `bios_version` (text, required)" in text
    assert "`cpu_idle_temp_c` (decimal, °C, 0–110)" in text


@pytest.mark.parametrize(
    "body, field",
    [
        ({"kind": "soldering"}, "kind"),
        ({"kind": "note", "data": "[1, 2]"}, "data"),
        ({"kind": "note", "data": "{not json"}, "data"),
        ({"kind": "note", "photos": [_upload(f"{i}.png", png()) for i in range(11)]}, "photos"),
        ({"kind": "note", "photos": [_upload("a.png", png()), _upload("b.jpg", b"plain text")]}, "photos"),
    ],
)
def test_a_refused_step_writes_nothing(bench, _media, committed, body, field):
    before = snapshot()
    with committed():
        response = post(bench.t.user_p, bench.url("steps/"), body, format="multipart")
    assert response.status_code == 400
    assert field in response.json()
    assert snapshot() == before
    assert _stored_files(_media) == []


def test_a_photo_for_a_step_of_another_server_is_a_400(bench):
    other_step = post(bench.t.user_p, bench.url("steps/", bench.other_server), {"kind": "note"}).json()["id"]
    before = snapshot()

    response = _photo(bench, png(), step=other_step)

    assert response.status_code == 400
    assert "step" in response.json()
    assert snapshot() == before
    own_step = post(bench.t.user_p, bench.url("steps/"), {"kind": "note"}).json()["id"]
    assert _photo(bench, png(), step=own_step).json()["step"] == own_step


def test_a_step_with_a_text_file_named_jpg_leaves_no_file(bench, _media, committed):
    """One valid photo and one text file named b.jpg: a 400 naming the field and the rule, no row, no file."""
    before = snapshot()
    with committed():
        response = post(
            bench.t.user_p,
            bench.url("steps/"),
            {"kind": "note", "photos": [_upload("a.png", png()), _upload("b.jpg", b"plain text\n")]},
            format="multipart",
        )

    assert response.status_code == 400
    assert response.json()["photos"] == [
        "photo 2 of 2 is not a JPEG or PNG image that decodes in full (checked by its content)."
    ]
    assert snapshot() == before
    assert len(_stored_files(_media)) == 0


# --- Hostile input (issue 16): the JSON field's rules, and the upload limits -----------------------------

DEEP_OBJECT = '{"a":' * 100 + "1" + "}" * 100


@pytest.mark.parametrize(
    "data, message",
    [
        ('{"torque_nm": NaN}', "NaN is not a JSON number: give a finite number or null."),
        ('{"torque_nm": 1e999}', "1e999 is too large to be a number: give a finite number or null."),
        (DEEP_OBJECT, "is nested more than 64 levels deep; at most 64 are accepted."),
        ("[" * 3000 + "]" * 3000, "is nested more than 64 levels deep; at most 64 are accepted."),
    ],
)
def test_a_step_refuses_nan_and_deep_json_naming_the_field(bench, data, message):
    """The same sentences as the bench form's (tests/builds/test_pages_bench_steps.py): one validator for
    both."""
    before = snapshot()
    response = post(bench.t.user_p, bench.url("steps/"), {"kind": "note", "data": data}, format="multipart")
    assert response.status_code == 400
    assert response.json() == {"data": [message]}
    assert snapshot() == before


def test_a_step_as_json_refuses_data_that_is_too_big(bench):
    response = post(bench.t.user_p, bench.url("steps/"), {"kind": "note", "data": {"x": "y" * 70_000}})
    assert response.status_code == 400
    assert "at most 65,536 bytes are accepted" in response.json()["data"][0]


def test_a_photo_upload_over_its_limit_is_a_413_before_it_is_read(bench, settings):
    settings.WERKBANK_MAX_PHOTO_BYTES = 2000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    before = snapshot()
    response = _photo(bench, png() + b"\0" * 5000)
    assert response.status_code == 413
    assert "limit of 3,000 bytes" in response.json()["detail"]
    assert snapshot() == before
    assert _photo(bench, png()).status_code == 201  # the photo limit, plus the form's fields, still fits


def test_a_step_takes_ten_photos_at_the_photo_limit(bench, settings):
    settings.WERKBANK_MAX_PHOTO_BYTES = 2000
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    # 10 photos of 2,000 bytes and the fields fit in 10 × 2,000 + 1,000; 11 photos' worth do not.
    response = post(
        bench.t.user_p,
        bench.url("steps/"),
        {"kind": "note", "photos": [_upload(f"{i}.png", png()) for i in range(10)]},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    too_big = post(
        bench.t.user_p,
        bench.url("steps/"),
        {"kind": "note", "photos": [_upload(f"{i}.png", png() + b"\0" * 1900) for i in range(11)]},
        format="multipart",
    )
    assert too_big.status_code == 413
    assert "limit of 21,000 bytes" in too_big.json()["detail"]


def test_more_files_than_allowed_is_a_json_400(bench, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    response = post(
        bench.t.user_p,
        bench.url("steps/"),
        {"kind": "note", "photos": [_upload(f"{i}.png", png()) for i in range(4)]},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json() == {"detail": "More than 3 files in one request (DATA_UPLOAD_MAX_NUMBER_FILES)."}
