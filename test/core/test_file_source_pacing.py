"""file_source.pacing_gaps: the one pacing rule for replays (the LUX emulator's --replay)."""
import pytest

from ros_sim_bridge.core.file_source import pacing_gaps


def test_gaps_follow_the_recorded_stamps():
    s = 1_000_000_000
    assert pacing_gaps([5 * s, 5 * s + 80_000_000, 5 * s + 160_000_000]) == pytest.approx(
        [0.0, 0.08, 0.08])
    assert pacing_gaps([0, s, 3 * s], speed=2.0) == pytest.approx([0.0, 0.5, 1.0])


def test_capped_never_negative_missing_stamps_and_no_pacing():
    s = 1_000_000_000
    assert pacing_gaps([0, 10 * s, 9 * s, None, 11 * s], max_gap_s=1.0) == pytest.approx(
        [0.0, 1.0, 0.0, 0.0, 1.0])
    assert pacing_gaps([0, s, 2 * s], speed=0) == [0.0, 0.0, 0.0]
    assert pacing_gaps([]) == []
