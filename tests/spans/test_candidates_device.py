"""Span candidates on device arrays: the numpy result on every device, and
one upload per batch whatever its number of docs."""
import numpy
import pytest
from thinc.api import NumpyOps

from spacy_imbalance.spans.candidates import enumerate_candidates, touching

LENGTHS = [3, 0, 5, 1]


def host_fields(ops, candidates):
    arrays = (candidates.starts, candidates.ends, candidates.doc_ids, candidates.first)
    return [ops.to_numpy(a).tolist() for a in arrays]


@pytest.mark.parametrize("lengths", [LENGTHS, [0, 0], [7]])
def test_candidates_on_device_equal_numpy(device_ops, lengths):
    numpy_ops = NumpyOps()
    expected = enumerate_candidates(numpy_ops, lengths, 3)
    got = enumerate_candidates(device_ops, lengths, 3)
    assert host_fields(device_ops, got) == host_fields(numpy_ops, expected)
    assert (got.doc_counts, got.doc_lengths, len(got)) == (expected.doc_counts, expected.doc_lengths, len(expected))
    assert all(a.dtype == numpy.int32 for a in (got.starts, got.ends, got.doc_ids, got.first))


def test_touching_on_device_equals_numpy(device_ops):
    mask = numpy.zeros(sum(LENGTHS), dtype=bool)
    mask[[1, 6]] = True
    expected = touching(NumpyOps(), enumerate_candidates(NumpyOps(), LENGTHS, 2), mask)
    got = touching(device_ops, enumerate_candidates(device_ops, LENGTHS, 2), mask)
    assert device_ops.to_numpy(got).tolist() == expected.tolist()


def test_candidate_index_on_device(device_ops):
    candidates = enumerate_candidates(device_ops, [4, 5], 2)
    # doc 1 starts at token 4: its span (5, 6) is start 5, width 2
    index = candidates.index(device_ops.asarray1i([5]), device_ops.asarray1i([2]))
    (i,) = device_ops.to_numpy(index).tolist()
    assert (device_ops.to_numpy(candidates.starts)[i], device_ops.to_numpy(candidates.ends)[i]) == (5, 6)


@pytest.mark.parametrize("n_docs", [2, 20])
def test_candidates_cost_one_upload_per_batch(fake_ops, n_docs):
    """Built on the host and uploaded once: no sync, no copy, and no kernel
    per doc (cupy.repeat with a list of repeats launches one per element)."""
    with fake_ops.measure() as counts:
        enumerate_candidates(fake_ops, [6] * n_docs, 4)
    assert (counts.round_trips, counts.loops, counts.uploads) == (0, 0, 1)
