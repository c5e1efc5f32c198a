"""`manage.py receive PO_LINE_ID --lot L --date-code D --origin DE --serials FILE.csv`."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from inventory.models import Component
from tests import factories

pytestmark = pytest.mark.django_db


def test_receive_prints_what_it_created(tmp_path, capsys):
    line = factories.make_po(quantity=4).lines.get()
    packing = tmp_path / "packing.csv"
    packing.write_text("serial\nCMD-1\nCMD-2\n")
    call_command(
        "receive",
        str(line.pk),
        "--lot",
        "L-CLI",
        "--date-code",
        "2526",
        "--origin",
        "de",
        "--serials",
        str(packing),
    )
    out = capsys.readouterr().out
    assert f"Received 2 × {line.part.mpn} on {line.purchase_order.number} (line {line.pk}: 2 of 4)." in out
    assert "Lot L-CLI (new): date code 2526, origin DE" in out
    assert "  CMD-1\n  CMD-2\n" in out
    assert Component.objects.filter(lot__lot_code="L-CLI").count() == 2


def test_bad_rows_are_listed_and_nothing_is_received(tmp_path, capsys):
    line = factories.make_po(quantity=4).lines.get()
    packing = tmp_path / "packing.csv"
    packing.write_text("serial\nOK-1\nBAD 2\n")
    with pytest.raises(CommandError) as raised:
        call_command(
            "receive",
            str(line.pk),
            "--lot",
            "L",
            "--date-code",
            "2526",
            "--origin",
            "DE",
            "--serials",
            str(packing),
        )
    assert raised.value.returncode == 2
    assert "row 3, column serial:" in capsys.readouterr().err
    assert not Component.objects.exists()


def test_unknown_line_and_missing_file(tmp_path):
    with pytest.raises(CommandError, match="PO line 999999 does not exist"):
        call_command(
            "receive", "999999", "--lot", "L", "--date-code", "1", "--origin", "DE", "--serials", "x.csv"
        )
    line = factories.make_po(quantity=1).lines.get()
    with pytest.raises(CommandError, match="--serials: No such file"):
        call_command(
            "receive",
            str(line.pk),
            "--lot",
            "L",
            "--date-code",
            "1",
            "--origin",
            "DE",
            "--serials",
            str(tmp_path / "missing.csv"),
        )
