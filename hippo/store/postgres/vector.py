"""pgvector's `vector` type as hippo's vectors travel: little-endian float32 blobs.

Sent in pgvector's binary form (a 16-bit dimension count, 16 bits unused, then big-endian
float32s); read back as a blob from either the binary or the text form. No numpy.
"""

from __future__ import annotations

import struct
from array import array
from typing import TYPE_CHECKING, Any

from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.pq import Format

if TYPE_CHECKING:
    import psycopg


class Vec(bytes):
    """A blob (`hippo.embed.cache.to_blob`) to be sent as a pgvector `vector`."""


def _to_wire(blob: bytes) -> bytes:
    values = array("f")
    values.frombytes(blob)
    values.byteswap()  # float32 little-endian -> network order
    return struct.pack(">HH", len(values), 0) + values.tobytes()


def _from_wire(data: Buffer) -> bytes:
    values = array("f")
    values.frombytes(bytes(data[4:]))
    values.byteswap()
    return values.tobytes()


class _VecLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> bytes:
        return _from_wire(data)


class _VecTextLoader(Loader):
    def load(self, data: Buffer) -> bytes:
        text = bytes(data).decode()
        return array("f", (float(x) for x in text.strip("[]").split(",") if x)).tobytes()


def register(conn: psycopg.Connection[Any], oid: int) -> None:
    """Teach `conn` the `vector` type (its oid differs per database)."""

    class _VecDumper(Dumper):
        format = Format.BINARY

        def dump(self, obj: Any) -> Buffer:
            return _to_wire(obj)

    _VecDumper.oid = oid
    conn.adapters.register_dumper(Vec, _VecDumper)
    conn.adapters.register_loader(oid, _VecLoader)
    conn.adapters.register_loader(oid, _VecTextLoader)
