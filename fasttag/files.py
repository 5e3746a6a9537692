"""Outputs written whole or not at all (:func:`atomic_file`): below every
layer that writes a file, so clusters, models and figures share it."""
import contextlib
import errno
import hashlib
import os
import re
import signal
import stat
import tempfile
import threading

_TMP_PREFIX = ".fasttag-"
_TMP_SUFFIX = ".tmp"


@contextlib.contextmanager
def atomic_file(path, mode="wb", **open_kwargs):
    """A file for ``path`` that appears only when the ``with`` block ends
    without an error: a temporary file in the same folder, fsynced, then
    renamed; removed on any error (SIGTERM included).

    An existing file keeps its permissions, and a symbolic link its target.
    What is not a regular file (a device, a pipe) is written directly:
    replacing it would put a file in its place.
    """
    given = checked_path(path)
    path = replaced_file(given)
    if path is None:
        try:
            with open(given, mode, **open_kwargs) as f:
                yield f
        except OSError as exc:
            raise _naming_output(exc, given, None) from None
        return
    if not given:
        raise FileNotFoundError(errno.ENOENT, "an empty file name", given)
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file: give a file name", path)
    folder = os.path.dirname(path)
    _remove_stale_temporaries(folder)
    with _terminate_as_exception():
        tmp = None
        try:
            # SIGTERM and Ctrl-C wait while the file is made and named, then arrive inside this try: a
            # signal between the two would leave a temporary file that no one knows of
            with _signals_held():
                try:
                    fd, tmp = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{os.getpid()}@{_machine() or 'unknown'}-",
                                               suffix=_TMP_SUFFIX, dir=folder)
                except OSError as exc:  # a missing or read-only folder: name the file asked for, as open() does
                    raise type(exc)(exc.errno, exc.strerror, os.fsdecode(given)) from None
            try:
                file_mode = os.stat(path).st_mode & 0o777        # a file replaced keeps its mode
            except OSError:
                umask = os.umask(0)
                os.umask(umask)
                file_mode = 0o666 & ~umask      # mkstemp makes 0600: give the usual mode
            os.chmod(tmp, file_mode)
            with os.fdopen(fd, mode, **open_kwargs) as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException as exc:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            if isinstance(exc, OSError):
                raise _naming_output(exc, given, tmp) from None
            raise


@contextlib.contextmanager
def _signals_held():
    """SIGTERM and SIGINT held back in the block (where the platform can),
    delivered when it ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


_WRITE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}


def _naming_output(exc, given, tmp):
    """``exc``, naming the output ``given`` where it names the temporary
    file or no file (a full disk): the user's file is the one at fault."""
    if (tmp is not None and exc.filename == tmp) or (exc.filename is None and exc.errno in _WRITE_ERRORS):
        return type(exc)(exc.errno, exc.strerror, os.fsdecode(given))
    return exc


def replaced_file(path):
    """The file a save to ``path`` replaces, as an absolute path (a symbolic
    link's target); None where the save writes ``path`` in place (a device,
    a pipe, ``/dev/stdout``)."""
    given = checked_path(path)
    if _not_a_regular_file(given):
        return None
    return os.path.realpath(os.fsdecode(given))


_DESCRIPTOR_NAMES = re.compile(r"/dev/(std(in|out|err)|fd/\d+)|/proc/(self|\d+)/fd/\d+")


def _not_a_regular_file(path):
    """Whether ``path`` names a file descriptor (``/dev/fd/3``: whatever it
    is open on) or is an existing device, pipe or socket: written in place."""
    name = os.fsdecode(path)
    if _DESCRIPTOR_NAMES.fullmatch(name):
        return True
    try:
        st = os.stat(name)
    except OSError:
        return False
    return not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def _remove_stale_temporaries(folder):
    """Remove temporary files whose writer is provably gone (a kill -9): of
    this machine (:func:`_machine`) and a dead process id.  The folder may be
    shared, so another machine's files, or files naming none, are kept."""
    machine = _machine()
    if machine is None:
        return
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(_TMP_PREFIX) and name.endswith(_TMP_SUFFIX)):
            continue
        pid, at, rest = name[len(_TMP_PREFIX):].partition("@")
        if not at or rest.partition("-")[0] != machine or not pid.isdigit() \
                or int(pid) == os.getpid() or _process_alive(int(pid)):
            continue
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass


def _machine():
    """Who may judge a temporary file's process id: a digest of host name,
    boot id and process-id namespace; None without a boot id (not Linux)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            boot = f.read().strip()
        space = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    if not boot:
        return None
    key = b"\0".join([os.fsencode(os.uname().nodename), boot, os.fsencode(space)])
    return hashlib.sha256(key).hexdigest()[:16]


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True                # someone else's process, or not ours to judge
    return True


class _terminate_as_exception:
    """While saving, turn SIGTERM into SystemExit so the temporary file is
    cleaned up like on Ctrl-C; only in the main thread, and only where
    SIGTERM has its default action."""

    def __enter__(self):
        self.old = None
        if threading.current_thread() is threading.main_thread() \
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self.old = signal.signal(signal.SIGTERM, _raise_terminated)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGTERM, self.old)
        return False


def _raise_terminated(signum, frame):
    raise SystemExit(128 + signal.SIGTERM)


def checked_path(path, what="a path"):
    """``path`` as a str or bytes; a clear TypeError for anything else (an
    int would be taken as an open file descriptor)."""
    if isinstance(path, (str, bytes, os.PathLike)):
        return os.fspath(path)
    raise TypeError(f"{what} must be a str or os.PathLike, not {type(path).__name__}")
