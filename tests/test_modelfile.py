"""Model files: round trips, and the corrupt-file ladder."""
import errno
import os
import stat
import struct
import threading

import numpy as np
import pytest

from fasttag import ModelFormatError

from fasttag import files
from fasttag.model import modelfile
from fasttag.model.tables import WeightTable, table_from_arrays, table_to_arrays


def trained_table():
    rng = np.random.default_rng(1)
    table = WeightTable()
    for step in range(1, 300):
        keys = rng.integers(0, 5000, size=20).astype(np.uint64)
        table.update(keys, int(rng.integers(0, 17)), float(rng.choice([1.0, -1.0])), step)
    return table.averaged(300)


def model_bytes():
    table = trained_table()
    header = {"kind": "test", "labels": ["ДА", "好"] + [f"L{i}" for i in range(15)], "licence": "none"}
    return modelfile.dumps(header, table_to_arrays(table, "emit")), table


def test_round_trip_is_byte_identical_and_predictions_match(tmp_path):
    data, table = model_bytes()
    header, arrays = modelfile.loads(data)
    assert header["labels"][:2] == ["ДА", "好"]
    loaded = table_from_arrays(arrays, "emit", 17)
    assert modelfile.dumps(header, table_to_arrays(loaded, "emit")) == data
    keys = np.arange(0, 5000, dtype=np.uint64)
    for k in keys[:300]:
        np.testing.assert_allclose(loaded.score(np.array([k]), n_classes=17),
                                   table.score(np.array([k]), n_classes=17).astype(np.float32), rtol=1e-6)
    path = tmp_path / "m.ftm"
    modelfile.write(path, header, arrays)
    assert path.read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == ["m.ftm"]      # no temporary left behind


def test_save_is_atomic_when_serialising_fails(tmp_path):
    path = tmp_path / "m.ftm"
    path.write_bytes(b"old")
    with pytest.raises(ValueError):
        modelfile.write(path, {"kind": "x"}, {"bad": np.array(["a string"])})
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["m.ftm"]


def test_a_replaced_file_keeps_its_mode_and_a_link_its_target(tmp_path):
    data, table = model_bytes()
    header, arrays = modelfile.loads(data)
    private = tmp_path / "private.ftm"
    private.write_bytes(b"old")
    private.chmod(0o600)
    modelfile.write(private, header, arrays)
    assert private.read_bytes() == data and private.stat().st_mode & 0o777 == 0o600
    target, link = tmp_path / "models" / "real.ftm", tmp_path / "current.ftm"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link.symlink_to(target)
    modelfile.write(link, header, arrays)
    assert link.is_symlink() and target.read_bytes() == data
    assert sorted(p.name for p in target.parent.iterdir()) == ["real.ftm"]     # no temporary left behind


def test_saving_into_a_missing_folder_names_the_file_asked_for(tmp_path):
    header, arrays = modelfile.loads(model_bytes()[0])
    with pytest.raises(FileNotFoundError) as info:
        modelfile.write(tmp_path / "nodir" / "m.ftm", header, arrays)
    assert info.value.filename == str(tmp_path / "nodir" / "m.ftm")      # not the temporary file's name


def test_saving_to_a_folder_names_it_and_writes_nothing(tmp_path):
    header, arrays = modelfile.loads(model_bytes()[0])
    (tmp_path / "models").mkdir()
    with pytest.raises(IsADirectoryError, match="a folder, not a file"):
        modelfile.write(tmp_path / "models", header, arrays)
    assert [p.name for p in tmp_path.iterdir()] == ["models"] and not any((tmp_path / "models").iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.isdir("/dev/fd"), reason="needs FIFOs and /dev/fd")
def test_a_pipe_or_a_descriptor_is_written_in_place(tmp_path):
    """Replacing a FIFO, a device or /dev/stdout with a file would destroy
    it (as root, /dev/null): they are written directly."""
    data, _ = model_bytes()
    header, arrays = modelfile.loads(data)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    modelfile.write(fifo, header, arrays)
    reader.join(10)
    assert got == [data] and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]
    r, w = os.pipe()
    try:
        with files.atomic_file(f"/dev/fd/{w}", "w", encoding="utf-8") as f:
            f.write("tagged\n")
        assert os.read(r, 100) == b"tagged\n"
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(FileNotFoundError, match="empty file name"):
        modelfile.write("", header, arrays)


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="needs a writable /dev/shm")
def test_a_regular_file_under_dev_is_replaced_atomically():
    """Only descriptors, devices, pipes and sockets are written in place: a
    failed write leaves a file on /dev/shm (a tmpfs) as it was."""
    path = f"/dev/shm/fasttag-test-{os.getpid()}.txt"
    with open(path, "w", encoding="utf-8") as f:
        f.write("old\n")
    try:
        with pytest.raises(RuntimeError):
            with files.atomic_file(path, "w", encoding="utf-8") as f:
                f.write("half")
                raise RuntimeError("the input turned out to be bad")
        with open(path, encoding="utf-8") as f:
            assert f.read() == "old\n"
        assert not [n for n in os.listdir("/dev/shm") if n.startswith(f".fasttag-{os.getpid()}@")]
    finally:
        os.unlink(path)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_names_the_output():
    header, arrays = modelfile.loads(model_bytes()[0])
    with pytest.raises(OSError) as info:
        modelfile.write("/dev/full", header, arrays)
    assert info.value.errno == errno.ENOSPC and info.value.filename == "/dev/full"


def test_bytes_paths_are_paths(tmp_path):
    data, _ = model_bytes()
    header, arrays = modelfile.loads(data)
    modelfile.write(os.fsencode(tmp_path / "m.ftm"), header, arrays)
    assert (tmp_path / "m.ftm").read_bytes() == data


def reseal(body):
    """Recompute the trailing checksum so that only the header lies."""
    import zlib
    return body + struct.pack("<I", zlib.crc32(body))


def test_corrupt_file_ladder():
    data, _ = model_bytes()
    _, _, head_len = struct.unpack_from("<8sIQ", data, 0)
    cases = {
        "empty": b"",
        "wrong magic": b"PK\x03\x04" + data[4:],
        "pickle": b"\x80\x04\x95" + data[3:],
        "magic only": data[:8],
        "truncated prefix": data[:15],
        "future version": reseal(data[:8] + struct.pack("<I", 99) + data[12:-4]),
        "huge header": reseal(data[:12] + struct.pack("<Q", 2**62) + data[20:-4]),
        "garbage after magic": data[:8] + bytes(range(256)) * 4,
        "flipped payload byte": data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:],
        "not json": reseal(data[:20] + b"{" * head_len + data[20 + head_len:-4]),
    }
    for cut in (20, 20 + head_len // 2, 20 + head_len, len(data) - 100, len(data) - 1):
        cases[f"truncated at {cut}"] = data[:cut]
    for name, bad in cases.items():
        with pytest.raises(ModelFormatError):
            modelfile.loads(bad)
            pytest.fail(name)


def test_lying_array_sizes_are_rejected_before_allocating():
    import json
    import zlib
    data, _ = model_bytes()
    _, _, head_len = struct.unpack_from("<8sIQ", data, 0)
    header = json.loads(data[20:20 + head_len])
    header["arrays"][0]["shape"] = [2**40]
    header["arrays"][0]["nbytes"] = 2**43
    head = json.dumps(header).encode()
    head += b" " * ((-(20 + len(head))) % 8)
    body = data[:12] + struct.pack("<Q", len(head)) + head + data[20 + head_len:-4]
    with pytest.raises(ModelFormatError, match="does not hold"):
        modelfile.loads(body + struct.pack("<I", zlib.crc32(body)))


def test_inconsistent_table_arrays_are_a_format_error():
    _, arrays = modelfile.loads(model_bytes()[0])
    arrays["emit.counts"] = arrays["emit.counts"][:-1]
    with pytest.raises(ModelFormatError):
        table_from_arrays(arrays, "emit", 17)
    _, arrays = modelfile.loads(model_bytes()[0])
    arrays["emit.labels"] = arrays["emit.labels"] + 100
    with pytest.raises(ModelFormatError):
        table_from_arrays(arrays, "emit", 17)
