"""Command line: ``python -m probe {inspect,parse-xml,parse-sel,burnin,field-check,validate,upload}``.

Exit codes: 0 ok, 1 a failure was measured (or a report is invalid, or an upload failed), 2 usage error
or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from probe import SCHEMA_NAME, SCHEMA_VERSION, __version__

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

# Command modules are imported inside the command functions: ``--help`` and the parsers stay fast, and
# nothing a command does not need is loaded on the GPU server.


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (the usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def _duration(text: str) -> float:
    from probe.common import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _print_json(data: Any) -> None:
    try:
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: not an error of the probe. Stop writing quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _read_input(path: str, prog: str) -> str | None:
    """Read a file (``-`` = stdin); print a one-line error and return None when it cannot be read."""
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError as exc:
        print(f"{prog}: cannot read {path}: {exc.strerror or exc}", file=sys.stderr)
        return None


def cmd_inspect(args: argparse.Namespace) -> int:
    from probe import hostinfo, nvxml
    from probe.common import iso, utc_now

    text, err = nvxml.query_xml()
    if err:
        print(f"probe inspect: {err}", file=sys.stderr)
        return EXIT_FAIL
    doc = nvxml.parse_xml(text or "")
    topo = hostinfo.read_topo()
    for gpu in doc["gpus"]:
        gpu["sysfs"] = hostinfo.read_pci(gpu["pci_bus_id"], args.sysfs_root)
        gpu["topo"] = topo["gpus"].get(gpu["index"])
    _print_json({"generated_at": iso(utc_now()), "host": hostinfo.host_identity(), **doc})
    return EXIT_OK


def cmd_parse_xml(args: argparse.Namespace) -> int:
    from probe.nvxml import parse_xml

    text = _read_input(args.file, "probe parse-xml")
    if text is None:
        return EXIT_USAGE
    try:
        doc = parse_xml(text)
    except ValueError as exc:
        print(f"probe parse-xml: {args.file}: {exc}", file=sys.stderr)
        return EXIT_FAIL
    _print_json(doc)
    return EXIT_OK


def cmd_parse_sel(args: argparse.Namespace) -> int:
    from probe.sel import parse_sel

    text = _read_input(args.file, "probe parse-sel")
    if text is None:
        return EXIT_USAGE
    _print_json(parse_sel(text))
    return EXIT_OK


def cmd_burnin(args: argparse.Namespace) -> int:
    from probe.burnin import BurnIn

    if args.interval <= 0:
        print("probe burnin: error: --interval must be greater than 0", file=sys.stderr)
        return EXIT_USAGE
    problem = _check_out(args.out, args.force)
    if problem:
        print(f"probe burnin: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    run = BurnIn(
        args.out,
        args.duration,
        args.interval,
        sysfs_root=args.sysfs_root,
        no_load=args.no_load,
        verbose=args.verbose,
        argv=sys.argv[1:],
        sel_interval_s=args.sel_interval,
        checkpoint_s=args.checkpoint_interval,
        purpose=args.purpose,
    )
    return run.run()


def _check_out(out: str, force: bool) -> str | None:
    """Why the report cannot be written to ``out`` (None when it can)."""
    if os.path.exists(out) and not force:
        # A finished report is expensive to lose; overwriting it must be deliberate.
        return f"{out} exists; use --force to overwrite it"
    out_dir = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(out_dir) or not os.access(out_dir, os.W_OK):
        return f"cannot write the report into {out_dir}"
    return None


def cmd_field_check(args: argparse.Namespace) -> int:
    from probe.fieldcheck import MIN_DURATION_S, FieldCheck

    if args.interval <= 0:
        print("probe field-check: error: --interval must be greater than 0", file=sys.stderr)
        return EXIT_USAGE
    if args.duration < MIN_DURATION_S:
        print(f"probe field-check: error: --duration must be at least {MIN_DURATION_S:g}s", file=sys.stderr)
        return EXIT_USAGE
    problem = _check_out(args.out, args.force)
    if problem:
        print(f"probe field-check: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    run = FieldCheck(
        args.out,
        args.duration,
        args.interval,
        state_dir=args.state_dir,
        sysfs_root=args.sysfs_root,
        no_load=args.no_load,
        allow_busy=args.allow_busy,
        verbose=args.verbose,
        argv=sys.argv[1:],
    )
    return run.run()


def cmd_validate(args: argparse.Namespace) -> int:
    from probe.schema import load_schema
    from probe.validate import Validator

    text = _read_input(args.file, "probe validate")
    if text is None:
        return EXIT_USAGE
    try:
        data = json.loads(text)
    except ValueError as exc:
        print(f"{args.file}: invalid\n$: not valid JSON: {exc}")
        return EXIT_FAIL
    errors = Validator(load_schema()).errors(data)
    if errors:
        print(f"{args.file}: invalid ({len(errors)} error{'s' if len(errors) != 1 else ''})")
        for error in errors:
            print(str(error))
        return EXIT_FAIL
    # The report's own version: a valid 1.0.0 report is still read (as a burn-in).
    print(f"{args.file}: valid ({SCHEMA_NAME} {data['schema_version']})")
    return EXIT_OK


def cmd_upload(args: argparse.Namespace) -> int:
    from probe.schema import load_schema
    from probe.upload import upload
    from probe.validate import Validator

    token = args.token or os.environ.get("WERKBANK_TOKEN")
    if not token:
        print("probe upload: error: give --token or set WERKBANK_TOKEN", file=sys.stderr)
        return EXIT_USAGE
    try:
        with open(args.file, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        print(f"probe upload: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    if not args.no_validate:
        try:
            errors = Validator(load_schema()).errors(json.loads(data))
        except ValueError as exc:
            errors = [f"$: not valid JSON: {exc}"]
        if errors:
            print(f"probe upload: {args.file} is not a valid report, not uploading:", file=sys.stderr)
            for error in errors[:20]:
                print(f"  {error}", file=sys.stderr)
            return EXIT_FAIL
    result = upload(
        data,
        args.url,
        token,
        args.server,
        max_attempts=args.max_attempts,
        backoff_s=args.backoff,
        timeout_s=args.timeout,
        log=lambda m: print(f"probe upload: {m}", file=sys.stderr),
    )
    if result.ok:
        print(
            f"uploaded {args.file} (HTTP {result.status}, attempt {result.attempts}, "
            f"Idempotency-Key {result.idempotency_key})"
        )
        if result.body.strip():
            print(result.body.strip()[:2000])
        return EXIT_OK
    print(f"probe upload: {result.error}", file=sys.stderr)
    if result.retryable:
        print(
            "probe upload: the report was not confirmed as stored. Re-running the same command is safe and "
            f"resumes the upload: it carries Idempotency-Key {result.idempotency_key}, so the server keeps "
            "at most one copy.",
            file=sys.stderr,
        )
    return EXIT_FAIL


def cmd_h2d(args: argparse.Namespace) -> int:
    """Hidden helper: one H2D/D2H measurement, run under ``numactl`` by the bench stage."""
    from probe.load import h2d_child

    _print_json(h2d_child(args.device))
    return EXIT_OK


def _add_parse_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    """``inspect``, ``parse-xml`` and ``parse-sel``: read one source and print it as JSON."""
    p = sub.add_parser(
        "inspect",
        help="print the GPUs as they are now (nvidia-smi -q -x + sysfs), as JSON",
        description="Print the GPUs as they are now as JSON: normalised nvidia-smi -q -x, sysfs "
        "link speed/width of each GPU and its upstream port, NUMA node.",
    )
    p.add_argument("--sysfs-root", default="/sys", help="where sysfs is mounted (default: /sys)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser(
        "parse-xml",
        help="normalise one nvidia-smi -q -x document to JSON",
        description="Normalise an nvidia-smi -q -x document (driver v11 to v13) to JSON.",
    )
    p.add_argument("file", help="XML file, or - for stdin")
    p.set_defaults(func=cmd_parse_xml)

    p = sub.add_parser(
        "parse-sel",
        help="normalise ipmitool sel elist / sel list / -c output to JSON events",
        description="Parse ipmitool 'sel elist', 'sel list' or '-c sel elist' output (and ipmiutil "
        "lines) into JSON events; lines that cannot be parsed are listed in 'unparsed'.",
    )
    p.add_argument("file", help="text file, or - for stdin")
    p.set_defaults(func=cmd_parse_sel)


def _add_burnin_command(sub: argparse._SubParsersAction[_Parser]) -> None:
    p = sub.add_parser(
        "burnin",
        help="run the burn-in and write the report",
        description="Inventory, telemetry, per-GPU bench, all-GPU burn and final snapshots. "
        "Needs nvidia-smi; loads the GPUs only when torch or cupy is importable. "
        "SIGINT/SIGTERM stop the run and the report is still written.",
    )
    p.add_argument(
        "--duration", type=_duration, required=True, help="burn duration: 72h, 30m, 90s or seconds"
    )
    p.add_argument("--interval", type=_duration, default=10.0, help="telemetry interval (default: 10s)")
    p.add_argument("--out", required=True, help="report file to write (written atomically)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--no-load", action="store_true", help="do not load the GPUs, only monitor them")
    p.add_argument("--sysfs-root", default="/sys", help="where sysfs is mounted (default: /sys)")
    p.add_argument(
        "--sel-interval", type=_duration, default=900.0, help="BMC SEL poll interval (default: 15m)"
    )
    p.add_argument(
        "--checkpoint-interval",
        type=_duration,
        default=900.0,
        help="rewrite the report this often while running, so a crash leaves data (default: 15m)",
    )
    p.add_argument(
        "--purpose",
        choices=("burn_in", "post_repair"),
        default="burn_in",
        help="burn_in: commissioning (default); post_repair: re-commissioning after a part was swapped",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log every telemetry sample to stderr")
    p.set_defaults(func=cmd_burnin)


def _add_field_check_command(sub: argparse._SubParsersAction[_Parser]) -> None:
    p = sub.add_parser(
        "field-check",
        help="a short, time-boxed check of a machine in the field (weekly), as a report",
        description="The burn-in's stages in a time box: inventory, telemetry, the same per-GPU bench "
        "(H2D/D2H, TFLOPS, VRAM bandwidth), a short all-GPU burn with what remains of --duration (at least "
        "a floor), and the BMC SEL since the last field check. Writes a report with purpose field_check. "
        "GPUs that are busy are not loaded (see --allow-busy).",
    )
    p.add_argument(
        "--duration",
        type=_duration,
        default=900.0,
        help="the whole run fits in this: 15m (default), 30m, 600 (seconds)",
    )
    p.add_argument("--interval", type=_duration, default=5.0, help="telemetry interval (default: 5s)")
    p.add_argument("--out", required=True, help="report file to write (written atomically)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument(
        "--state-dir",
        default="/var/lib/werkbank-probe",
        help="where the last SEL event seen is kept between runs (default: /var/lib/werkbank-probe)",
    )
    p.add_argument("--no-load", action="store_true", help="do not load the GPUs, only monitor them")
    p.add_argument(
        "--allow-busy",
        action="store_true",
        help="load the GPUs even when one is in use (by default a busy GPU skips the bench and burn)",
    )
    p.add_argument("--sysfs-root", default="/sys", help="where sysfs is mounted (default: /sys)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every telemetry sample to stderr")
    p.set_defaults(func=cmd_field_check)


def _add_report_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    """``validate`` and ``upload``: what is done with a written report."""
    p = sub.add_parser(
        "validate",
        help="check a report against the JSON schema",
        description="Validate a report against probe/schema/report-v1.schema.json. Prints one "
        "line per error with its JSON path; exit 0 valid, 1 invalid, 2 unreadable.",
    )
    p.add_argument("file", help="report JSON file, or - for stdin")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "upload",
        help="upload a report to the Werkbank server (retries, idempotent)",
        description="POST the gzip-compressed report to URL/api/v1/burnin/servers/ASSET_TAG/reports/ "
        "with an Idempotency-Key (SHA-256 of the file). Retries connection errors and "
        "5xx; re-running the same command after a failure is safe.",
    )
    p.add_argument("file", help="report JSON file")
    p.add_argument(
        "--url", required=True, help="base URL of the Werkbank server, e.g. https://werkbank.example"
    )
    p.add_argument("--token", help="API token (default: $WERKBANK_TOKEN)")
    p.add_argument(
        "--server",
        required=True,
        metavar="ASSET_TAG",
        help="the server's asset tag in Werkbank, as printed on its label (e.g. WB-2026-0003-01)",
    )
    p.add_argument("--max-attempts", type=int, default=5, help="attempts before giving up (default: 5)")
    p.add_argument(
        "--backoff", type=float, default=2.0, help="first retry delay in seconds, doubled each time"
    )
    p.add_argument("--timeout", type=float, default=120.0, help="per-request timeout in seconds")
    p.add_argument("--no-validate", action="store_true", help="skip the local schema check before uploading")
    p.set_defaults(func=cmd_upload)


def _add_internal_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    # Internal helper for NUMA-bound measurements; no help= so it stays out of the command list.
    p = sub.add_parser("_h2d")
    p.add_argument("--device", type=int, required=True)
    p.set_defaults(func=cmd_h2d)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m probe",
        description="Werkbank probe: measure a GPU server under load and write a versioned burn-in report.",
        epilog="Exit codes: 0 ok, 1 a failure was measured (or invalid report, failed upload), 2 usage.",
    )
    parser.add_argument(
        "--version", action="version", version=f"probe {__version__} (report {SCHEMA_VERSION})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    # One helper per group of sub-commands keeps each parser's options together; the order of the calls
    # is the order of the command list in --help.
    _add_parse_commands(sub)
    _add_burnin_command(sub)
    _add_field_check_command(sub)
    _add_report_commands(sub)
    _add_internal_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "upload" and args.max_attempts < 1:
        parser.error("--max-attempts must be at least 1")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
