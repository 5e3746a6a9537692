"""The one container format of every fasttag model: data, never code.

Layout (all integers little-endian)::

    magic        8 bytes   b"FASTTAG\\x00"
    version      uint32    FORMAT_VERSION
    header_len   uint64    length of the JSON header in bytes
    header       JSON (UTF-8): {"kind": ..., ..., "arrays": [
                     {"name", "dtype", "shape", "offset", "nbytes", "crc32"}, ...]}
    payload      the arrays' bytes, each at its offset (relative to the payload
                 start, 8-byte aligned), little-endian with an explicit dtype
    trailer      uint32    CRC-32 of everything before it

Loading checks, before trusting anything: the magic, the version, that the
header fits the data, that it parses, that every array's dtype is allowed,
that its shape matches its byte count and lies inside the payload, and every
checksum.  Lying headers cannot make it allocate more than the file's size.
Pickle is never used.  Saves are atomic: a temporary file in the same folder,
fsync, then rename.
"""
import json
import os
import struct
import tempfile
import zlib

import numpy as np

from .errors import ModelFormatError

MAGIC = b"FASTTAG\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_TRAILER = struct.Struct("<I")
_MAX_HEADER = 64 * 1024 * 1024
_ALLOWED_DTYPES = {"<u8", "<i8", "<u4", "<i4", "<u2", "<i2", "|u1", "|i1", "<f4", "<f8"}


def _align(n):
    return (n + 7) & ~7


def dumps(header, arrays):
    """Serialise a JSON-able ``header`` dict and a name -> ndarray mapping."""
    if "arrays" in header:
        raise ValueError("'arrays' is a reserved header key")
    specs = []
    chunks = []
    offset = 0
    for name in sorted(arrays):
        arr = np.asarray(arrays[name])
        dtype = arr.dtype.newbyteorder("<") if arr.dtype.byteorder not in ("|", "<") else arr.dtype
        if dtype.str not in _ALLOWED_DTYPES:
            raise ValueError(f"array {name!r}: dtype {arr.dtype} is not storable")
        data = np.ascontiguousarray(arr, dtype=dtype).tobytes()
        specs.append({"name": name, "dtype": dtype.str, "shape": list(arr.shape),
                      "offset": offset, "nbytes": len(data), "crc32": zlib.crc32(data)})
        pad = _align(len(data)) - len(data)
        chunks.append(data + b"\x00" * pad)
        offset += len(data) + pad
    full = dict(header)
    full["arrays"] = specs
    head = json.dumps(full, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
    head += b" " * (_align(_PREFIX.size + len(head)) - _PREFIX.size - len(head))
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head)) + head + b"".join(chunks)
    return body + _TRAILER.pack(zlib.crc32(body))


def loads(data):
    """Parse bytes written by :func:`dumps`; returns ``(header, arrays)``.

    Raises :class:`ModelFormatError` naming the problem for anything that is
    not a valid fasttag model of a version this code reads.
    """
    data = memoryview(bytes(data) if not isinstance(data, (bytes, bytearray, memoryview)) else data)
    if len(data) < len(MAGIC) or bytes(data[: len(MAGIC)]) != MAGIC:
        if len(data) == 0:
            raise ModelFormatError("not a fasttag model: the file is empty")
        raise ModelFormatError("not a fasttag model: wrong magic bytes")
    if len(data) < _PREFIX.size + _TRAILER.size:
        raise ModelFormatError("truncated fasttag model: incomplete prefix")
    _, version, head_len = _PREFIX.unpack_from(data, 0)
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"fasttag model format version {version} is newer than this fasttag reads "
            f"({FORMAT_VERSION}): upgrade fasttag")
    if version < 1:
        raise ModelFormatError(f"invalid fasttag model format version {version}")
    if head_len > _MAX_HEADER or _PREFIX.size + head_len + _TRAILER.size > len(data):
        raise ModelFormatError("truncated or corrupt fasttag model: the header runs past the end")
    (crc,) = _TRAILER.unpack_from(data, len(data) - _TRAILER.size)
    body = data[: len(data) - _TRAILER.size]
    if zlib.crc32(body) != crc:
        raise ModelFormatError("corrupt fasttag model: checksum mismatch (truncated or damaged file)")
    try:
        header = json.loads(bytes(data[_PREFIX.size: _PREFIX.size + head_len]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ModelFormatError(f"corrupt fasttag model: unreadable header ({exc})") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        raise ModelFormatError("corrupt fasttag model: header lacks its array table")
    payload = body[_PREFIX.size + head_len:]
    arrays = {}
    for spec in header.pop("arrays"):
        name, arr = _read_array(spec, payload)
        arrays[name] = arr
    return header, arrays


def _read_array(spec, payload):
    try:
        name = spec["name"]
        dtype = np.dtype(spec["dtype"]) if spec["dtype"] in _ALLOWED_DTYPES else None
        shape = tuple(int(s) for s in spec["shape"])
        offset = int(spec["offset"])
        nbytes = int(spec["nbytes"])
        crc = int(spec["crc32"])
    except (KeyError, TypeError, ValueError):
        raise ModelFormatError("corrupt fasttag model: malformed array entry") from None
    if not isinstance(name, str):
        raise ModelFormatError("corrupt fasttag model: malformed array name")
    if dtype is None:
        raise ModelFormatError(f"corrupt fasttag model: array {name!r} has a forbidden dtype")
    if any(s < 0 for s in shape) or offset < 0 or nbytes < 0:
        raise ModelFormatError(f"corrupt fasttag model: array {name!r} has negative sizes")
    count = 1
    for s in shape:
        count *= s
        if count * dtype.itemsize > len(payload):
            break
    if count * dtype.itemsize != nbytes or offset + nbytes > len(payload):
        raise ModelFormatError(
            f"corrupt fasttag model: array {name!r} claims {nbytes} bytes that the file does not hold")
    raw = payload[offset: offset + nbytes]
    if zlib.crc32(raw) != crc:
        raise ModelFormatError(f"corrupt fasttag model: array {name!r} fails its checksum")
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=True)
    return name, arr


def write(path, header, arrays):
    """Write a model file atomically (temporary file in the same folder,
    fsync, rename): a crash never leaves a half-written model behind."""
    data = dumps(header, arrays)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".fasttag-", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)      # mkstemp makes 0600: give the usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read(path):
    """Read a model file; returns ``(header, arrays)``.  See :func:`loads`."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return loads(data)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{os.fspath(path)}: {exc}") from None


class Stored:
    """``to_bytes``/``save``/``from_bytes`` for a model class that defines
    ``_parts() -> (header, arrays)`` and the classmethod
    ``_from_parts(header, arrays)``: the one way every fasttag model is
    written and read."""

    def to_bytes(self):
        """The model file's bytes (see :mod:`fasttag.modelfile`)."""
        return dumps(*self._parts())

    def save(self, path):
        """Write the model atomically to ``path``."""
        write(path, *self._parts())

    @classmethod
    def from_bytes(cls, data):
        """Load from :meth:`to_bytes` output."""
        return cls._from_parts(*loads(data))
