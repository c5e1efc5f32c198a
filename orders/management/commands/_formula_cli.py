"""What the formula commands (``roi``, ``sizing``, ``power-budget``) share: errors and output.

Errors: a bad argument is one line on stderr that names the option, and exit status 2, whether argparse
or :mod:`orders.formulas` finds it. Output: JSON with money rounded to 2 decimals, ratios to 4, and
infinities as null (``json`` would write ``Infinity``, which is not JSON).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from orders.formulas import FormulaInputError

#: Decimals for each kind of figure.
MONEY = 2
RATIO = 4

#: Exit status of a bad argument, the same as argparse's.
USAGE_ERROR = 2


def jsonable(value: Any, decimals: int) -> Any:
    """A value ready for JSON: floats rounded, infinities and NaN as None, tuples as lists."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return round(value, decimals) if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        return [jsonable(item, decimals) for item in value]
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def result_dict(result: Any, *, decimals: Mapping[str, int], default: int = RATIO) -> dict[str, Any]:
    """A formula result (a dataclass) as a dict of JSON values, each rounded to its field's decimals."""
    return {
        field.name: jsonable(getattr(result, field.name), decimals.get(field.name, default))
        for field in dataclasses.fields(result)
    }


def dumps(data: Mapping[str, Any]) -> str:
    """Strict JSON: ``allow_nan=False`` so a stray infinity fails here instead of in the reader."""
    return json.dumps(data, indent=2, allow_nan=False)


def fmt(value: float | None, decimals: int = MONEY, unit: str = "") -> str:
    """A figure for the readable tables: thousands separators, "n/a" for None, "∞" for infinity."""
    if value is None:
        return "n/a"
    if math.isinf(value):
        return "∞"
    text = f"{value:,.{decimals}f}"
    return f"{text} {unit}" if unit else text


def pct(value: float | None, decimals: int = 1) -> str:
    """A fraction as a percentage for the readable tables."""
    return "n/a" if value is None else f"{value * 100:.{decimals}f} %"


class FormulaCommand(BaseCommand):
    """Base of the formula commands: one-line errors with exit status 2, no system checks.

    ``option_names`` maps a formula input field to the command-line option that sets it, so an error from
    :mod:`orders.formulas` names the option the user typed.
    """

    requires_system_checks: list[str] = []
    option_names: Mapping[str, str] = {}

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        # argparse's own error() prints the whole usage before the message; one line is enough, and the
        # exit status stays argparse's 2. Called through call_command, Django raises CommandError, which
        # we keep but with the same status.
        def error(message: str) -> NoReturn:
            if parser.called_from_command_line:
                parser.exit(USAGE_ERROR, f"{parser.prog}: error: {message}\n")
            raise CommandError(f"Error: {message}", returncode=USAGE_ERROR)

        parser.error = error  # type: ignore[method-assign]
        return parser

    def input_error(self, exc: FormulaInputError) -> CommandError:
        """A CommandError (exit status 2) that names the option behind the formula's field."""
        option = self.option_names.get(exc.field)
        where = f"{option} ({exc.field})" if option else exc.field
        return CommandError(f"{where}: {exc.message}", returncode=USAGE_ERROR)

    def write_json(self, data: Mapping[str, Any]) -> None:
        self.stdout.write(dumps(data))

    def write_rows(self, title: str, rows: list[tuple[str, str, str]]) -> None:
        """A readable table: label, formula with the figures put in, result."""
        self.stdout.write(title)
        label_width = max(len(label) for label, _, _ in rows)
        formula_width = max(len(formula) for _, formula, _ in rows)
        for label, formula, value in rows:
            self.stdout.write(f"  {label:<{label_width}}  {formula:<{formula_width}}  {value}")
