"""A fake cupy over numpy, to run the package's device code in CI without a GPU.

``FakeCupyOps`` is thinc's ``NumpyOps`` with ``xp`` swapped for ``FAKE_CUPY``,
a namespace that computes with numpy but hands out ``DeviceArray``s: arrays
that behave as cupy arrays do where the host is concerned.

* **Implicit conversions to host objects raise** ``HostSyncError``:
  ``float``/``int``/``bool``/``operator.index``, ``.item()``, ``.tolist()``,
  ``.tobytes()``, iterating a 0-d or 1-d array, ``numpy.asarray(x)`` (numpy
  asks ``__array__``, which refuses). On cupy most of these work but wait for
  the device; the fake makes each one explicit. ``HostSyncError`` is a
  ``RuntimeError``, not a ``TypeError``, because numpy 2 swallows TypeError
  in some of its protocols and would fall back to a silent host path.
* **Host arrays where a device array is needed raise** ``MixedDeviceError``
  (a numpy array in a ufunc or an ``xp`` function with device arrays): cupy
  raises there too (a TypeError).
* **What cupy does but pays for is counted** in ``FAKE_CUPY.counts``
  (``TransferCounts``):

  - ``copies``: explicit device-to-host copies: ``ops.to_numpy``,
    ``xp.asnumpy``, ``x.get()``, ``thinc.util.to_numpy``, and the copy of the
    lengths that ``Ops.unflatten`` makes when they are a device array;
  - ``syncs``: results whose *size* depends on device data, so the host
    waits for the device: ``nonzero``/``flatnonzero``/``argwhere``,
    ``unique``, ``bincount``, ``extract``/``compress``, indexing with a boolean
    mask, and ``split`` at device indices (one per index);
  - ``uploads``: host-to-device copies (``ops.asarray*``, ``xp.asarray`` of
    host data, host index arrays);
  - ``loops``: kernels launched once per element of a host sequence
    (``cupy.repeat`` with a list of repeats runs one copy per element);
  - ``calls``: ``xp`` function calls by name (e.g. how many ``arange``);
  - ``float64``: device arrays computed in float64, which GPUs run at a
    fraction of their float32 speed.

  ``round_trips`` (copies + syncs) is what the sync-budget tests hold
  constant in the batch size.

The namespace is what code written for cupy sees: ``ops.xp`` and
``thinc.api.get_array_module(x)`` both give ``FAKE_CUPY`` for a
``DeviceArray``, and numpy functions called on one dispatch to it (as numpy
functions on cupy arrays dispatch to cupy, NEP 18). ``fake_device()`` patches
the few thinc globals this needs (``thinc.util.has_cupy``/``cupy``,
``thinc.types.get_array_module``, ``thinc.backends.CupyOps``) for its block.

thinc's own ops run on plain numpy arrays: every ``NumpyOps`` method unwraps
its device arguments, runs, and wraps what it returns, so only code outside
the ops (this package's, and thinc's layer code) is held to the rules. Those
ops are numpy's, not cupy's kernels: the fake checks *where* data lives and
how often it moves, not cupy's numerics.

What it cannot see: a numpy function that cupy lacks (it runs here), the
order of floating-point sums (GPU results differ in the last bits, see
``spacy_imbalance.spans.negatives``'s note on seeds), and memory use.
"""
import functools
import inspect
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, Iterator, Optional, Tuple
from unittest import mock

import numpy
import thinc.backends
import thinc.types
import thinc.util
from numpy.lib.mixins import NDArrayOperatorsMixin
from thinc.api import NumpyOps, Ops, get_current_ops, set_current_ops
from thinc.types import Padded, Ragged

__all__ = [
    "HostSyncError",
    "MixedDeviceError",
    "TransferCounts",
    "DeviceArray",
    "FAKE_CUPY",
    "FakeCupyOps",
    "fake_device",
    "device",
    "DEVICES",
    "has_cupy_gpu",
]

has_cupy_gpu: bool = thinc.util.has_cupy_gpu
# "cupy" runs on a real GPU only where one is importable
DEVICES: Tuple[str, ...] = ("numpy", "fake", "cupy")


class HostSyncError(RuntimeError):
    """A device array was turned into a host object implicitly."""


class MixedDeviceError(RuntimeError):
    """A host array met device arrays in an operation that cupy refuses."""


@dataclass
class TransferCounts:
    """What the fake device counted (see the module docstring)."""

    copies: int = 0
    syncs: int = 0
    uploads: int = 0
    loops: int = 0
    float64: int = 0
    calls: Counter = field(default_factory=Counter)

    @property
    def round_trips(self) -> int:
        """Device-to-host transfers of either kind: copies and syncs."""
        return self.copies + self.syncs

    def minus(self, before: "TransferCounts") -> "TransferCounts":
        diff = {f.name: getattr(self, f.name) - getattr(before, f.name) for f in fields(self) if f.name != "calls"}
        return TransferCounts(**diff, calls=self.calls - before.calls)

    def snapshot(self) -> "TransferCounts":
        return TransferCounts(self.copies, self.syncs, self.uploads, self.loops, self.float64, Counter(self.calls))


# -- moving between the fake device and the host ---------------------------


def _map_arrays(obj: Any, is_array: Callable[[Any], bool], convert: Callable[[Any], Any], dicts: bool) -> Any:
    """``obj`` with ``convert(x)`` for every ``x`` that ``is_array``, looking
    recursively into lists, tuples (named ones too), Ragged, Padded and, with
    ``dicts``, dict values. ``_unwrap`` and ``_to_device`` walk the same
    containers, so they share this walk."""

    def walk(x: Any) -> Any:
        return _map_arrays(x, is_array, convert, dicts)

    if is_array(obj):
        return convert(obj)
    if isinstance(obj, (list, tuple)):
        items = [walk(x) for x in obj]
        return type(obj)(items) if not hasattr(obj, "_fields") else type(obj)(*items)
    if dicts and isinstance(obj, dict):
        return {k: walk(v) for k, v in obj.items()}
    if isinstance(obj, Ragged):
        return Ragged(walk(obj.data), walk(obj.lengths))
    if isinstance(obj, Padded):
        return Padded(*(walk(x) for x in (obj.data, obj.size_at_t, obj.lengths, obj.indices)))
    return obj


def _unwrap(obj: Any) -> Any:
    """Plain numpy arrays for the device arrays in ``obj`` (recursively
    through lists, tuples, dicts, Ragged and Padded); no copy."""
    return _map_arrays(obj, lambda x: isinstance(x, DeviceArray), lambda x: x._data, dicts=True)


def _wrap(array: Any) -> "DeviceArray":
    """A device array for one numpy array or scalar, counting float64."""
    if array.dtype == numpy.float64:
        FAKE_CUPY.counts.float64 += 1
    return DeviceArray(numpy.asarray(array))


def _to_device(obj: Any) -> Any:
    """``_unwrap``'s inverse: numpy arrays and numpy scalars (a reduction's
    result, which cupy gives as a 0-d array) become device arrays; dicts
    pass through unchanged."""
    return _map_arrays(obj, lambda x: isinstance(x, (numpy.ndarray, numpy.generic)), _wrap, dicts=False)


def _holds_host_data(obj: Any) -> bool:
    """Whether ``obj`` is host data that would have to be uploaded: a numpy
    array, or a list/tuple that holds numbers or numpy arrays."""
    if isinstance(obj, DeviceArray):
        return False
    if isinstance(obj, numpy.ndarray):
        return True
    if isinstance(obj, (list, tuple)):
        return not obj or any(not isinstance(x, DeviceArray) for x in obj)
    return isinstance(obj, (int, float, bool, numpy.generic))


def _host_operands(args: Any) -> list:
    """The host arrays (numpy, at least 1-d) among ``args``, looking into
    lists and tuples (``concatenate``'s sequence): cupy takes none of them
    where it computes on device arrays. Python and numpy scalars are fine."""
    found = []
    for arg in args:
        if isinstance(arg, numpy.ndarray) and arg.ndim > 0:
            found.append(arg)
        elif isinstance(arg, (list, tuple)) and not hasattr(arg, "_fields"):
            found.extend(_host_operands(arg))
    return found


def _refuse_host_operands(name: str, args: Any, kwargs: Dict[str, Any]) -> None:
    host = _host_operands(list(args) + list(kwargs.values()))
    if host:
        shapes = ", ".join(str(a.shape) for a in host)
        raise MixedDeviceError(
            f"{name}: host numpy array(s) of shape {shapes} mixed with device arrays; cupy refuses them "
            "(upload with ops.asarray / xp.asarray first)"
        )


# -- the namespace ---------------------------------------------------------

# cupy has to know how large these results are before it can allocate them
_SIZE_FROM_DATA = frozenset(
    {"nonzero", "flatnonzero", "argwhere", "unique", "unique_values", "unique_counts", "bincount", "extract",
     "compress"}
)
_UPLOADS = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray", "asfortranarray"})
_SPLITS = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit"})


class _Namespace:
    """The functions of a numpy (sub)module, or the methods of a numpy random
    generator, run on device arrays and counted by ``prefix`` + their name.
    Non-callables (dtypes, constants, ``finfo``) pass through."""

    def __init__(self, module: Any, counts: Callable[[], TransferCounts], prefix: str = "") -> None:
        self._module = module
        self._counts = counts
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(self._module, name)
        if isinstance(value, numpy.ufunc):
            return _Ufunc(value, self._counts)
        if callable(value) and not isinstance(value, type):
            return functools.partial(device_call, self._counts(), value, self._prefix + name)
        return value


class _Ufunc:
    """A numpy ufunc whose call and methods (``reduce``, ``at``, ...) take
    device arrays."""

    def __init__(self, ufunc: numpy.ufunc, counts: Callable[[], TransferCounts]) -> None:
        self._ufunc = ufunc
        self._counts = counts

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return device_call(self._counts(), self._ufunc, self._ufunc.__name__, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ufunc, name)
        if callable(value) and not name.startswith("_"):
            return functools.partial(device_call, self._counts(), value, f"{self._ufunc.__name__}.{name}")
        return value


def device_call(counts: TransferCounts, func: Callable, name: str, *args: Any, **kwargs: Any) -> Any:
    """Run the numpy function ``func`` as the cupy function ``name`` would:
    refuse host operands, count uploads, syncs and per-element launches,
    and return device arrays."""
    counts.calls[name] += 1
    if name in _UPLOADS:
        if args and _holds_host_data(args[0]):
            counts.uploads += 1
        return _to_device(func(*_unwrap(args), **_unwrap(kwargs)))
    if name == "asnumpy":
        counts.copies += 1
        return numpy.array(_unwrap(args[0]))
    if name == "repeat":
        _count_repeat(counts, args, kwargs)
    elif name in _SPLITS:
        _count_split(counts, args, kwargs)
    else:
        _refuse_host_operands(name, args, kwargs)
    if name in _SIZE_FROM_DATA:
        counts.syncs += 1
    return _to_device(func(*_unwrap(args), **_unwrap(kwargs)))


def _count_repeat(counts: TransferCounts, args: tuple, kwargs: Dict[str, Any]) -> None:
    repeats = args[1] if len(args) > 1 else kwargs.get("repeats")
    if isinstance(repeats, DeviceArray):
        raise MixedDeviceError("repeat: cupy takes the repeats as a host int or sequence, not a device array")
    if not isinstance(repeats, (int, numpy.integer)):
        # cupy.repeat copies one slice per element of a repeats sequence
        counts.loops += len(repeats)


def _count_split(counts: TransferCounts, args: tuple, kwargs: Dict[str, Any]) -> None:
    where = args[1] if len(args) > 1 else kwargs.get("indices_or_sections")
    if isinstance(where, DeviceArray):
        # cupy turns each device index into a Python int
        counts.syncs += max(len(where), 1)


class _Random:
    """``xp.random``: generators whose draws are device arrays (drawn on the
    device: nothing is uploaded). The streams are numpy's; cupy's differ."""

    def __init__(self, counts: Callable[[], TransferCounts]) -> None:
        self._counts = counts
        self._functions = _Namespace(numpy.random, counts)

    # a generator's draws are counted as "random.<method>"
    def default_rng(self, seed: Any = None) -> _Namespace:
        return _Namespace(numpy.random.default_rng(seed), self._counts, prefix="random.")

    def RandomState(self, seed: Any = None) -> _Namespace:  # noqa: N802 (numpy's name)
        return _Namespace(numpy.random.RandomState(seed), self._counts, prefix="random.")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._functions, name)


class FakeCupy(_Namespace):
    """The fake ``cupy`` module (``FAKE_CUPY``): numpy's functions on device
    arrays, plus cupy's ``asnumpy`` (a counted copy), ``ndarray`` (the
    device array type) and ``random``/``linalg`` sub-namespaces."""

    def __init__(self) -> None:
        self.counts = TransferCounts()
        get_counts = lambda: self.counts  # noqa: E731 (reset() replaces the object)
        super().__init__(numpy, get_counts)
        self.ndarray = DeviceArray
        self.random = _Random(get_counts)
        self.linalg = _Namespace(numpy.linalg, get_counts)

    def asnumpy(self, x: Any) -> numpy.ndarray:
        return device_call(self.counts, numpy.asarray, "asnumpy", x)

    def reset(self) -> None:
        self.counts = TransferCounts()


# -- the array -------------------------------------------------------------

# ndarray attributes that are metadata the host holds anyway
_METADATA = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize", "strides", "flags"})
# ndarray attributes that are arrays on the device
_DEVICE_ATTRIBUTES = frozenset({"real", "imag", "mT"})
# ndarray methods that hand data to the host
_HOST_METHODS = frozenset({"tolist", "item", "tobytes", "tofile", "dump", "dumps"})


class DeviceArray(NDArrayOperatorsMixin):
    """A numpy array that stands for a cupy array (see the module docstring).

    Arithmetic, comparisons, indexing, ndarray methods and numpy functions
    work and give device arrays; conversions to host objects raise
    ``HostSyncError``; ``get()`` is an explicit, counted copy."""

    __slots__ = ("_data",)

    def __init__(self, data: numpy.ndarray) -> None:
        if isinstance(data, DeviceArray):
            data = data._data
        self._data = data

    # metadata
    @property
    def shape(self) -> Tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> numpy.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def T(self) -> "DeviceArray":  # noqa: N802 (numpy's name)
        return DeviceArray(self._data.T)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        # for test reports only: a repr on cupy copies too
        return f"DeviceArray({self._data!r})"

    # explicit copies
    def get(self) -> numpy.ndarray:
        return FAKE_CUPY.asnumpy(self)

    # implicit conversions: refused
    def _refuse(self, what: str) -> Any:
        raise HostSyncError(
            f"{what} of a device array of shape {self.shape} waits for the device and copies to the host "
            "implicitly; copy explicitly (ops.to_numpy) once per batch"
        )

    def __array__(self, dtype: Any = None, copy: Any = None) -> numpy.ndarray:
        return self._refuse("numpy.asarray")

    def __float__(self) -> float:
        return self._refuse("float()")

    def __int__(self) -> int:
        return self._refuse("int()")

    def __index__(self) -> int:
        return self._refuse("Using as an index (operator.index)")

    def __bool__(self) -> bool:
        return self._refuse("bool()")

    def __complex__(self) -> complex:
        return self._refuse("complex()")

    def __contains__(self, value: Any) -> bool:
        return self._refuse("`in`")

    def __iter__(self) -> Iterator["DeviceArray"]:
        if self.ndim < 2:
            self._refuse("Iterating to scalars")
        # rows of a matrix are device views, as on cupy
        return (DeviceArray(row) for row in self._data)

    # numpy protocols: ufuncs and functions stay on the device
    def __array_ufunc__(self, ufunc: numpy.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        func = ufunc if method == "__call__" else getattr(ufunc, method)
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        return device_call(FAKE_CUPY.counts, func, name, *inputs, **kwargs)

    def __array_function__(self, func: Callable, types: Any, args: tuple, kwargs: Dict[str, Any]) -> Any:
        return device_call(FAKE_CUPY.counts, func, func.__name__, *args, **kwargs)

    # indexing
    def __getitem__(self, key: Any) -> "DeviceArray":
        _count_index(key)
        return _to_device(self._data[_unwrap(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        _count_index(key)
        if isinstance(value, (numpy.ndarray, list, tuple)) and _holds_host_data(value):
            FAKE_CUPY.counts.uploads += 1
        self._data[_unwrap(key)] = _unwrap(value)

    # ndarray methods: named ones are forwarded, dunders never are
    def __getattr__(self, name: str) -> Any:
        if name in _HOST_METHODS:
            self._refuse(f".{name}()")
        if name.startswith("_"):
            raise AttributeError(name)
        if name in _METADATA:
            return getattr(self._data, name)
        if name in _DEVICE_ATTRIBUTES:
            return _to_device(getattr(self._data, name))
        value = getattr(self._data, name)
        if not callable(value):
            # .data, .ctypes, .flat, .base: host access to the memory
            raise AttributeError(f"DeviceArray has no host attribute {name!r}")
        if name == "view":
            return self._view
        return functools.partial(device_call, FAKE_CUPY.counts, value, name)

    def _view(self, dtype: Any = None, *args: Any) -> "DeviceArray":
        if isinstance(dtype, type) and issubclass(dtype, numpy.ndarray):
            self._refuse(f".view({dtype.__name__})")
        return DeviceArray(self._data.view(dtype, *args) if dtype is not None else self._data.view())


FAKE_CUPY = FakeCupy()


def _count_index(key: Any) -> None:
    """Indexing with a boolean mask waits for its count; a host index array
    is uploaded (and a host mask both)."""
    counts = FAKE_CUPY.counts
    for part in key if isinstance(key, tuple) else (key,):
        if isinstance(part, DeviceArray) and part.dtype == bool:
            counts.syncs += 1
        elif isinstance(part, (numpy.ndarray, list)):
            counts.uploads += 1
            if numpy.asarray(part).dtype == bool:
                counts.syncs += 1


# -- the ops ---------------------------------------------------------------

# NumpyOps methods that are not array operations
_NOT_WRAPPED = frozenset(
    {"_get_batch", "_get_batch_sizes", "minibatch", "multibatch", "cblas", "to_numpy", "unflatten"}
)


class FakeCupyOps(NumpyOps):
    """``NumpyOps`` whose arrays live on the fake device (``FAKE_CUPY``).

    ``ops.xp`` is the fake namespace; every ops method takes and returns
    device arrays but computes on plain numpy (thinc's own code is trusted,
    the package's is checked). ``to_numpy`` is the explicit, counted copy;
    ``asarray*`` of host data count an upload. Use inside ``fake_device()``.
    """

    name = "fake_cupy"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._depth = 0

    @property
    def xp(self) -> Any:  # type: ignore[override]
        # thinc's own code, running inside an ops method, sees numpy
        return numpy if getattr(self, "_depth", 0) else FAKE_CUPY

    @property
    def counts(self) -> TransferCounts:
        return FAKE_CUPY.counts

    @contextmanager
    def measure(self) -> Iterator[TransferCounts]:
        """Count what the block moves: the yielded counts are filled in on exit."""
        before = FAKE_CUPY.counts.snapshot()
        result = TransferCounts()
        yield result
        diff = FAKE_CUPY.counts.minus(before)
        for f in fields(diff):
            setattr(result, f.name, getattr(diff, f.name))

    def to_numpy(self, data: Any, *, byte_order: Optional[str] = None) -> Any:
        if isinstance(data, DeviceArray):
            FAKE_CUPY.counts.copies += 1
            data = numpy.array(data._data)
        return super().to_numpy(data, byte_order=byte_order)

    def unflatten(self, X: Any, lengths: Any, pad: int = 0) -> Any:
        if isinstance(lengths, DeviceArray):
            # Ops.unflatten copies the lengths back (cupy.split needs host indices)
            FAKE_CUPY.counts.copies += 1
        return self._run(NumpyOps.unflatten, X, lengths, pad=pad)

    def _run(self, method: Callable, *args: Any, **kwargs: Any) -> Any:
        if self._depth:
            return method(self, *args, **kwargs)
        if method.__name__.startswith("asarray") and args and _holds_host_data(args[0]):
            FAKE_CUPY.counts.uploads += 1
        self._depth += 1
        try:
            result = method(self, *_unwrap(args), **_unwrap(kwargs))
        finally:
            self._depth -= 1
        return _to_device(result)


def _on_device(method: Callable) -> Callable:
    @functools.wraps(method)
    def run(self: FakeCupyOps, *args: Any, **kwargs: Any) -> Any:
        return self._run(method, *args, **kwargs)

    return run


for _name, _method in inspect.getmembers(NumpyOps, inspect.isroutine):
    if not _name.startswith("__") and _name not in _NOT_WRAPPED:
        setattr(FakeCupyOps, _name, _on_device(_method))


@contextmanager
def fake_device() -> Iterator[FakeCupyOps]:
    """Make ``FakeCupyOps`` the current ops for the block, with counts from 0,
    and let thinc treat ``DeviceArray`` as a cupy array: ``get_array_module``
    returns ``FAKE_CUPY`` for it, ``to_numpy`` copies it with ``.get()`` and
    ``get_array_ops`` (the optimizer's) gives a ``FakeCupyOps``."""
    ops = FakeCupyOps()
    previous = get_current_ops()
    FAKE_CUPY.reset()
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(thinc.util, "has_cupy", True))
        stack.enter_context(mock.patch.object(thinc.util, "cupy", FAKE_CUPY))
        stack.enter_context(mock.patch.object(thinc.types, "get_array_module", thinc.util.get_array_module))
        stack.enter_context(mock.patch.object(thinc.backends, "CupyOps", FakeCupyOps))
        set_current_ops(ops)
        try:
            yield ops
        finally:
            set_current_ops(previous)


@contextmanager
def device(name: str) -> Iterator[Ops]:
    """The current ops for the block: "numpy", "fake" (``fake_device``) or
    "cupy" (a real GPU; callers skip it where ``has_cupy_gpu`` is False)."""
    if name == "fake":
        with fake_device() as ops:
            yield ops
        return
    if name == "cupy":
        from thinc.api import CupyOps

        new_ops: Ops = CupyOps()
    elif name == "numpy":
        new_ops = NumpyOps()
    else:
        raise ValueError(f"unknown device {name!r}: one of {', '.join(DEVICES)}")
    previous = get_current_ops()
    set_current_ops(new_ops)
    try:
        yield new_ops
    finally:
        set_current_ops(previous)


def cycled(items: list, n: int) -> list:
    """``n`` items cycling through ``items``: a batch of any size from a few examples."""
    return [items[i % len(items)] for i in range(n)]


def pipe_counts(ops: FakeCupyOps, pipe: Any, docs: list) -> TransferCounts:
    """What ``pipe.predict`` and ``pipe.set_annotations`` move on ``docs``, together."""
    with ops.measure() as counts:
        pipe.set_annotations(docs, pipe.predict(docs))
    return counts


def update_counts(ops: FakeCupyOps, nlp: Any, examples: list, n_examples: int, n_updates: int = 1) -> TransferCounts:
    """What ``n_updates`` of ``nlp.update`` move on ``n_examples`` examples cycled from ``examples``."""
    batch = cycled(examples, n_examples)
    with ops.measure() as counts:
        for _ in range(n_updates):
            nlp.update(batch, sgd=None)
    return counts


def seeded_initialize(nlp: Any, examples: list) -> Any:
    """Initialise ``nlp`` on ``examples`` with seed 0: its optimizer."""
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    return nlp.initialize(get_examples=lambda: examples)


def seeded_updates(nlp: Any, examples: list, name: str, n_updates: int, drop: float = 0.1) -> list:
    """Initialise ``nlp`` with seed 0 and update it ``n_updates`` times with
    dropout ``drop`` (the device tests' 0.1 unless told; the pipeline tests
    train without): the losses of component ``name``, one per update."""
    optimizer = seeded_initialize(nlp, examples)
    history = []
    for _ in range(n_updates):
        losses: Dict[str, float] = {}
        nlp.update(examples, sgd=optimizer, losses=losses, drop=drop)
        history.append(losses[name])
    return history
