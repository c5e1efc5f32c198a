"""BMC credentials are never in an e-mail, a pack or a log (issue #28, item 3): known credentials are set,
revealed in the portal, rotated by a PM and revealed again, and a handover pack is made; every log record
(root logger, DEBUG), every e-mail, every audit row, the session, the pack's PDF text and every member of its
ZIP are then searched for them."""

from __future__ import annotations

import io
import json
import logging
import zipfile

import pytest
from django.core import mail
from django.forms.models import model_to_dict

from deployment.models import ServerNetwork
from tests.deployment import creds_rig
from tests.deployment.creds_rig import SECRET, USERNAME, client_for, reveal
from tests.warranty.handover_rig import bench, handed, world  # noqa: F401 - fixtures
from tests.warranty.packs_rig import pdf_text
from warranty.choices import PackStatus
from warranty.services.packs import pack_request
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

creds = creds_rig.creds  # the fixture

ROTATED_USERNAME = "bmc-rotated-user-k2"
ROTATED = "s3cr3t-BMC-pass-after-rotation-55"


def test_the_credentials_appear_in_no_log_e_mail_audit_row_or_pack(
    creds, caplog, django_capture_on_commit_callbacks
):
    caplog.set_level(logging.DEBUG)  # the root logger, and everything that propagates to it
    member, pm = client_for(creds.t.user_a), client_for(creds.t.pm)
    with django_capture_on_commit_callbacks(execute=True):
        assert SECRET in reveal(member, creds).content.decode()
        assert reveal(member, creds, password="a-wrong-one").status_code == 400
        rotated = pm.post(
            f"/deployment/servers/{creds.server.pk}/bmc-rotate/",
            {"bmc_username": ROTATED_USERNAME, "bmc_password": ROTATED},
            follow=True,
        )
        assert rotated.status_code == 200
        assert ROTATED not in rotated.content.decode() and ROTATED_USERNAME not in rotated.content.decode()
        assert ROTATED in reveal(member, creds).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        pack, _created = pack_request(server=creds.server, actor=creds.t.pm, language="en")
    pack.refresh_from_db()
    assert pack.status == PackStatus.READY, pack.status
    assert len(mail.outbox) == 1  # the rotation's notice

    _pages, pdf = pdf_text(pack.pdf.read())
    assert "BMC" in pdf and "reveal them on the portal" in pdf  # the pack's network section, as intended
    with zipfile.ZipFile(io.BytesIO(pack.zip.read())) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    assert members

    haystacks = {
        "logs": "\n".join(
            f"{record.name} {record.getMessage()} {record.args!r} {record.__dict__!r}"
            for record in caplog.records
        ),
        "mails": "\n".join(f"{m.subject}\n{m.body}\n{m.to}\n{m.alternatives!r}" for m in mail.outbox),
        "audit": json.dumps(
            [
                {"verb": e.verb, "before": e.before, "after": e.after, "note": e.note, "repr": e.object_repr}
                for e in AuditEvent.objects.order_by("pk")
            ]
        ),
        "sessions": str(dict(member.session.items())) + str(dict(pm.session.items())),
        "network_row": str(model_to_dict(ServerNetwork.objects.get(server=creds.server))),
        "pack_pdf": pdf,
        **{f"zip:{name}": data.decode("utf-8", "replace") for name, data in members.items()},
    }
    assert any(e.verb == "deployment.bmc_reveal" for e in AuditEvent.objects.all())
    assert caplog.records  # the requests did log something (a 400 at least)
    for secret in (SECRET, USERNAME, ROTATED, ROTATED_USERNAME, "a-wrong-one"):
        leaked = [name for name, text in haystacks.items() if secret in text]
        assert not leaked, (secret, leaked)
