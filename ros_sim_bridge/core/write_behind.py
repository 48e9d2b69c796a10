"""A file written behind the caller's back: buffers handed over are written, in order, by a
thread of its own, so the cost of writing runs beside the caller's work instead of after it
(a write releases the GIL).  The thread wakes for batches of :attr:`batch` bytes (1 MiB, a
bag chunk), so it needs the GIL rarely yet keeps up: little is left to write at the end (an
``.idc`` conversion is faster with 1 MiB batches than with 8 MiB).

Two ways to the disk:

- *direct* (Linux ``O_DIRECT``, when the file system takes it), past the first
  :attr:`DIRECT_AFTER` bytes (1 GiB; those go through the page cache): the thread copies the
  buffers into an aligned staging buffer (numpy, GIL released) and writes it in blocks of
  :attr:`STAGE` bytes straight to the device, so neither the kernel's copy into the page cache
  nor the page cache's dirty-page throttling costs the machine's CPU (a big file written
  buffered costs about 1.4 s of system time per GB here); the last partial block goes through
  the page cache at :meth:`close`.  A file system that refuses ``O_DIRECT`` (tmpfs, some
  overlays; at the open, or at the first write with ``EINVAL``) gets the page cache.
- *buffered*: one ``writev`` per batch.

Space is reserved ahead of the writes (Linux ``fallocate`` with ``FALLOC_FL_KEEP_SIZE``, in
steps of :attr:`WriteBehindFile.RESERVE` bytes; the file's size stays what was written): writing
into reserved blocks spares the file system its per-page delayed allocation (ext4 here: an
84 MB file written in 8.5 ms instead of 14).  :meth:`WriteBehindFile.close` gives back what
was reserved beyond the end.  A file system without it is written without.

Ownership: a buffer given to :meth:`WriteBehindFile.write` belongs to the file from then on
(the caller must not change it; ``then()`` is called once it is no longer needed);
:meth:`WriteBehindFile.write_now` takes buffers the caller keeps (done with them on return).
Memory is bounded: ``write`` waits while more than ``limit`` bytes are pending.  Nothing goes
silent: an error in the thread is raised by the caller's next ``write``, ``write_now``,
``flush`` or ``close``.
"""
from __future__ import annotations

import ctypes
import errno
import mmap
import os
import sys
import threading
from collections import deque
from typing import Callable, Optional

import numpy as np

try:
    _IOV_MAX = max(16, min(os.sysconf('SC_IOV_MAX'), 1024))
except (AttributeError, ValueError, OSError):   # not POSIX
    _IOV_MAX = 16

def write_all(fd: int, buffers, offset: Optional[int] = None) -> None:
    """Write every byte of ``buffers`` (bytes-like, C-contiguous) to ``fd`` in order (at
    ``offset`` if given, else at the file position): one ``writev`` per up to IOV_MAX
    buffers, again for what a short write left."""
    views = [memoryview(b).cast('B') for b in buffers]
    views = [v for v in views if len(v)]
    while views:
        batch = views[:_IOV_MAX]
        if offset is None:
            done = os.writev(fd, batch)
        else:
            done = os.pwritev(fd, batch, offset)
            offset += done
        while done and views:
            head = views[0]
            if done >= len(head):
                done -= len(head)
                views.pop(0)
            else:
                views[0] = head[done:]
                done = 0


_BLOCK = 4096                                  # O_DIRECT alignment of offsets and lengths
_KEEP_SIZE = 0x01                              # FALLOC_FL_KEEP_SIZE (linux/falloc.h)


def _libc_fallocate() -> Optional[Callable[[int, int, int, int], int]]:
    """libc's ``fallocate64(fd, mode, offset, length)`` (Linux), None elsewhere."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = getattr(libc, 'fallocate64', None) or libc.fallocate
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fn.restype = ctypes.c_int
    return fn


_FALLOCATE = _libc_fallocate() if sys.platform.startswith('linux') else None


class _DirectStage:
    """The file's bytes from the thread: the first ``direct_after`` bytes (and anything when
    the device refuses ``O_DIRECT``) through the page cache, straight from the buffers; the
    rest through an aligned staging buffer, in whole blocks to the ``O_DIRECT`` descriptor;
    the last partial block through the page cache at :meth:`finish`."""

    def __init__(self, fd: int, direct_fd: int, size: int, direct_after: int):
        self.fd, self.direct_fd, self.direct_after = fd, direct_fd, direct_after
        self.mem = mmap.mmap(-1, size)              # page aligned, as O_DIRECT wants
        self.array = np.frombuffer(self.mem, np.uint8)
        self.size, self.fill, self.offset = size, 0, 0   # offset: file offset of mem[0]
        self.direct = True                          # False once the device refused a write

    def add(self, buffers) -> None:
        stage, size = self.array, self.size
        buffers = list(buffers)
        k = 0                                       # the page cache's share: no copy
        while not self.fill and k < len(buffers) and (
                not self.direct or self.offset + memoryview(buffers[k]).nbytes
                <= self.direct_after):
            k += 1
        if k:
            write_all(self.fd, buffers[:k], self.offset)
            self.offset += sum(memoryview(b).nbytes for b in buffers[:k])
        for b in buffers[k:]:
            src = np.frombuffer(b, np.uint8)
            i, n = 0, len(src)
            while i < n:
                k = min(size - self.fill, n - i)
                stage[self.fill:self.fill + k] = src[i:i + k]    # GIL released by numpy
                self.fill += k
                i += k
                if self.fill == size:
                    self._write(size)

    def _write(self, n: int) -> None:
        """Out with the first ``n`` bytes of the stage, but for a last partial block when
        direct (kept for the next time)."""
        if not self.direct or self.offset + n <= self.direct_after:
            self._out(self.fd, n)
            return
        head = -self.offset % _BLOCK            # to the first aligned offset: page cache
        if head:
            self._out(self.fd, min(head, n))
            n -= min(head, n)
        whole = n - n % _BLOCK
        if whole:
            try:
                self._out(self.direct_fd, whole)
            except OSError as exc:               # the device wants another alignment
                if exc.errno != errno.EINVAL:
                    raise
                self.direct = False
                self._out(self.fd, self.fill)

    def _out(self, fd: int, n: int) -> None:
        """Write stage[:n] at self.offset; the rest of the stage moves down to its start."""
        view = memoryview(self.mem)[:n]
        done = 0
        try:
            while done < n:
                done += os.pwrite(fd, view[done:], self.offset + done)
        finally:
            view.release()
        self.offset += n
        self.fill -= n
        if self.fill:
            self.array[:self.fill] = self.array[n:n + self.fill]

    def finish(self) -> None:
        """Everything still in the stage."""
        if self.fill:
            self._write(self.fill)
        if self.fill:
            self._out(self.fd, self.fill)


class WriteBehindFile:
    """A new file (``open(path, 'xb')``) written by a background thread; see the module."""
    STAGE = 8 << 20

    #: bytes written through the page cache before the direct way starts: a smaller file
    #: is done fastest there (the kernel writes it to the disk later); a bigger one soon
    #: meets the kernel's dirty-page limits (writeback from 10 % of the memory, 2.2 GB on the
    #: 23 GB machine of the benchmarks) and then goes at the disk's pace anyway, and the page
    #: cache costs CPU (1.4 s per GB here; the 7.4 GB bag of an hour of CARLA: 25-26 s of
    #: process CPU with 256 MiB buffered, 28-31 s with 2 GiB)
    DIRECT_AFTER = 1 << 30
    #: bytes reserved at a time ahead of the writes (see the module)
    RESERVE = 32 << 20

    def __init__(self, path, *, limit: int = 64 << 20, batch: int = 1 << 20,
                 direct: bool = True, direct_after: Optional[int] = None,
                 name: str = 'write-behind'):
        self._file = open(path, 'xb', buffering=0)
        self._fd = self._file.fileno()
        self._stage: Optional[_DirectStage] = None
        if direct and hasattr(os, 'O_DIRECT'):
            try:
                direct_fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
            except OSError:                      # the file system refuses it: buffered
                pass
            else:
                self._stage = _DirectStage(
                    self._fd, direct_fd, self.STAGE,
                    self.DIRECT_AFTER if direct_after is None else direct_after)
        self.limit, self.batch = limit, max(1, batch)
        self._pending: deque = deque()
        self._pending_bytes = 0
        self._total = 0                     # bytes handed over so far (the file's size after)
        self._consumed = 0                  # bytes given to the file system so far
        self._reserving = _FALLOCATE is not None
        self._reserved = 0                  # bytes from the start reserved so far
        self._busy = False                  # the thread holds buffers it is writing
        self._closing = False
        self._flushing = 0                  # callers waiting in flush()
        self._error: Optional[BaseException] = None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def direct(self) -> bool:
        """Whether whole blocks go (beyond ``direct_after`` bytes) to the device without the
        page cache."""
        return self._stage is not None and self._stage.direct

    # -- the caller's side -----------------------------------------------------------------
    def write(self, *buffers, then: Optional[Callable[[], None]] = None) -> None:
        """Hand ``buffers`` over to be written after everything before them; ``then()`` is
        called (in the file's thread) once they are no longer needed, e.g. to reuse them."""
        n = sum(memoryview(b).nbytes for b in buffers)
        with self._cond:
            while self._pending_bytes > self.limit and self._error is None:
                self._cond.wait()
            self._raise()
            self._pending.extend(buffers)
            if then is not None:
                self._pending.append(then)
            self._pending_bytes += n
            self._total += n
            if self._pending_bytes >= self.batch:     # wake the thread for a big batch only
                self._cond.notify_all()

    def write_now(self, *buffers) -> None:
        """Write ``buffers`` (the caller keeps them) after everything handed over before:
        through the page cache in this thread without a copy, or, where the direct way has
        begun, copied and handed over (the device's pace is the thread's, not the caller's)."""
        n = sum(memoryview(b).nbytes for b in buffers)
        stage = self._stage
        if stage is not None and stage.direct and self._total + n > stage.direct_after:
            self.write(*[bytes(memoryview(b).cast('B')) for b in buffers])
            return
        self.flush()
        try:
            self._consume(buffers, n)          # the thread is idle: nothing is pending
        except BaseException as exc:           # the file has a hole now: every later write,
            with self._cond:                   # flush and close raises it (no bag is closed
                self._error = exc              # over it as if whole)
            raise
        self._total += n

    def flush(self) -> None:
        """Wait until the thread has taken everything handed over."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            while (self._pending or self._busy) and self._error is None:
                self._cond.wait()
            self._flushing -= 1
            self._raise()

    def close(self) -> None:
        """Write what is pending, end the thread, close the file; raises the thread's error."""
        if self._file.closed:
            return
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        try:
            with self._cond:
                self._raise()
            if self._stage is not None:
                self._stage.finish()
        finally:
            if self._reserved:                 # the reserve beyond the end given back, on
                try:                           # every path (the size stays as written)
                    os.ftruncate(self._fd, os.fstat(self._fd).st_size)
                except OSError:
                    pass
            if self._stage is not None:
                os.close(self._stage.direct_fd)
            self._file.close()

    def _raise(self) -> None:
        if self._error is not None:
            raise OSError(f'writing {self._file.name} failed: {self._error!r}') from self._error

    def _reserve(self, end: int) -> None:
        """Blocks reserved up to ``end`` bytes at least (a step more); a file system that
        refuses (no support, no room: the write will say so) is no longer asked, an
        interrupted call is tried again next time."""
        if not self._reserving or end <= self._reserved:
            return
        length = max(end, self._reserved + self.RESERVE) - self._reserved
        if _FALLOCATE(self._fd, _KEEP_SIZE, self._reserved, length) == 0:
            self._reserved += length
        elif ctypes.get_errno() != errno.EINTR:
            self._reserving = False

    def _consume(self, buffers, n: int) -> None:
        """Write ``buffers`` (``n`` bytes in all) to the file system."""
        self._reserve(self._consumed + n)
        self._consumed += n
        if self._stage is None:
            write_all(self._fd, buffers)
        else:
            self._stage.add(buffers)

    # -- the thread ------------------------------------------------------------------------
    def _run(self) -> None:
        cond = self._cond
        while True:
            with cond:
                while not (self._closing or self._flushing and self._pending
                           or self._pending_bytes >= self.batch):
                    cond.wait()
                if not self._pending:
                    return
                batch = list(self._pending)
                self._pending.clear()
                self._busy = True
            buffers = [b for b in batch if not callable(b)]
            n = sum(memoryview(b).nbytes for b in buffers)
            try:
                self._consume(buffers, n)
                for b in batch:
                    if callable(b):
                        b()
            except BaseException as exc:     # kept for the caller, who raises it
                with cond:
                    self._error, self._busy = exc, False
                    self._pending.clear()
                    self._pending_bytes = 0
                    cond.notify_all()
                return
            del batch, buffers
            with cond:
                self._pending_bytes -= n
                self._busy = False
                cond.notify_all()
