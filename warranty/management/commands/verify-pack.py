"""`manage.py verify-pack FILE.zip [--keys KEYFILE]`: check a handover pack: its signature and its files.

Two checks, each reported on its own line so that a failure says which one failed:

- the signature: `manifest.sig.json` over the exact bytes of `manifest.json`, by one of the keys. With
  `--keys` the keys are a file saved from `/verify/keys.json` (anyone can check offline, without this
  installation); without it, this installation's configured keys (`WERKBANK_SIGNING_KEYS`);
- the files: every file the manifest lists is there with its SHA-256 and size, and nothing else is.

Exit status 0 when both pass; otherwise 1, with one line per problem. A pack made before packs were signed
says "not signed" and fails, unless `--allow-unsigned` accepts one whose files match its manifest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from warranty.documents import SIGNATURE_NAME, check_pack
from warranty.signing import PublicKey, SignatureStatus, SigningKeyError, parse_keys_document, public_keys


class Command(BaseCommand):
    help = (
        "Check a handover pack ZIP: the Ed25519 signature of its manifest.json (against --keys, a key file "
        "saved from /verify/keys.json, or this installation's keys) and the SHA-256 and size of every file."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("zip", help="the pack's ZIP file")
        parser.add_argument(
            "--keys",
            metavar="KEYFILE",
            help="the public keys, as saved from /verify/keys.json (default: this installation's keys)",
        )
        parser.add_argument(
            "--allow-unsigned",
            action="store_true",
            help="accept a pack made before packs were signed when its files match its manifest",
        )

    def _keys(self, keyfile: str | None) -> list[PublicKey]:
        if keyfile is None:
            return public_keys()
        path = Path(keyfile)
        try:
            return parse_keys_document(path.read_bytes())
        except OSError as error:
            raise CommandError(f"{path}: the key file cannot be read: {error.strerror or error}.") from None
        except SigningKeyError as error:
            raise CommandError(f"{path}: {error}.") from None

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["zip"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        keys = self._keys(options["keys"])
        check = check_pack(path, keys=keys)
        if not check.readable:
            for problem in check.problems:
                self.stderr.write(problem)
            raise CommandError(f"{path}: not a readable handover pack; the pack does not verify.")

        manifest = check.manifest or {}
        self.stdout.write(
            f"{path}: pack {manifest.get('server')} revision {manifest.get('revision')} "
            f"({manifest.get('language')}), generated {manifest.get('generated_at')}."
        )
        signature = check.signature
        if signature.valid:
            newest = keys[0].key_id if keys else ""
            which = "the current signing key" if signature.key_id == newest else "an older key"
            self.stdout.write(f"signature: {signature.message} ({which}).")
        elif signature.status == SignatureStatus.UNSIGNED:
            self.stderr.write(
                f"signature: not signed: the ZIP has no {SIGNATURE_NAME} (a pack made before packs were "
                "signed), so nothing proves who wrote its manifest."
            )
        else:
            self.stderr.write(f"signature: FAILED: {signature.message}.")

        if check.problems:
            for problem in check.problems:
                self.stderr.write(f"files: {problem}")
        else:
            self.stdout.write("files: every file matches the manifest.")

        failed = []
        if not signature.valid and not (
            signature.status == SignatureStatus.UNSIGNED and options["allow_unsigned"]
        ):
            failed.append(
                "not signed" if signature.status == SignatureStatus.UNSIGNED else "signature failed"
            )
        if check.problems:
            failed.append(f"{len(check.problems)} file problem(s)")
        if failed:
            raise CommandError(f"{path}: {'; '.join(failed)}; the pack does not verify.")
        self.stdout.write(f"{path}: the pack verifies.")
