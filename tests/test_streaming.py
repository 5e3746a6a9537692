"""Output streams: a tagging command fed a line at a time through a pipe
writes (and flushes) the output of each line before the next one comes,
and the whole output is the same as for the input given in one go.

Each case runs the real console script with its standard input and
output pipes: the first line is written, its output must arrive while
standard input is still open (read with a timeout, no sleeps), then the
second line ends the input.
"""
import os
import queue
import subprocess
import threading
from pathlib import Path

import pytest

from fasttag import parallel
from fasttag.text.sources import PipeLines

READ_TIMEOUT = 60       # seconds for the output of one line: generous on a loaded machine

ENGLISH = ("I go home. Me too.\n", "You too?\n")
NAMES = ("Angela Merkel visited Paris.\n", "Then she met Barack Obama in Berlin.\n")
CONLLU = ("# text = I go\n1\tI\t_\t_\t_\t_\t_\t_\t_\t_\n2\tgo\t_\t_\t_\t_\t_\t_\t_\t_\n\n",
          "# text = You too\n1\tYou\t_\t_\t_\t_\t_\t_\t_\t_\n2\ttoo\t_\t_\t_\t_\t_\t_\t_\t_\n\n")

CASES = {
    "tag": (["tag"], ENGLISH),
    "tag-ner": (["tag", "-m", "en-ner"], NAMES),
    "ner": (["ner"], NAMES),
    "ner-json": (["ner", "--json"], NAMES),
    "tokenize": (["tokenize"], ENGLISH),
    "segment": (["segment"], ("我们去北京。\n", "你呢？\n")),
    "ud": (["tag", "-m", "en-ud"], ENGLISH),
    "ud-conllu": (["tag", "-m", "en-ud", "--to", "conllu"], ENGLISH),
    "ud-json": (["tag", "-m", "en-ud", "--json"], ENGLISH),
    "tag-json": (["tag", "--json"], ENGLISH),
    "pretokenized": (["tag", "--pretokenized"], ("I go home .\n", "You too ?\n")),
    "conllu-in": (["tag"], CONLLU),
    "threads": (["tag", "--threads", "2"], ENGLISH),
    "ud-threads": (["tag", "-m", "en-ud", "--threads", "2"], ENGLISH),
}


def _run(command, env, args, text):
    done = subprocess.run(command + args, input=text.encode("utf-8"), capture_output=True, env=env, timeout=300,
                          cwd=Path(__file__).resolve().parent)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return done.stdout


def _reader(stream):
    """A queue of the chunks read from ``stream`` by a thread, b"" at its end."""
    chunks = queue.Queue()

    def read():
        fd = stream.fileno()
        while True:
            data = os.read(fd, 65536)
            chunks.put(data)
            if not data:
                return
    threading.Thread(target=read, daemon=True).start()
    return chunks


def _read_until(chunks, got, size):
    """``got`` plus what arrives until it holds ``size`` bytes (or the
    output ends), waiting at most READ_TIMEOUT seconds per chunk."""
    while len(got) < size:
        try:
            data = chunks.get(timeout=READ_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no output for {READ_TIMEOUT} s with the input still open; so far: {bytes(got)!r}")
        if not data:
            break
        got += data
    return got


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_line_is_written_before_the_input_ends(cli_command, case):
    command, env = cli_command
    args, (first, second) = CASES[case]
    alone = _run(command, env, args, first)             # the output of the first line by itself
    whole = _run(command, env, args, first + second)    # of both lines at once
    assert alone and whole.startswith(alone), (alone, whole)
    proc = subprocess.Popen(command + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=Path(__file__).resolve().parent)
    try:
        chunks = _reader(proc.stdout)
        proc.stdin.write(first.encode("utf-8"))
        proc.stdin.flush()
        got = _read_until(chunks, bytearray(), len(alone))
        assert bytes(got) == alone                      # the first line's output, the input still open
        assert proc.poll() is None
        proc.stdin.write(second.encode("utf-8"))
        proc.stdin.close()
        got = _read_until(chunks, got, float("inf"))
        assert proc.wait(timeout=READ_TIMEOUT) == 0
        assert bytes(got) == whole
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------- the reader

def test_pipe_lines_know_when_the_next_line_waits():
    r, w = os.pipe()
    with open(r, "rb") as f:
        lines = PipeLines.of(f)
        assert lines is not None
        os.write(w, b"one\ntw")
        assert next(lines) == b"one\n"
        assert lines.would_wait()                       # half a line: reading on would wait
        os.write(w, b"o\n\n")
        assert not lines.would_wait()
        assert next(lines) == b"two\n"
        assert lines.would_wait()                       # a blank line alone makes no output
        with parallel.streaming_input(lines):
            assert parallel.input_would_wait()
            assert not parallel.ordered_map(lambda _: parallel.input_would_wait(), [0]).__next__()
        assert not parallel.input_would_wait()          # no input of this thread now
        os.write(w, b"last")
        os.close(w)
        assert not lines.would_wait()                   # the end: nothing waits
        assert list(lines) == [b"\n", b"last"]


def test_files_never_wait(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\n")
    with open(path, "rb") as f:
        assert PipeLines.of(f) is None                  # a file: read as before, batches stay full


def test_a_waiting_input_ends_batches_and_flushes_in_order():
    r, w = os.pipe()
    events = []

    def before_wait():                                  # the reader is about to wait: the rest comes
        events.append("wait")
        os.write(w, b"c\n")
        os.close(w)
    with open(r, "rb") as f:
        lines = PipeLines.of(f)
        os.write(w, b"a\nb\n")
        with parallel.streaming_input(lines), parallel.before_waiting(before_wait):
            batches = parallel.batches(iter(lines), max_tokens=100, size=len)
            results = parallel.ordered_map(lambda batch: batch, batches, n_threads=2)
            assert next(results) == [b"a\n", b"b\n"]    # the input pauses: the batch ends, handed back at once
            assert events == []
            assert list(results) == [[b"c\n"]]
    assert events == ["wait"]                           # once, before the read that waited for c
