"""Checking a calculation question in Python: the values are in the passages they cite, the
expression uses only them, and the answer holds its result.

The judge writes the values (each as written, with the passage it comes from), an arithmetic
expression over them and the answer; nothing here asks the judge. Numbers are compared
normalised: full-width digits become ASCII (``１２０`` is 120), thousands separators go
(``1,200`` is 1200) and a percentage is also its fraction (``25%`` is 25 and 0.25).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragmeter._text import NUMBER, number_text, numbers_in, parse_number

_OPERATORS = {"×": "*", "÷": "/", "−": "-", "–": "-", "x": "*"}
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


class CalculationError(ValueError):
    """Why a calculation fails its check; ``reason`` is the accounting's category."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


@dataclass(frozen=True)
class Value:
    """A number the question needs, as written, and the passage (1-based) it comes from."""

    text: str
    passage: int


def evaluate_expression(expression: str, allowed: Sequence[float]) -> float:
    """The value of ``expression`` (numbers, + - * / and parentheses only), every number in
    it one of ``allowed``; parsed with :mod:`ast`, never ``eval``.

    >>> evaluate_expression("(1,200 - 850) / 2", [1200, 850, 2])
    175.0
    >>> evaluate_expression("120 × 3", [120])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragmeter.testset._arithmetic.CalculationError: the expression uses 3, not one of the ...
    """
    text = number_text(expression)
    for symbol, replacement in _OPERATORS.items():
        text = text.replace(symbol, replacement)
    text = text.replace("%", "")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        detail = f"not an arithmetic expression: {expression!r}"
        raise CalculationError("bad expression", detail) from None
    shown = ", ".join(_format(v) for v in allowed)

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            if isinstance(node.value, bool):
                raise CalculationError("bad expression", f"not a number: {node.value!r}")
            number = float(node.value)
            if not any(math.isclose(number, a, rel_tol=1e-9, abs_tol=1e-12) for a in allowed):
                raise CalculationError(
                    "bad expression",
                    f"the expression uses {_format(number)}, not one of the values ({shown})",
                )
            return number
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Div) and right == 0:
                raise CalculationError("bad expression", f"division by zero in {expression!r}")
            return _BINARY[type(node.op)](left, right)
        raise CalculationError(
            "bad expression", f"only numbers, + - * / and parentheses are allowed: {expression!r}"
        )

    return value(tree.body)


def states_result(answer: str, result: float) -> bool:
    """Whether ``answer`` holds ``result`` at the precision it shows: a number written with
    ``d`` decimals matches within half a unit of its last digit (``33.33`` or ``33`` for
    33.333...), and ``25%`` matches 0.25.

    >>> states_result("120 - 85 = 35 units", 35), states_result("about 33.33", 100 / 3)
    (True, True)
    >>> states_result("相差 34 台", 35)
    False
    """
    for match in NUMBER.finditer(number_text(answer)):
        written = match.group(0).rstrip("%")
        number = float(written)
        decimals = len(written.partition(".")[2])
        tolerance = 0.5 * 10.0**-decimals + 1e-9
        candidates = [(number, tolerance)]
        if match.group(1):
            candidates.append((number / 100, tolerance / 100))
        if any(abs(c - result) <= t for c, t in candidates):
            return True
    return False


def check_calculation(
    values: Sequence[Value], expression: str, answer: str, passages: Sequence[str]
) -> float:
    """The result of a calculation question, after checking it; raises
    :class:`CalculationError` (reason ``values not in passages``, ``bad expression`` or
    ``arithmetic wrong``) when it fails.

    >>> passages = ["Plan A costs 1,200 dollars.", "Plan B costs 850 dollars."]
    >>> values = [Value("1,200", 1), Value("850", 2)]
    >>> check_calculation(values, "1200 - 850", "A costs 1200 - 850 = 350 dollars more.", passages)
    350.0
    >>> check_calculation([Value("900", 1)], "900", "900", passages)
    Traceback (most recent call last):
    ...
    ragmeter.testset._arithmetic.CalculationError: value '900' is not in passage 1
    """
    if not values:
        raise CalculationError("values not in passages", "the judge listed no values")
    numbers: list[float] = []
    for item in values:
        number = parse_number(item.text)
        if number is None:
            raise CalculationError("values not in passages", f"value {item.text!r} is no number")
        if not 1 <= item.passage <= len(passages):
            raise CalculationError(
                "values not in passages",
                f"value {item.text!r} cites passage {item.passage}, there are {len(passages)}",
            )
        if not any(math.isclose(number, n) for n in numbers_in(passages[item.passage - 1])):
            raise CalculationError(
                "values not in passages", f"value {item.text!r} is not in passage {item.passage}"
            )
        numbers.append(number)
    result = evaluate_expression(expression, numbers)
    if not states_result(answer, result):
        raise CalculationError(
            "arithmetic wrong",
            f"{expression} = {_format(result)}, but the answer says {answer!r}",
        )
    return result


def _format(number: float) -> str:
    return f"{number:g}" if abs(number) < 1e15 else repr(number)
