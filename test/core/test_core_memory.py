"""core.memory.reuse_freed_memory: after it, arrays of a few MB made and freed a few at a time
(a converter's point arrays) reuse the process's pages instead of faulting fresh ones in.
Measured in a child process (the setting is the whole process's) by its minor page faults."""
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent('''
    import resource, sys
    import numpy as np
    from ros_sim_bridge.core.memory import reuse_freed_memory

    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    def cycles(n):                       # 8 scans' worth alive at once, then all freed
        start = faults()
        for _ in range(n):
            arrays = [np.ones(1_700_000, np.uint8) for _ in range(8)]
            del arrays
        return faults() - start

    cycles(3)
    before = cycles(10)
    applied = reuse_freed_memory()
    cycles(3)
    print(applied, before, cycles(10), reuse_freed_memory())
''')


def test_freed_buffers_are_reused_without_page_faults():
    out = subprocess.run([sys.executable, '-c', CHILD], capture_output=True, text=True,
                         check=True).stdout.split()
    applied, before, after, again = out[0] == 'True', int(out[1]), int(out[2]), out[3]
    if not applied:
        pytest.skip('not glibc: no mallopt')
    pages = 10 * 8 * 1_700_000 // 4096
    assert before > pages // 2           # glibc's defaults: most arrays on fresh pages
    assert after < pages // 50           # now: the same pages again
    assert again == 'True'               # idempotent
