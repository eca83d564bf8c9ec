"""Uploads taken in as they arrive (reviewapp.core.uploads.Receiver): a
gzip file is read as Python's own gzip reader reads it, however its bytes
are cut into chunks, and each upload is hashed and held to the size limit
on the way."""

from __future__ import annotations

import gc
import gzip
import hashlib
import itertools
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewapp.core.uploads import Receiver


def received(data: bytes, cuts: list[int], name: str = "log.jsonl.gz") -> Receiver:
    receiver = Receiver(name)
    start = 0
    for cut in [*sorted(cut % (len(data) + 1) for cut in cuts), len(data)]:
        receiver.feed(data[start:cut])
        start = cut
    receiver.finish()
    return receiver


def gzip_reads(data: bytes) -> bytes | None:
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error):
        return None


def spoiled(data: bytes, how: int, where: int) -> bytes:
    if how == 0 or not data:
        return data
    where %= len(data)
    if how == 1:
        return data[:where]  # cut short
    if how == 2:
        return data[:where] + bytes([data[where] ^ 0x20]) + data[where + 1 :]  # one byte changed
    if how == 3:
        return data + b"\0" * (where % 5)  # zero padding, which gzip allows
    return data + bytes([where % 256])  # a stray byte after the end


@pytest.fixture(autouse=True)
def _data_folder(tmp_path, settings):
    settings.DATA_DIR = tmp_path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    members=st.lists(st.binary(max_size=3000), min_size=1, max_size=3),
    levels=st.lists(st.integers(0, 9), min_size=3, max_size=3),
    cuts=st.lists(st.integers(0, 10_000), max_size=8),
    how=st.integers(0, 4),
    where=st.integers(0, 10_000),
)
def test_a_gzip_upload_reads_as_gzip_reads_it_cut_anywhere(members, levels, cuts, how, where):
    packed_members = [gzip.compress(member, level) for member, level in zip(members, levels, strict=False)]
    packed = spoiled(b"".join(packed_members), how, where)
    receiver = received(packed, cuts)
    if not packed.startswith(b"\x1f\x8b"):  # no longer gzip: kept as sent, for the later checks
        assert receiver.path.read_bytes() == packed if packed else receiver.problem is not None
        return
    expected = gzip_reads(packed)
    flags = list(itertools.accumulate((len(member) for member in packed_members[:-1]), initial=3))
    if any(at < len(packed) and packed[at] & 0xE0 for at in flags):
        # A member's header with reserved flags, which Python's reader
        # ignores: RFC 1952 asks a reader to refuse the file, as zlib does.
        expected = None
    if expected is None or expected == b"":
        assert receiver.problem is not None
        assert not receiver.path.exists()
        return
    assert receiver.problem is None, receiver.problem
    assert receiver.name == "log.jsonl"
    assert receiver.path.read_bytes() == expected
    assert (receiver.sha256, receiver.size, receiver.raw_size) == (
        hashlib.sha256(expected).hexdigest(),
        len(expected),
        len(packed),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(min_size=1, max_size=5000), cuts=st.lists(st.integers(0, 10_000), max_size=8))
def test_a_plain_upload_is_kept_as_sent(data, cuts):
    receiver = received(data, cuts, name="log.jsonl")
    if data.startswith(b"\x1f\x8b"):
        return  # read as gzip: the test above
    assert receiver.problem is None
    assert receiver.path.read_bytes() == data
    assert receiver.sha256 == hashlib.sha256(data).hexdigest()


def test_a_file_past_the_limit_unpacked_is_refused_and_the_rest_dropped(settings):
    settings.MAX_UPLOAD_BYTES = 1024 * 1024
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))  # 50 MB in 50 kB
    receiver = received(bomb, list(range(0, len(bomb), 4096)))
    assert receiver.problem.status == 413
    assert str(receiver.problem) == "log.jsonl: the file is larger uncompressed than the limit of 1 MB"
    assert not receiver.path.exists()
    assert receiver.size <= settings.MAX_UPLOAD_BYTES + 1024 * 1024  # stopped at the first piece past it


def test_a_one_byte_file_and_an_empty_one():
    assert received(b"x", [], name="a.jsonl").path.read_bytes() == b"x"
    empty = received(b"", [], name="a.jsonl")
    assert str(empty.problem) == "a.jsonl: the file is empty"


def test_an_upload_cut_off_by_its_client_leaves_no_partial_file(tmp_path):
    from io import BytesIO

    from django.core.handlers.wsgi import WSGIRequest

    boundary = "cut"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="log.jsonl"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    body = head + b"x" * (3 * 1024 * 1024)

    class Cut(BytesIO):
        """A client gone after 2 MB, as gunicorn's reader tells it."""

        def read(self, size=-1):
            if self.tell() > 2 * 1024 * 1024:
                raise OSError("client disconnected")
            return super().read(size)

    request = WSGIRequest(
        {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/api/runs",
            "CONTENT_TYPE": f"multipart/form-data; boundary={boundary}",
            "CONTENT_LENGTH": str(len(body) + 100),
            "wsgi.input": Cut(body),
        }
    )
    with pytest.raises(OSError, match="client disconnected"):
        request.FILES  # noqa: B018 (parsing is what is tested)
    del request  # as at the end of every request
    gc.collect()  # and its parser, held by the traceback until now
    assert [path for path in tmp_path.rglob("*") if path.is_file()] == []
