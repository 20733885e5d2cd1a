"""The fake cupy of tests/device.py: it must refuse what cupy cannot do
cheaply, count what it can, and compute what numpy computes."""
import operator

import numpy
import pytest
import thinc.util
from thinc.api import NumpyOps, get_array_module, get_current_ops, to_numpy

from .device import FAKE_CUPY, DeviceArray, HostSyncError, MixedDeviceError, fake_device


def test_host_sync_error_is_not_a_type_error():
    # numpy 2 swallows TypeError in some protocols and falls back to the host
    assert issubclass(HostSyncError, RuntimeError) and not issubclass(HostSyncError, TypeError)
    assert not issubclass(MixedDeviceError, TypeError)


IMPLICIT = {
    "float": lambda x: float(x.sum()),
    "int": lambda x: int(x[0]),
    "bool": lambda x: bool(x.any()),
    "index": lambda x: ["a", "b", "c"][x.argmax()],
    "operator.index": lambda x: operator.index(x[0]),
    "item": lambda x: x.sum().item(),
    "tolist": lambda x: x.tolist(),
    "tobytes": lambda x: x.tobytes(),
    "iterate": lambda x: list(x),
    "numpy.asarray": lambda x: numpy.asarray(x),
    "numpy.array in a list": lambda x: numpy.array([x, x]),
    "in": lambda x: 1 in x,
    "view as ndarray": lambda x: x.view(numpy.ndarray),
    "host buffer": lambda x: x.data,
}


@pytest.mark.parametrize("convert", IMPLICIT.values(), ids=IMPLICIT.keys())
def test_implicit_host_conversions_raise(fake_ops, convert):
    x = fake_ops.asarray1i([1, 2, 3])
    with pytest.raises((HostSyncError, AttributeError)):
        convert(x)


def test_explicit_copies_are_counted_and_land_on_the_host(fake_ops):
    x = fake_ops.asarray1f([1.5, 2.5])
    with fake_ops.measure() as counts:
        copies = [fake_ops.to_numpy(x), fake_ops.xp.asnumpy(x), x.get(), to_numpy(x)]
    assert counts.copies == 4 and counts.syncs == 0
    for copy in copies:
        assert type(copy) is numpy.ndarray and copy.tolist() == [1.5, 2.5]


def test_results_whose_size_depends_on_data_are_syncs(fake_ops):
    xp = fake_ops.xp
    x = fake_ops.asarray1i([0, 3, 0, 1])
    with fake_ops.measure() as counts:
        nonzero = xp.nonzero(x)[0]
        masked = x[x > 0]
        counted = xp.bincount(x, minlength=4)
        unique = xp.unique(x)
    assert counts.syncs == 4 and counts.copies == 0
    assert [fake_ops.to_numpy(a).tolist() for a in (nonzero, masked, counted, unique)] == [
        [1, 3],
        [3, 1],
        [2, 1, 0, 1],
        [0, 1, 3],
    ]


def test_uploads_are_counted(fake_ops):
    with fake_ops.measure() as counts:
        a = fake_ops.asarray1i(numpy.arange(3))
        b = fake_ops.xp.asarray([1, 2, 3])
        fake_ops.asarray1i(a)  # already on the device
    assert counts.uploads == 2 and isinstance(a, DeviceArray) and isinstance(b, DeviceArray)


def test_repeat_with_a_host_list_launches_per_element(fake_ops):
    xp = fake_ops.xp
    with fake_ops.measure() as counts:
        out = xp.repeat(xp.arange(3), [1, 0, 2])
    assert counts.loops == 3 and fake_ops.to_numpy(out).tolist() == [0, 2, 2]
    with pytest.raises(MixedDeviceError):
        xp.repeat(xp.arange(3), xp.asarray([1, 0, 2]))


def test_host_arrays_are_refused_next_to_device_arrays(fake_ops):
    x = fake_ops.asarray1f([1.0, 2.0])
    with pytest.raises(MixedDeviceError):
        x + numpy.ones(2, dtype="float32")
    with pytest.raises(MixedDeviceError):
        numpy.ones(2, dtype="float32") * x
    with pytest.raises(MixedDeviceError):
        fake_ops.xp.concatenate([x, numpy.ones(2, dtype="float32")])
    # scalars are fine, as on cupy
    assert fake_ops.to_numpy(x * numpy.float32(2) + 1).tolist() == [3.0, 5.0]


def test_everything_computed_stays_on_the_device(fake_ops):
    x = fake_ops.asarray2f([[1.0, 5.0], [3.0, 2.0]])
    results = [
        x + 1,
        x.sum(),
        x.argmax(axis=1),
        x[0, 1],
        numpy.where(x > 2, x, 0),
        numpy.concatenate([x, x]),
        fake_ops.xp.exp(x),
        fake_ops.softmax(x),
        fake_ops.flatten([x, x]),
    ]
    assert all(isinstance(r, DeviceArray) for r in results)
    assert get_array_module(x) is FAKE_CUPY and fake_ops.xp is FAKE_CUPY
    assert fake_ops.to_numpy(results[2]).tolist() == [1, 0]
    assert fake_ops.to_numpy(results[3]) == 5.0


def test_ops_compute_what_numpy_ops_compute(fake_ops):
    rng = numpy.random.default_rng(0)
    X, W = rng.normal(size=(4, 3)).astype("f"), rng.normal(size=(2, 3)).astype("f")
    expected = NumpyOps().gemm(X, W, trans2=True)
    got = fake_ops.gemm(fake_ops.asarray2f(X), fake_ops.asarray2f(W), trans2=True)
    numpy.testing.assert_array_equal(fake_ops.to_numpy(got), expected)


def test_float64_on_the_device_is_counted(fake_ops):
    x = fake_ops.asarray1f([1.0, 2.0])
    counts_i64 = fake_ops.asarray1i([1, 2]).astype("int64")
    with fake_ops.measure() as counts:
        x * 2
        x / fake_ops.xp.maximum(counts_i64, 1).astype(x.dtype)
    assert counts.float64 == 0
    with fake_ops.measure() as counts:
        x / fake_ops.xp.maximum(counts_i64, 1)  # float32 / int64 is float64
    assert counts.float64 == 1


def test_unflatten_copies_device_lengths_back(fake_ops):
    X = fake_ops.alloc2f(5, 2)
    with fake_ops.measure() as counts:
        fake_ops.unflatten(X, numpy.asarray([2, 3], dtype="int32"))
    assert counts.copies == 0
    with fake_ops.measure() as counts:
        parts = fake_ops.unflatten(X, fake_ops.asarray1i([2, 3]))
    assert counts.copies == 1 and [p.shape for p in parts] == [(2, 2), (3, 2)]


def test_fake_device_restores_thinc():
    before = get_current_ops()
    with fake_device() as ops:
        assert get_current_ops() is ops and thinc.util.has_cupy
    assert get_current_ops() is before and thinc.util.cupy is not FAKE_CUPY
    assert get_array_module(numpy.zeros(1)) is numpy
