"""core.write_behind: a file written by a thread of its own, direct (O_DIRECT) or through the
page cache; the file holds exactly the bytes handed over, in order."""
import ctypes
import os
import sys
import threading

import numpy as np
import pytest

from ros_sim_bridge.core.write_behind import WriteBehindFile


def _pieces(seed: int, count: int):
    """Buffers of every kind and of awkward sizes (0, 1, odd, around the staging size)."""
    rng = np.random.default_rng(seed)
    sizes = [0, 1, 3, 4095, 4096, 4097, WriteBehindFile.STAGE - 1, WriteBehindFile.STAGE + 5]
    sizes += rng.integers(0, 300_000, count).tolist()
    out = []
    for k, n in enumerate(sizes):
        raw = rng.integers(0, 256, n, dtype=np.uint8)
        out.append([raw.tobytes(), bytearray(raw.tobytes()), memoryview(raw.tobytes()),
                    raw][k % 4])
    return out


@pytest.mark.parametrize('direct,direct_after', [(True, 0), (True, 10_001), (True, None),
                                                  (False, None)])
def test_file_holds_every_byte_in_order(tmp_path, direct, direct_after):
    """Direct from the first byte, from an unaligned offset on, after the default 1 GiB
    (here: never), or never."""
    pieces = _pieces(1, 60)
    path = tmp_path / 'out.bin'
    released = []
    f = WriteBehindFile(path, direct=direct, direct_after=direct_after, limit=1 << 20,
                        batch=256 << 10)
    for k, p in enumerate(pieces):
        if k % 7 == 3:
            kept = bytearray(p)
            f.write_now(kept)                      # the caller's: usable again on return
            kept[:] = bytes(len(kept))
        else:
            f.write(p, then=lambda k=k: released.append(k))
    f.close()
    f.close()                                      # idempotent
    expected = b''.join(bytes(p) for p in pieces)
    assert path.read_bytes() == expected
    assert released == [k for k in range(len(pieces)) if k % 7 != 3]


def test_direct_mode_on_a_disk_file_system_and_a_tail_not_a_block(tmp_path):
    """A size that is no multiple of the device block: whole blocks direct, the tail
    through the page cache (the file is exact)."""
    path = tmp_path / 'tail.bin'
    f = WriteBehindFile(path, direct_after=5)
    data = os.urandom(3 * WriteBehindFile.STAGE + 12_345)
    f.write(data)
    f.close()
    assert path.read_bytes() == data


def _file_system_reserves(folder) -> bool:
    """Whether the file system of ``folder`` takes fallocate(FALLOC_FL_KEEP_SIZE)."""
    libc = ctypes.CDLL(None)
    probe = folder / 'probe'
    with open(probe, 'wb') as f:
        ok = libc.fallocate(f.fileno(), 1, ctypes.c_int64(0), ctypes.c_int64(1 << 20)) == 0
    probe.unlink()
    return ok


@pytest.mark.parametrize('direct', [False, True])
def test_space_is_reserved_ahead_and_the_rest_given_back_at_close(tmp_path, direct):
    """Blocks are reserved a step ahead of the writes while the file's size stays what was
    written; close gives back what lies beyond the end (the file is exact, in bytes and on
    disk)."""
    if not sys.platform.startswith('linux') or not _file_system_reserves(tmp_path):
        pytest.skip('no fallocate(FALLOC_FL_KEEP_SIZE) here: the writes go on without')
    path = tmp_path / 'reserved.bin'
    f = WriteBehindFile(path, direct=direct, direct_after=0 if direct else None)
    data = os.urandom(3 * WriteBehindFile.STAGE + 1234)
    f.write_now(data[:5000])
    f.flush()                                         # written (and reserved) by now
    st = os.stat(path)
    assert st.st_blocks * 512 >= 16 << 20             # reserved well ahead of 5000 bytes
    assert st.st_size <= 5000                         # (direct: a partial block waits)
    f.write(data[5000:])
    f.close()
    st = os.stat(path)
    assert path.read_bytes() == data
    assert st.st_blocks * 512 < len(data) + (1 << 20)   # the reserve beyond the end is back


def test_the_reserve_is_given_back_when_the_thread_failed(tmp_path):
    """An error in the file's thread: close raises it, and still gives the blocks reserved
    beyond the end back."""
    if not sys.platform.startswith('linux') or not _file_system_reserves(tmp_path):
        pytest.skip('no fallocate(FALLOC_FL_KEEP_SIZE) here: the writes go on without')
    path = tmp_path / 'failed.bin'
    f = WriteBehindFile(path, direct=False, batch=1)

    def fail():
        raise RuntimeError('the file thread failed')
    f.write(os.urandom(100_000), then=fail)
    with pytest.raises(OSError, match='failed.bin'):
        f.close()
    st = os.stat(path)
    assert st.st_size == 100_000 and st.st_blocks * 512 < 1 << 20


def test_memory_is_bounded_writer_waits(tmp_path):
    """write() blocks while more than `limit` bytes are pending (the thread is held up here
    by a slow `then`), and goes on once they are written."""
    gate = threading.Event()
    f = WriteBehindFile(tmp_path / 'b.bin', limit=100, batch=1)
    f.write(b'x' * 150, then=gate.wait)
    done = threading.Event()
    t = threading.Thread(target=lambda: (f.write(b'y' * 10), done.set()))
    t.start()
    assert not done.wait(0.3)
    gate.set()
    assert done.wait(10)
    f.close()
    assert (tmp_path / 'b.bin').read_bytes() == b'x' * 150 + b'y' * 10


def test_an_error_in_the_thread_is_raised_by_the_caller(tmp_path):
    f = WriteBehindFile(tmp_path / 'e.bin', direct=False, batch=1)
    os.close(f._fd)                                 # every write now fails (EBADF)
    f.write(b'abc')
    with pytest.raises(OSError, match='e.bin'):
        for _ in range(100):
            f.flush()
            f.write(b'abc')
    with pytest.raises(OSError):
        f.close()


def test_a_failed_write_now_breaks_the_file_for_good(tmp_path):
    """write_now fails in the caller's thread (here: its descriptor gone for a moment, as a
    disk full for a moment): the file has a hole, so every later write, flush and close
    raises, even once the descriptor works again (a bag is never finished over a hole)."""
    path = tmp_path / 'hole.bin'
    f = WriteBehindFile(path, direct=False)
    f.write_now(b'head')
    spare = os.dup(f._fd)
    os.close(f._fd)
    with pytest.raises(OSError):
        f.write_now(b'lost')
    os.dup2(spare, f._fd)                           # the descriptor works again
    os.close(spare)
    for call in (lambda: f.write(b'x'), lambda: f.write_now(b'y'), f.flush, f.close):
        with pytest.raises(OSError, match='hole.bin'):
            call()
    assert path.read_bytes() == b'head'


def test_refuses_an_existing_file(tmp_path):
    (tmp_path / 'x').write_bytes(b'')
    with pytest.raises(FileExistsError):
        WriteBehindFile(tmp_path / 'x')
