"""A stand-in for ``ipmitool`` that serves a BMC SEL from a text file (test helper, stdlib only).

Environment:
    FAKE_IPMITOOL_SEL   file holding ``ipmitool sel elist`` output; the test edits it between runs, as a
                        BMC appends events (or clears its log)

Supported invocations: ``-V``, ``sel elist``, ``sel info`` (entry count from the file) and
``sel time get`` (now, UTC).
"""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path


def main(argv: list[str]) -> int:
    sel = Path(os.environ["FAKE_IPMITOOL_SEL"])
    lines = [line for line in sel.read_text().splitlines() if line.strip()] if sel.exists() else []
    if argv == ["-V"]:
        print("ipmitool version 1.8.19")
    elif argv == ["sel", "elist"]:
        sys.stdout.write("".join(f"{line}\n" for line in lines))
    elif argv == ["sel", "info"]:
        print(
            f"SEL Information\nVersion          : 1.5 (v1.5, v2 compliant)\nEntries          : {len(lines)}"
        )
        print("Overflow         : false")
    elif argv == ["sel", "time", "get"]:
        print(datetime.now(timezone.utc).strftime("%m/%d/%Y %H:%M:%S"))  # noqa: UP017 - as the probe
    else:
        print(f"fake ipmitool: unsupported arguments {argv}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
