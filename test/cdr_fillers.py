"""The element fillers of cdr_template.messages_with_elements, as a fixture for the tests
that check its bytes."""
import pytest

from ros_sim_bridge.ros import cdr_native, cdr_template


@pytest.fixture(params=['compiled', 'numpy'])
def both_fillers(request, monkeypatch):
    """The test once with the compiled element filler (``cdr_fill.c``) and once with numpy's
    index arrays: the same bytes either way."""
    if request.param == 'compiled' and not cdr_native.AVAILABLE:
        pytest.skip('the compiled filler is not built here')
    monkeypatch.setattr(cdr_template, 'NATIVE', request.param == 'compiled')
    return request.param
