"""A stand-in for ``nvidia-smi`` that replays the captured H200 fixtures (test helper, stdlib only).

Environment:
    FAKE_NVSMI_FIXTURES  directory with nvidia-smi-q-idle.xml, help-query-gpu.txt, query-idle.csv,
                         query-idle-nounits.csv, telemetry-load.csv, topo.txt (tests/fixtures/gpu/h200)
    FAKE_NVSMI_STATE     file holding the number of --query-gpu calls so far (rows are replayed in order)

Supported invocations: ``-q -x``, ``--help-query-gpu``, ``topo -m`` and
``--query-gpu=F1,F2 --format=csv[,noheader][,nounits]``. As the real tool does, an unknown query field
is an error (exit 2); a valid field the fixtures do not contain is answered with ``[N/A]``.
"""

from __future__ import annotations

import csv
import os
import re
import sys
from pathlib import Path

FIX = Path(os.environ["FAKE_NVSMI_FIXTURES"])
STATE = Path(os.environ.get("FAKE_NVSMI_STATE", "/dev/null"))
UNIT_RE = re.compile(r"\s+(W|MHz|%|MiB|C)$")


def help_aliases() -> dict[str, str]:
    """Map every documented field name (and alias) to the first spelling on its help line."""
    canon: dict[str, str] = {}
    for line in (FIX / "help-query-gpu.txt").read_text().splitlines():
        if line.startswith('"'):
            names = re.findall(r'"([A-Za-z0-9_.]+)"', line)
            for name in names:
                canon.setdefault(name, names[0])
    return canon


def read_csv(path: Path, header_from: Path | None = None) -> tuple[list[str], list[list[str]]]:
    rows = [
        [c.strip() for c in r] for r in csv.reader(path.read_text().splitlines(), skipinitialspace=True) if r
    ]
    if header_from is not None:
        header = [c.strip() for c in next(csv.reader([header_from.read_text().splitlines()[0]]))]
    else:
        header, rows = rows[0], rows[1:]
    return [re.sub(r"\s*\[[^\]]*\]$", "", h) for h in header], rows


def query(fields: list[str], fmt: str) -> int:
    canon = help_aliases()
    unknown = [f for f in fields if f not in canon]
    if unknown:
        print(f'Field "{unknown[0]}" is not a valid field to query.', file=sys.stderr)
        return 2
    nounits = "nounits" in fmt
    idle_head, idle_rows = read_csv(FIX / "query-idle-nounits.csv", header_from=FIX / "query-idle.csv")
    tele_head, tele_rows = read_csv(FIX / "telemetry-load.csv")
    try:
        count = int(STATE.read_text() or "0")
    except (OSError, ValueError):
        count = 0
    if str(STATE) != "/dev/null":
        STATE.write_text(str(count + 1))
    live = dict(zip(tele_head, tele_rows[count % len(tele_rows)], strict=True))
    static = dict(zip(idle_head, idle_rows[0], strict=True))
    data = {canon.get(k, k): v for k, v in static.items()}
    data.update({canon.get(k, k): v for k, v in live.items()})
    out = []
    for field in fields:
        value = data.get(canon[field], "[N/A]")
        out.append(UNIT_RE.sub("", value) if nounits else value)
    if "noheader" not in fmt:
        print(", ".join(fields))
    print(", ".join(out))
    return 0


def main(argv: list[str]) -> int:
    if argv[:2] == ["-q", "-x"]:
        sys.stdout.write((FIX / "nvidia-smi-q-idle.xml").read_text())
        return 0
    if argv[:1] == ["--help-query-gpu"]:
        sys.stdout.write((FIX / "help-query-gpu.txt").read_text())
        return 0
    if argv[:2] == ["topo", "-m"]:
        sys.stdout.write((FIX / "topo.txt").read_text())
        return 0
    opts = dict(a.split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    if "--query-gpu" in opts:
        return query([f.strip() for f in opts["--query-gpu"].split(",")], opts.get("--format", "csv"))
    print(f"fake nvidia-smi: unsupported arguments {argv}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
