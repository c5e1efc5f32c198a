"""Analyse a probe report file without a database: `manage.py burnin-analyze REPORT.json [--json]`."""

from __future__ import annotations

import gzip
import json
from itertools import chain
from pathlib import Path
from typing import Any

import jsonschema
from django.core.management.base import BaseCommand, CommandError

from burnin.analysis import RULES_VERSION, SEVERITIES, Expectations, analyze
from probe.schema import load_schema

GZIP_MAGIC = b"\x1f\x8b"
ROW_VALUE_TYPES = {int, float, type(None)}


def read_report(path: str) -> dict[str, Any]:
    """The report in ``path`` (JSON, gzip allowed), validated against the probe's schema.

    Raises ValueError with one line that says what is wrong, naming the JSON path of a schema error.
    """
    try:
        data = Path(path).read_bytes()
        if data[:2] == GZIP_MAGIC:
            data = gzip.decompress(data)
        report = json.loads(data)
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except (EOFError, gzip.BadGzipFile) as exc:
        raise ValueError(f"{path}: not a readable gzip file: {exc}") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(report, dict) or report.get("schema") != "gpu-burnin-report":
        raise ValueError(f'{path}: not a probe burn-in report (no "schema": "gpu-burnin-report")')
    problem = schema_error(report)
    if problem is not None:
        raise ValueError(f"{path}: invalid report at {problem}")
    return report


def schema_error(report: dict[str, Any]) -> str | None:
    """The first schema error as ``$.json.path: message``, or None.

    jsonschema needs ~20 s for the three million values of a 72 h telemetry, so the series are checked
    apart: the schema proper sees one row per GPU, and every row is then checked, in C, for what the
    schema asks of it (a list of numbers or nulls).
    """
    telemetry = report.get("telemetry")
    series = telemetry.get("gpu_series") if isinstance(telemetry, dict) else None
    shell = report
    if isinstance(series, dict):
        heads = {key: rows[:1] if isinstance(rows, list) else rows for key, rows in series.items()}
        shell = dict(report, telemetry=dict(telemetry, gpu_series=heads))
    validator = jsonschema.Draft202012Validator(load_schema())
    error = jsonschema.exceptions.best_match(validator.iter_errors(shell))
    if error is not None:
        message = " ".join(error.message.split())
        return f"{error.json_path}: {message[:197] + '...' if len(message) > 200 else message}"
    for key, rows in (series or {}).items():
        if set(map(type, rows)) <= {list} and set(map(type, chain.from_iterable(rows))) <= ROW_VALUE_TYPES:
            continue
        for i, row in enumerate(rows):
            where = f"$.telemetry.gpu_series['{key}'][{i}]"
            if not isinstance(row, list):
                return f"{where}: {type(row).__name__} is not of type 'array'"
            bad = next((j for j, value in enumerate(row) if type(value) not in ROW_VALUE_TYPES), None)
            if bad is not None:
                return f"{where}[{bad}]: {row[bad]!r} is not of type 'number', 'null'"
    return None


class Command(BaseCommand):
    help = (
        "Run the burn-in analysis on a probe report (JSON, gzip allowed) and print the findings. "
        "Touches no database."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("report", help="The probe's report file (.json or .json.gz)")
        parser.add_argument(
            "--json", action="store_true", dest="as_json", help="Print a JSON list of the findings"
        )
        parser.add_argument(
            "--platform-gen",
            type=int,
            choices=range(1, 7),
            metavar="N",
            help="The configuration's platform PCIe generation (an EPYC 7643 platform is 4)",
        )
        parser.add_argument(
            "--burnin-hours",
            type=float,
            metavar="H",
            help="The burn-in the order promises (72 for every customer): a shorter full load fails",
        )

    def handle(
        self,
        *args: Any,
        report: str,
        as_json: bool,
        platform_gen: int | None,
        burnin_hours: float | None = None,
        **options: Any,
    ) -> None:
        try:
            document = read_report(report)
        except ValueError as exc:
            raise CommandError(str(exc), returncode=2) from exc
        target_s = burnin_hours * 3600 if burnin_hours else None
        findings = analyze(
            document, expectations=Expectations(platform_max_gen=platform_gen, target_s=target_s)
        )
        if as_json:
            self.stdout.write(json.dumps([f.as_dict() for f in findings], indent=2, ensure_ascii=False))
            return
        if not findings:
            self.stdout.write(f"No findings (rules {RULES_VERSION}).")
            return
        subjects = [f"GPU {f.subject}" if isinstance(f.subject, int) else f.subject for f in findings]
        code_width = max(len(f.code) for f in findings)
        subject_width = max(map(len, subjects))
        self.stdout.write(f"{'severity':<8}  {'code':<{code_width}}  {'subject':<{subject_width}}  message")
        for finding, subject in zip(findings, subjects, strict=True):
            self.stdout.write(
                f"{finding.severity:<8}  {finding.code:<{code_width}}  {subject:<{subject_width}}  "
                + finding.message
            )
        counts = ", ".join(f"{sum(f.severity == s for f in findings)} {s}" for s in SEVERITIES)
        self.stdout.write(f"{counts} (rules {RULES_VERSION}).")
