"""The one container format of every fasttag model: data, never code.

The layout is in docs/formats.md.  Loading checks everything before
trusting anything, so a lying header cannot make it allocate more than the
file's size.  Pickle is never used.  Saves are atomic.
"""
import errno
import gc
import json
import os
import stat
import struct
import zlib

import numpy as np

from . import registry
from ..display import quote
from ..errors import InputError, ModelFormatError
from ..files import atomic_file, checked_path

MAGIC = b"FASTTAG\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_TRAILER = struct.Struct("<I")
# Far above the largest real header (a few MB), and bounds the memory
# parsing it may take.  Saving refuses more.
MAX_HEADER = 16 * 1024 * 1024
# Lists and objects are the costliest JSON to parse; a header holds a few
# thousand, and a million bounds the parse to about a second.
MAX_HEADER_CONTAINERS = 1 << 20
# An empty array's other dimensions need no payload: they may exceed its size
# up to this, never more (a lying [0, 2**62] would reach code that allocates).
_MAX_EMPTY_DIM = 1 << 16
_MAX_NDIM = 8                       # fasttag stores vectors and matrices
_MAX_DIM = 1 << 62
_ALLOWED_DTYPES = {"<u8", "<i8", "<u4", "<i4", "<u2", "<i2", "|u1", "|i1", "<f4", "<f8"}


def _align(n):
    return (n + 7) & ~7


def dumps(header, arrays):
    """Serialise a JSON-able ``header`` dict and a name -> ndarray mapping.
    A header over the bounds loading reads is an InputError."""
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
    # surrogatepass: a lone surrogate in a word (Python strings may hold
    # one) round-trips instead of failing the save
    head = json.dumps(full, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode(
        "utf-8", "surrogatepass")
    head += b" " * (_align(_PREFIX.size + len(head)) - _PREFIX.size - len(head))
    if _containers(head) > MAX_HEADER_CONTAINERS:
        raise InputError(f"the model's header holds over {MAX_HEADER_CONTAINERS:,} lists and objects, more than a "
                         f"model file may hold")
    if len(head) > MAX_HEADER:
        raise InputError(f"the model's header is {len(head):,} bytes, over the {MAX_HEADER:,} a model file may "
                         f"hold (gazetteers or a tag dictionary this large belong in a smaller model)")
    body = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(head)) + head + b"".join(chunks)
    return body + _TRAILER.pack(zlib.crc32(body))


def _looks_like(head):
    """What the opening bytes of a file given as a model say it is, as a
    hint: a text or CoNLL-U file there is most likely two arguments swapped."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:
            return ""
        text = head[:exc.start].decode("utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    if any(line.count("\t") == 9 for line in lines[:20]):
        return " (it reads as CoNLL-U: a data file given as the model? arguments swapped?)"
    return " (it reads as text: a data file given as the model? arguments swapped?)"


def loads(data):
    """Parse bytes written by :func:`dumps`; returns ``(header, arrays)``.

    Raises :class:`ModelFormatError` naming the problem for anything that is
    not a valid fasttag model of a version this code reads.
    """
    data = memoryview(bytes(data) if not isinstance(data, (bytes, bytearray, memoryview)) else data)
    if len(data) < len(MAGIC) or bytes(data[: len(MAGIC)]) != MAGIC:
        if len(data) == 0:
            raise ModelFormatError("not a fasttag model: the file is empty")
        raise ModelFormatError("not a fasttag model: wrong magic bytes" + _looks_like(bytes(data[:4096])))
    if len(data) < _PREFIX.size + _TRAILER.size:
        raise ModelFormatError("truncated fasttag model: incomplete prefix")
    _, version, head_len = _PREFIX.unpack_from(data, 0)
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"fasttag model format version {version} is newer than this fasttag reads "
            f"({FORMAT_VERSION}): upgrade fasttag")
    if version < 1:
        raise ModelFormatError(f"invalid fasttag model format version {version}")
    if head_len > MAX_HEADER:
        raise ModelFormatError(f"corrupt fasttag model: a header of {head_len:,} bytes, over the "
                               f"{MAX_HEADER:,} a model file may hold")
    if _PREFIX.size + head_len + _TRAILER.size > len(data):
        raise ModelFormatError("truncated or corrupt fasttag model: the header runs past the end")
    (crc,) = _TRAILER.unpack_from(data, len(data) - _TRAILER.size)
    body = data[: len(data) - _TRAILER.size]
    if zlib.crc32(body) != crc:
        raise ModelFormatError("corrupt fasttag model: checksum mismatch (truncated or damaged file)")
    raw = bytes(data[_PREFIX.size: _PREFIX.size + head_len])
    if _containers(raw) > MAX_HEADER_CONTAINERS:
        raise ModelFormatError(f"corrupt fasttag model: the header holds over {MAX_HEADER_CONTAINERS:,} lists and "
                               f"objects")
    try:
        header = _parse_header(raw)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelFormatError(f"corrupt fasttag model: unreadable header ({exc})") from None
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        raise ModelFormatError("corrupt fasttag model: header lacks its array table")
    payload = body[_PREFIX.size + head_len:]
    end = _payload_end(header["arrays"])
    if end > len(payload):
        raise ModelFormatError(
            f"corrupt fasttag model: the array table claims {end} bytes that the file does not hold")
    if 0 <= end < len(payload):
        raise ModelFormatError("corrupt fasttag model: the payload's size does not match the array table")
    arrays = {}
    for spec in header.pop("arrays"):
        name, arr = _read_array(spec, payload)
        if name in arrays:
            raise ModelFormatError(f"corrupt fasttag model: array {name!r} is stored twice")
        arrays[name] = arr
    return header, arrays


def _containers(head):
    """An upper bound of the lists and objects of JSON text ``head`` (its
    brackets, those inside strings included)."""
    return head.count(b"[") + head.count(b"{")


def _parse_header(raw):
    """The JSON of header bytes ``raw``, parsed with the garbage collector
    paused: the parser's many new lists would trigger collection after collection."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return json.loads(raw.decode("utf-8", "surrogatepass"))
    finally:
        if enabled:
            gc.enable()


def _payload_end(specs):
    """Where the array table says the payload ends (arrays 8-byte aligned);
    -1 when the table is malformed (the array checks then name the fault)."""
    end = 0
    for spec in specs:
        if not isinstance(spec, dict) or not _is_size(spec.get("offset")) or not _is_size(spec.get("nbytes")):
            return -1
        end = max(end, _align(spec["offset"] + spec["nbytes"]))
    return end


def header_int(value, lo=None, hi=None):
    """``value`` is a JSON integer (not a float, not a bool) in [lo, hi]:
    the one check of every integer a header holds."""
    return isinstance(value, int) and not isinstance(value, bool) \
        and (lo is None or value >= lo) and (hi is None or value <= hi)


def _is_size(value):
    """Sizes are never floats, bools or huge."""
    return header_int(value, 0, _MAX_DIM)


def _read_array(spec, payload):
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ModelFormatError("corrupt fasttag model: malformed array entry")
    name = spec["name"]
    shape, offset, nbytes, crc = (spec.get(k) for k in ("shape", "offset", "nbytes", "crc32"))
    if not isinstance(spec.get("dtype"), str) or spec["dtype"] not in _ALLOWED_DTYPES:
        raise ModelFormatError(f"corrupt fasttag model: array {name!r} has a forbidden dtype")
    if not isinstance(shape, list) or len(shape) > _MAX_NDIM or not all(_is_size(s) for s in shape) \
            or not _is_size(offset) or not _is_size(nbytes) or not _is_size(crc):
        raise ModelFormatError(f"corrupt fasttag model: array {name!r} has a malformed shape or size")
    dtype = np.dtype(spec["dtype"])
    if any(s > max(len(payload), _MAX_EMPTY_DIM) for s in shape):
        raise ModelFormatError(
            f"corrupt fasttag model: array {name!r} has a dimension larger than the file ({shape})")
    count = 1
    for s in shape:
        count *= s
    if count * dtype.itemsize != nbytes or offset + nbytes > len(payload):
        raise ModelFormatError(
            f"corrupt fasttag model: array {name!r} claims {nbytes} bytes that the file does not hold")
    raw = payload[offset: offset + nbytes]
    if zlib.crc32(raw) != crc:
        raise ModelFormatError(f"corrupt fasttag model: array {name!r} fails its checksum")
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=True)
    return name, arr


def write(path, header, arrays):
    """Write a model file atomically (see :func:`atomic_file`): a crash
    never leaves a half-written model behind."""
    data = dumps(header, arrays)
    with atomic_file(path) as f:
        f.write(data)


def read(path):
    """Read a model file; returns ``(header, arrays)`` (see :func:`loads`)."""
    path = checked_path(path, "a model path")
    with open_model(path) as f:         # its errors name the path
        data = f.read()
    try:
        return loads(data)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{os.fsdecode(path)}: {exc}") from None


_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

_FILE_TYPES = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def open_model(path):
    """``path`` opened for reading as a model file, the one place every model
    path is opened.  Only a regular file is read (a FIFO would wait forever,
    a device can be endless): ModelFormatError naming the path otherwise,
    IsADirectoryError for a folder.  Opened without waiting, then checked."""
    path = checked_path(path, "a model path")
    fd = os.open(path, os.O_RDONLY | _NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder, not a model file", path)
        if not stat.S_ISREG(mode):
            what = next((name for test, name in _FILE_TYPES if test(mode)), "not a file")
            raise ModelFormatError(f"{os.fsdecode(path)}: {what}, not a regular file (a model is read "
                                   f"from a file)")
        if _NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


RUN_ONLY_META = ("history", "train_seconds")
"""Meta keys that describe one training run's timing: kept on the object,
never written, so that training with the same data, options and seed gives
byte-identical model files."""


def stored_meta(meta):
    """The part of a model's ``meta`` dict that goes into its file."""
    return {k: v for k, v in meta.items() if k not in RUN_ONLY_META}


def stamp(header, name, version, **spec):
    """Record the hash function and the featurizer in a model ``header``:
    a model is only as good as the feature hashes it was trained on."""
    from .._core.weights import HASH_ID
    header["hash"] = HASH_ID
    header["featurizer"] = {"name": name, "version": version, **spec}


def check_stamp(header, name, version):
    """The header's featurizer entry, after checking that this fasttag hashes
    and featurizes as the model's trainer did (ModelFormatError otherwise)."""
    from .._core.weights import HASH_ID
    got = header.get("hash")
    if got != HASH_ID:
        raise ModelFormatError(f"the model's features were hashed with {quote(got)}, this fasttag "
                               f"hashes with {HASH_ID!r}: retrain the model with this version")
    spec = header.get("featurizer")
    if not isinstance(spec, dict) or spec.get("name") != name:
        got = spec.get("name") if isinstance(spec, dict) else spec
        raise ModelFormatError(f"the model's featurizer is {quote(got)}, not {name!r}")
    if type(spec.get("version")) is not int or spec["version"] != version:
        raise ModelFormatError(f"the model was trained with version {quote(spec.get('version'))} of the "
                               f"{name!r} featurizer, this fasttag has version {version}: retrain the "
                               f"model with this version")
    return spec


class Stored:
    """``to_bytes``/``save``/``from_bytes`` for a model class that defines
    ``_parts() -> (header, arrays)`` and the classmethod ``_from_parts``.  A
    subclass whose body sets ``kind`` is registered as that kind's reader."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if isinstance(cls.__dict__.get("kind"), str):
            registry.model_kind(cls.kind)(cls)

    def to_bytes(self):
        """The model file's bytes (see :mod:`fasttag.model.modelfile`)."""
        return dumps(*self._parts())

    def save(self, path):
        """Write the model atomically to ``path``."""
        write(path, *self._parts())

    @classmethod
    def from_bytes(cls, data):
        """Load from :meth:`to_bytes` output."""
        return cls._from_parts(*loads(data))

    def _parts(self):
        """``(header, arrays)`` of its model file: each stored class's own."""
        raise NotImplementedError

    @classmethod
    def _from_parts(cls, header, arrays):
        """The model of a file's ``header`` and ``arrays``, checked: each
        stored class's own (a ModelFormatError for what it cannot use)."""
        raise NotImplementedError

    @classmethod
    def load(cls, path):
        """Load a model file of this class (:func:`fasttag.load` opens any)."""
        header, arrays = read(path)
        try:
            return cls._from_parts(header, arrays)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{os.fspath(path)}: {exc}") from None
