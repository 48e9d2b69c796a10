"""Hypothesis profiles of the fuzz suite, and the long run behind ``make fuzz``.

* ``ci`` (default, ``make test``): derandomised (the same examples every run), a few hundred
  examples per entry point, no shrinking database; the whole directory stays well under a minute.
* ``long`` (``FUZZ_PROFILE=long``, ``make fuzz``): fresh random examples, each fuzz test called
  round after round (each round sized from the measured cost of an example) until its share of
  ``FUZZ_SECONDS`` (default 60, split evenly over the collected fuzz tests) is used up; then a
  table of inputs tried per entry point is printed (and written as markdown to ``FUZZ_TABLE``
  when set).

Entry points count their inputs with :func:`fuzz_support.tried`.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import fuzz_support

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture]
settings.register_profile('ci', derandomize=True, max_examples=100, deadline=None,
                          database=None, print_blob=True, suppress_health_check=_SLOW_OK)
settings.register_profile('long', derandomize=False, max_examples=200, deadline=None,
                          database=None, print_blob=True, suppress_health_check=_SLOW_OK)
PROFILE = os.environ.get('FUZZ_PROFILE', 'ci')
settings.load_profile(PROFILE)

_budget = {'per_test': 0.0}


def _keep_root_conftest_importable(config) -> None:
    """Tests elsewhere do ``from conftest import free_tcp_port, …``: pytest imports every
    conftest.py as the module ``conftest`` (rootdir import mode), so after this one is loaded the
    name must point at test/conftest.py again."""
    mod = sys.modules.get('conftest')
    if mod is None or Path(getattr(mod, '__file__', '')).resolve() != Path(__file__).resolve():
        return
    root = Path(__file__).resolve().parents[1] / 'conftest.py'
    for plugin in config.pluginmanager.get_plugins():
        path = getattr(plugin, '__file__', None)
        if path and Path(path).resolve() == root:
            sys.modules['conftest'] = plugin
            return


def pytest_configure(config):
    _keep_root_conftest_importable(config)


def pytest_collectstart(collector):
    _keep_root_conftest_importable(collector.config)


def _is_fuzz(item) -> bool:
    return getattr(getattr(item, 'obj', None), 'is_hypothesis_test', False) \
        and 'test/fuzz' in str(item.fspath).replace(os.sep, '/')


def pytest_collection_modifyitems(config, items):
    fuzz = [i for i in items if _is_fuzz(i)]
    for item in fuzz:      # NaN / Inf inputs make numpy warn; the properties are what counts
        item.add_marker(pytest.mark.filterwarnings('ignore::RuntimeWarning'))
    timed = fuzz + [i for i in items if i.name.startswith('test_atheris')]
    if PROFILE == 'long' and timed:
        _budget['per_test'] = fuzz_support.BUDGET['per_test'] = \
            float(os.environ.get('FUZZ_SECONDS', '60')) / len(timed)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Long profile: call the hypothesis test again (a new random seed each round) until its
    time share is used up.  A failure ends the rounds and reports as usual."""
    if PROFILE != 'long' or not _is_fuzz(pyfuncitem):
        return None
    fn = pyfuncitem.obj
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    base = fn._hypothesis_internal_use_settings
    end = time.monotonic() + _budget['per_test']
    n = 20                       # a short first round measures the cost of one example
    try:
        while True:
            fn._hypothesis_internal_use_settings = settings(base, max_examples=n)
            t0 = time.monotonic()
            fn(**args)
            per_example = (time.monotonic() - t0) / n
            left = end - time.monotonic()
            if left <= 0:
                return True
            n = int(min(5000, max(10, 0.9 * left / max(per_example, 1e-6))))
    finally:
        fn._hypothesis_internal_use_settings = base


def pytest_terminal_summary(terminalreporter):
    counts = fuzz_support.COUNTS
    if not counts or (PROFILE != 'long' and not os.environ.get('FUZZ_TABLE')):
        return
    total = sum(counts.values())
    seconds = time.monotonic() - fuzz_support.STARTED
    lines = ['| entry point | inputs tried |', '|---|---:|']
    lines += [f'| `{name}` | {n:,} |' for name, n in sorted(counts.items())]
    lines.append(f'| **total** ({len(counts)} entry points, {seconds:.0f} s) | {total:,} |')
    terminalreporter.write_sep('=', f'fuzz: inputs tried per entry point (profile {PROFILE})')
    for line in lines:
        terminalreporter.write_line(line)
    path = os.environ.get('FUZZ_TABLE')
    if path:
        with open(path, 'w', encoding='utf-8') as out:
            out.write('\n'.join(lines) + '\n')
