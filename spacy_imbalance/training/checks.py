"""The numbers a training run cannot take: every numeric setting of this
package's optimizer, schedules and time budget goes through ``check_number``
(or ``check_number_or_schedule``), and every step's loss through
``check_finite_loss``.

The annotations of a registered function are not enough: confection checks
the arguments against them but calls the function with the values as given,
and it lets a string through where a float is annotated. spaCy reads an
override it cannot parse as JSON (``--x.minutes nan``) or a quoted one
(``"5"``) as text, which then failed deep inside (a TypeError on ``>``,
thinc's "Invalid schedule"). A number out of range failed later still: Adam
with ``beta1 = 1`` divides by zero, with ``eps = 0`` or ``grad_clip < 0`` it
writes NaN weights, with ``beta2 = 1`` it never moves.
"""
import math
from collections.abc import Iterator as IteratorABC
from numbers import Integral, Real
from typing import Any, Generator, Iterator, Optional, Union

Number = Union[int, float]
# thinc trains in float32: a setting above this overflows to inf in the
# weights' arithmetic, and a positive one below 1e-38 rounds to 0 (the
# losses bound their settings the same way, losses/_base.py)
FLOAT32_LIMIT = 1e38
FLOAT32_SMALLEST = 1e-38


def check_number(
    name: str,
    value: Any,
    *,
    low: Optional[Number] = None,
    high: Optional[Number] = None,
    low_open: bool = False,
    high_open: bool = False,
    integer: bool = False,
    unit: str = "",
    note: str = "",
) -> Number:
    """``value`` as a Python int (``integer``) or float when it is a finite
    number in the interval from ``low`` to ``high`` (None: unbounded, each
    end closed unless ``*_open``); else a ValueError naming the setting, the
    interval and the value. A bool, a string ("5" included: it is not
    converted, a config or override should hold the number itself) or, for
    ``integer``, a float is refused.

    name (str): What the message calls the setting, with its owner
        (``"SplitRateAdam.v1: beta1"``).
    unit (str): What the number counts (``"minutes"``), for the message.
    note (str): Why the interval is what it is, put after it in the message.
    """
    requirement = _requirement(low, high, low_open, high_open, integer, unit) + note
    if isinstance(value, bool) or not isinstance(value, Integral if integer else Real):
        raise ValueError(f"{name} must be {requirement}, got {value!r} ({_kind_of(value)})")
    try:
        # with ``integer`` the value is Integral (anything else was refused
        # above); the isinstance tells the type checker so
        number: Number = int(value) if integer and isinstance(value, Integral) else float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    above = low is None or (number > low if low_open else number >= low)
    below = high is None or (number < high if high_open else number <= high)
    if not (math.isfinite(number) and above and below):
        raise ValueError(f"{name} must be {requirement}, got {value!r}")
    return number


def check_number_or_schedule(name: str, value: Any, **bounds: Any) -> Union[Number, Generator[Number, None, None]]:
    """A setting thinc's optimizer takes as a number or a schedule (an
    iterator of numbers, or a list it turns into one): a number checked now
    (see ``check_number``, which ``bounds`` are passed to), or the schedule
    with each value checked as the optimizer draws it (the first at once)."""
    if isinstance(value, list):
        value = iter(value)
    if isinstance(value, IteratorABC):
        return _checked_schedule(name, value, bounds)
    return check_number(name, value, **bounds)


def _checked_schedule(name: str, schedule: Iterator[Any], bounds: Any) -> Generator[Number, None, None]:
    for step, value in enumerate(schedule):
        yield check_number(f"{name} (its schedule's value {step})", value, **bounds)


def check_finite_loss(owner: str, loss: Any) -> None:
    """A ValueError naming ``owner`` and the loss when a training step's loss
    is NaN or infinite: its gradients would be too, and the optimizer would
    write them into the weights. Raised before they are applied, so that
    ``spacy train`` exits with an error instead of saving a NaN model."""
    if not math.isfinite(float(loss)):
        raise ValueError(
            f"{owner}: the loss of this training step is {float(loss)}, so its gradients are not finite either; "
            "training stops before they reach the weights. Lower the learning rate, check the optimizer's "
            "settings and the loss's, or look for a batch whose scores overflow"
        )


def _requirement(
    low: Optional[Number], high: Optional[Number], low_open: bool, high_open: bool, integer: bool, unit: str
) -> str:
    kind = ("a whole number" if integer else "a number") + (f" of {unit}" if unit else "")
    if low is not None and high is not None:
        return f"{kind} in {'(' if low_open else '['}{_show(low)}, {_show(high)}{')' if high_open else ']'}"
    finite = "" if integer else "finite "
    kind = kind.replace("a ", f"a {finite}", 1)
    if low is not None:
        return f"{kind} {'>' if low_open else '>='} {_show(low)}"
    if high is not None:
        return f"{kind} {'<' if high_open else '<='} {_show(high)}"
    return kind


def _show(bound: Number) -> str:
    return str(bound) if isinstance(bound, int) else f"{bound:g}"


def _kind_of(value: Any) -> str:
    if not isinstance(value, str):
        return f"a {type(value).__name__}"
    try:
        readable = math.isfinite(float(value))
    except ValueError:
        readable = False
    # a quoted number in the config or an override: spaCy keeps it as text
    return "a string: write the number without quotes" if readable else "a string"
