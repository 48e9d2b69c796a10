"""Coverage-guided fuzzing with atheris, where it is installed (optional: skipped otherwise).

atheris_decoders.py runs in a subprocess (libFuzzer ends its process); the ci profile runs a
fixed, seeded number of inputs, the long profile a share of FUZZ_SECONDS.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import fuzz_support as fz

pytestmark = pytest.mark.skipif(importlib.util.find_spec('atheris') is None,
                                reason='atheris is not installed (optional)')

HARNESS = Path(__file__).with_name('atheris_decoders.py')


def test_atheris_decoders(tmp_path):
    if os.environ.get('FUZZ_PROFILE') == 'long':
        seconds = max(2, round(fz.BUDGET['per_test']))
        limit = [f'-max_total_time={seconds}']
    else:
        limit = ['-runs=20000', '-seed=1']
    proc = subprocess.run([sys.executable, str(HARNESS), *limit, '-max_len=4096',
                           f'-artifact_prefix={tmp_path}/'], capture_output=True, text=True,
                          timeout=600)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    done = re.findall(r'Done (\d+) runs', log)
    assert done, log[-2000:]
    fz.COUNTS['atheris(all decoders, coverage-guided)'] = \
        fz.COUNTS.get('atheris(all decoders, coverage-guided)', 0) + int(done[-1])
