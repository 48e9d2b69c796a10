"""core.progress: the progress bar of ``ibeo_idc to-bag`` (tqdm's layout, without its import)."""
import io

import pytest

from ros_sim_bridge.core.progress import Progress, clock_text, size_text


@pytest.mark.parametrize('n,text', [(0, '0.00'), (950, '950'), (999.4, '999'), (999.6, '1.00k'),
                                    (9_870, '9.87k'), (16_849_000, '16.8M'), (123e6, '123M'),
                                    (210_316_239, '210M'), (2.5e9, '2.50G')])
def test_size_text_has_three_significant_digits(n, text):
    assert size_text(n) == text


def test_clock_text():
    assert (clock_text(0), clock_text(61.9), clock_text(3725)) == ('00:00', '01:01', '1:02:05')


def test_bar_draws_where_the_work_stands_and_ends_its_line():
    out = io.StringIO()
    bar = Progress(200_000_000, 'drive.idc', stream=out)
    bar.interval = 0.0                       # every update drawn
    bar.update(50_000_000)
    bar.update(44_600_000)
    bar.close()
    bar.close()                              # once
    text = out.getvalue()
    assert text.endswith('\n') and text.count('\n') == 1
    lines = text.rstrip('\n').split('\r')[1:]
    assert len(lines) == 4                   # at the start, two updates, the close
    assert lines[0].startswith('drive.idc:   0%|' + ' ' * 20 + '| 0.00/200M [00:00<')
    assert lines[-1].startswith('drive.idc:  47%|' + '█' * 9 + ' ' * 11 + '| 94.6M/200M [')
    assert lines[-1].endswith('B/s]')


def test_bar_redraws_at_most_every_interval():
    out = io.StringIO()
    bar = Progress(1000, stream=out)
    bar.interval = 3600.0
    for _ in range(1000):
        bar.update(1)
    bar.close()
    lines = out.getvalue().rstrip('\n').split('\r')[1:]
    assert len(lines) == 2 and lines[-1].startswith('100%|' + '█' * 20 + '| 1.00k/1.00k [')


def test_a_closed_stream_stops_the_bar_not_the_work():
    out = io.StringIO()
    bar = Progress(10, stream=out)
    out.close()
    bar.interval = 0.0
    bar.update(5)
    bar.close()
    assert bar.n == 5
