"""Finite differences, the check of every analytic gradient in the tests."""
from typing import Any, Callable

import numpy


def numeric_gradient(func: Callable[[Any], float], x: Any, eps: float = 1e-6) -> Any:
    """The central difference of ``func`` in each entry of ``x`` (``func``
    gets a perturbed copy; ``x`` is left as it is)."""
    grad = numpy.zeros_like(x)
    for index in numpy.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (func(up) - func(down)) / (2 * eps)
    return grad
