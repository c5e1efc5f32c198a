"""Public pages of the warranty app: "did Werkbank issue this handover pack?" and the keys that sign packs.

`/verify/` needs no login: whoever holds a pack (the customer's auditor, a buyer of a used server) gives its
SHA-256 or the ZIP itself. A ZIP is checked for its signature and files (`check_pack`) and then looked up
by its SHA-256; a hash is looked up directly (`issued_pack`). The answer names only the asset tag, the
revision, the language and the date: a pack prints the customer, the addresses and every serial, none of
which a stranger holding a hash may learn. The POST is rate-limited per client address
(`WERKBANK_VERIFY_RATE`), CSRF-protected like every form, and an upload is bounded in size and in what it
unpacks to.

`/verify/keys.json` publishes the public keys (newest first), so that a pack can be checked offline with
`manage.py verify-pack --keys` or any Ed25519 tool; `?download=1` answers it as a file to save.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods

from warranty.choices import PackLanguage
from warranty.documents import PackCheck, check_pack
from warranty.forms import VerifyForm
from warranty.selectors import IssuedPack, issued_pack
from warranty.signing import SignatureStatus, keys_document, public_keys
from werkbank.api.throttling import SharedCacheThrottle
from werkbank.security import client_ip

KEYS_FILENAME = "werkbank-signing-keys.json"


class VerifyRateThrottle(SharedCacheThrottle):
    """`WERKBANK_VERIFY_RATE` checks per client address (the login lockout's notion of the address), counted
    in the API throttle's cache so that every web process shares one count."""

    scope = "verify"

    def get_rate(self) -> str | None:
        return settings.WERKBANK_VERIFY_RATE or None

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request) or "unknown"}


@dataclass(frozen=True)
class Answer:
    """What the page answers. `verdict`: "issued" (on Werkbank's record), "unrecorded" (validly signed and
    intact, but not a ZIP on record: repacked, say), or "not_issued". `checks` are a ZIP's checks in words,
    each passed or not."""

    verdict: str
    zip_sha256: str
    pack: IssuedPack | None = None
    language: str = ""
    checks: list[tuple[bool, str]] = field(default_factory=list)


def _signature_line(check: PackCheck) -> tuple[bool, str]:
    signature = check.signature
    if signature.status == SignatureStatus.VALID:
        return True, _("The manifest carries a valid Werkbank signature (key %(key_id)s).") % {
            "key_id": signature.key_id
        }
    if signature.status == SignatureStatus.UNSIGNED:
        return False, _("The pack is not signed: it was made before Werkbank signed its packs.")
    if signature.status == SignatureStatus.UNKNOWN_KEY:
        return False, _("The manifest is signed by key %(key_id)s, which is not one of Werkbank's keys.") % {
            "key_id": signature.key_id
        }
    if signature.status == SignatureStatus.INVALID:
        return False, _(
            "The manifest's signature does not match: the manifest was changed after it was signed, or "
            "the signature was removed."
        )
    return False, _("The signature file cannot be read.")


def _zip_checks(check: PackCheck) -> list[tuple[bool, str]]:
    if not check.readable:
        return [(False, _("This ZIP is not a Werkbank handover pack: it has no readable manifest."))]
    if check.problems:
        count = len(check.problems)
        files = ngettext(
            "%(count)s file does not match the manifest's SHA-256 and size.",
            "%(count)s files do not match the manifest's SHA-256 and size.",
            count,
        ) % {"count": count}
    else:
        files = _("Every file matches the manifest's SHA-256 and size.")
    return [_signature_line(check), (not check.problems, files)]


def _sha256_of(upload: Any) -> str:
    digest = hashlib.sha256()
    for chunk in upload.chunks():
        digest.update(chunk)
    upload.seek(0)
    return digest.hexdigest()


def _answer_for_upload(upload: Any) -> Answer:
    """Check the uploaded ZIP, then look it up by its SHA-256: on record is issued, whatever the checks say
    (a pack from before signing has no signature, yet these are the very bytes Werkbank stored)."""
    zip_sha256 = _sha256_of(upload)
    limit = settings.WERKBANK_MAX_PACK_UPLOAD_BYTES + 2 * settings.WERKBANK_MAX_REPORT_BYTES
    check = check_pack(upload, keys=public_keys(), max_unpacked_bytes=limit)
    checks = _zip_checks(check)
    pack = issued_pack(zip_sha256=zip_sha256)
    if pack is not None:
        return _issued(zip_sha256, pack, checks)
    return Answer("unrecorded" if check.verified else "not_issued", zip_sha256, checks=checks)


def _issued(zip_sha256: str, pack: IssuedPack, checks: list[tuple[bool, str]] | None = None) -> Answer:
    language = str(PackLanguage(pack.language).label) if pack.language in PackLanguage.values else ""
    return Answer("issued", zip_sha256, pack=pack, language=language, checks=checks or [])


@require_http_methods(["GET", "POST"])
def verify_page(request: HttpRequest) -> HttpResponse:
    """`/verify/`: the form, and on POST its answer (or the form's errors, or 429 past the rate)."""
    if request.method != "POST":
        return render(request, "warranty/verify.html", {"form": VerifyForm(), "answer": None})
    throttle = VerifyRateThrottle()
    if not throttle.allow_request(request, None):
        wait = int(throttle.wait() or 60)
        context = {
            "form": VerifyForm(),
            "answer": None,
            "throttled": _("Too many checks from your address. Try again in %(seconds)s seconds.")
            % {"seconds": wait},
        }
        response = render(request, "warranty/verify.html", context, status=429)
        response["Retry-After"] = str(wait)
        return response
    form = VerifyForm(request.POST, request.FILES)
    answer: Answer | None = None
    if form.is_valid():
        if form.cleaned_data["pack"]:
            answer = _answer_for_upload(form.cleaned_data["pack"])
        else:
            zip_sha256 = form.cleaned_data["sha256"]
            pack = issued_pack(zip_sha256=zip_sha256)
            answer = _issued(zip_sha256, pack) if pack else Answer("not_issued", zip_sha256)
    return render(
        request,
        "warranty/verify.html",
        {"form": form, "answer": answer},
        status=200 if answer is not None or not form.errors else 400,
    )


@require_GET
def keys_json(request: HttpRequest) -> JsonResponse:
    """`/verify/keys.json`: every public key that verifies packs, newest first (the first signs new ones)."""
    response = JsonResponse(keys_document())
    response["Cache-Control"] = "public, max-age=300"
    if request.GET.get("download"):
        response["Content-Disposition"] = f'attachment; filename="{KEYS_FILENAME}"'
    return response
