"""The installed ``ibeo_idc`` and ``ibeo_lux_sim`` as a new user meets them: a missing, empty,
text or out-of-range input is one clear line on stderr and exit code 2 (no traceback, no
numpy warning, no file or folder created); ``info | head`` ends quietly; ``from-hex`` turns a
hex log (one message per line, e.g. the real LD-MRS ``.hexlog`` captures) into an ``.idc``."""
from __future__ import annotations

import os
import subprocess

import pytest

from ros_sim_bridge.ibeo.codec import registry
from ros_sim_bridge.ibeo.ecu_recording import write_recording
from ros_sim_bridge.ibeo.idc import IdcReader
from ros_sim_bridge.tools.launcher import executable

from conftest import shared_path

#: one 0x2030 written by hand: header (magic, previous size 0, size 16, reserved, device 0,
#: type, NTP 141.02 s after power-up), then the four registers little-endian: warning
#: register 2 = 0x0002 (Ethernet blocked, as in the real captures) and 8 reserved bytes
HAND_LINE = ('AFFEC0C2' '00000000' '00000010' '00' '00' '2030' '0000008D05EF5420'
             '0000' '0000' '0000' '0200' '0000000000000000')


def run(name: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(executable(name)), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def assert_refused(proc: subprocess.CompletedProcess, *words: str) -> None:
    """Exit code 2 and exactly one line on stderr, naming ``words``."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (proc.returncode, proc.stderr)
    for word in words:
        assert word in lines[0], lines[0]


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp('demo') / 'demo.idc'
    write_recording(path, seconds=0.5, scanners=2, points=300)
    return path


@pytest.mark.parametrize('args, words', [
    (['--replay', 'nosuch.idc'], ['--replay', 'nosuch.idc', 'No such file']),
    (['--ecu', '--points', '70000'], ['points', '65535', '70000']),
    (['--ecu', '--scanners', '0'], ['scanners', '1..']),
    (['--replay-speed', 'nan'], ['--replay-speed']),
])
def test_emulator_refuses_bad_arguments_in_one_line(args, words):
    proc = run('ibeo_lux_sim', '--port', '0', *args, timeout=60)
    assert_refused(proc, 'ibeo_lux_sim: ', *words)


def test_emulator_on_a_port_in_use_is_one_line():
    import socket
    with socket.socket() as holder:
        holder.bind(('127.0.0.1', 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = run('ibeo_lux_sim', '--port', port, '--duration', '1', timeout=60)
    assert_refused(proc, 'cannot listen on', str(port))


def test_emulator_refuses_a_replay_file_without_messages(tmp_path):
    (tmp_path / 'empty.idc').write_bytes(b'')
    assert_refused(run('ibeo_lux_sim', '--port', '0', '--replay', tmp_path / 'empty.idc'),
                   'no Ibeo message')


@pytest.mark.parametrize('args, words', [
    (['--points', '70000'], ['points', '65535', '70000']),
    (['--scanners', '0'], ['scanners', '1..']),
    (['--seconds', 'nan'], ['--seconds']),
])
def test_make_demo_refuses_values_out_of_range_before_writing(tmp_path, args, words):
    out = tmp_path / 'x.idc'
    proc = run('ibeo_idc', 'make-demo', out, *args)
    assert_refused(proc, 'ibeo_idc: ', *words)
    assert 'Warning' not in proc.stderr and not out.exists()


def test_outputs_in_a_missing_folder_are_refused_not_created(tmp_path, demo):
    missing = tmp_path / 'nonexist'
    assert_refused(run('ibeo_idc', 'make-demo', missing / 'x.idc'), str(missing),
                   'does not exist')
    assert_refused(run('ibeo_idc', 'to-bag', demo, missing / 'bag'), str(missing),
                   'does not exist')
    assert_refused(run('ibeo_idc', 'from-hex', demo, missing / 'x.idc'), 'does not exist')
    assert not missing.exists()


def test_an_empty_file_is_refused_by_info_and_to_bag(tmp_path):
    empty = tmp_path / 'empty.idc'
    empty.write_bytes(b'')
    assert_refused(run('ibeo_idc', 'info', empty), str(empty), 'empty file (0 bytes)')
    assert_refused(run('ibeo_idc', 'to-bag', empty, tmp_path / 'bag'), 'empty file')
    assert not (tmp_path / 'bag').exists()


def test_info_and_to_bag_refuse_hex_text_and_naming_how_to_convert_it(tmp_path):
    hexlog = tmp_path / 'x.hexlog'
    hexlog.write_text(HAND_LINE + '\n')
    for proc in (run('ibeo_idc', 'info', hexlog), run('ibeo_idc', 'to-bag', hexlog,
                                                       tmp_path / 'bag')):
        assert_refused(proc, str(hexlog), 'no Ibeo message', 'hex text', 'ibeo_idc from-hex')
        assert proc.stdout == ''
    assert not (tmp_path / 'bag').exists()


@pytest.mark.parametrize('value', ['0', '-1', 'nan', 'inf', 'soon'])
def test_a_time_jump_bound_that_is_no_positive_finite_number_is_refused(demo, value):
    proc = run('ibeo_idc', '--max-time-jump', value, 'info', demo)
    assert proc.returncode == 2 and 'Traceback' not in proc.stderr and proc.stdout == ''
    assert (f"argument --max-time-jump: '{value}' is not a finite number of seconds > 0"
            in proc.stderr), proc.stderr


def test_info_refuses_a_file_without_any_ibeo_message(tmp_path):
    noise = tmp_path / 'noise.idc'
    noise.write_bytes(bytes(range(256)) * 400)
    proc = run('ibeo_idc', 'info', noise)
    assert_refused(proc, str(noise), 'no Ibeo message', 'at byte 0')
    assert proc.stdout == ''


def test_info_into_a_closed_pipe_ends_quietly(demo):
    """`ibeo_idc info demo.idc | head -2`: the reader is gone before the output is written
    (here deterministically: no reader at all); no 'Broken pipe' line, exit code 0."""
    r, w = os.pipe()
    os.close(r)
    try:
        proc = subprocess.Popen([str(executable('ibeo_idc')), 'info', str(demo)], stdout=w,
                                stderr=subprocess.PIPE, text=True)
    finally:
        os.close(w)
    _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (0, '')


def test_info_piped_to_head_ends_quietly(demo):
    proc = subprocess.run(f'"{executable("ibeo_idc")}" info "{demo}" | head -2', shell=True,
                          capture_output=True, text=True, timeout=120,
                          executable='/bin/bash')
    assert proc.stdout.splitlines()[0].startswith('file:') and len(proc.stdout.splitlines()) == 2
    assert proc.stderr == ''


def test_from_hex_one_hand_written_line_and_bad_lines_named(tmp_path):
    src, out = tmp_path / 'hand.hexlog', tmp_path / 'hand.idc'
    src.write_text(f'{HAND_LINE}\n\nnot hex at all\nAFFEC0C2\n{HAND_LINE.lower()}\n')
    proc = run('ibeo_idc', 'from-hex', src, out)
    assert proc.returncode == 0, proc.stderr
    assert 'wrote 2 messages' in proc.stdout and '2 bad lines skipped' in proc.stdout
    assert 'line 3 skipped: not hex text' in proc.stderr
    assert 'line 4 skipped: 4 bytes, not an Ibeo message' in proc.stderr
    assert out.read_bytes() == bytes.fromhex(HAND_LINE) * 2      # the bytes unchanged
    with IdcReader(out) as reader:
        assert len(reader) == 2 and not reader.damages and not reader.chain_breaks
        entry = reader[0]
        assert (entry.data_type, entry.device_id, entry.ntp >> 32) == (0x2030, 0, 141)
        record = reader.decode(entry)
    assert (record.error_register_1, record.warning_register_2) == (0, 2)
    assert registry.type_name(entry.data_type) == 'lux_errors_warnings'


def test_from_hex_never_replaces_a_link_a_fifo_or_a_pending_part(tmp_path):
    """The output is written as a new file put in place: over a symlink, a FIFO or a device
    that would replace them (as root, /dev/null), so each is refused; a `.part` that exists
    (another conversion) is not taken over."""
    src = tmp_path / 'hand.hexlog'
    src.write_text(f'{HAND_LINE}\n')
    target = tmp_path / 'target.idc'
    target.write_bytes(b'kept')
    (tmp_path / 'link.idc').symlink_to(target)
    os.mkfifo(tmp_path / 'fifo.idc')
    for name in ('link.idc', 'fifo.idc'):
        assert_refused(run('ibeo_idc', 'from-hex', src, tmp_path / name), 'not a regular file')
    assert (tmp_path / 'link.idc').is_symlink() and target.read_bytes() == b'kept'
    (tmp_path / 'x.idc.part').write_bytes(b'other')
    assert_refused(run('ibeo_idc', 'from-hex', src, tmp_path / 'x.idc'), 'x.idc.part exists')
    assert (tmp_path / 'x.idc.part').read_bytes() == b'other'


def test_from_hex_refuses_a_file_without_a_message(tmp_path, demo):
    proc = run('ibeo_idc', 'from-hex', demo, tmp_path / 'x.idc')          # binary, not hex
    assert_refused(proc, 'no Ibeo message', 'line 1')
    assert not (tmp_path / 'x.idc').exists() and not (tmp_path / 'x.idc.part').exists()
    (tmp_path / 'e.hexlog').write_text('\n')
    assert_refused(run('ibeo_idc', 'from-hex', tmp_path / 'e.hexlog', tmp_path / 'x.idc'),
                   'no Ibeo message')


@pytest.mark.parametrize('name, messages', [('20120921-200352_record.hexlog', 100),
                                            ('20120921-200644_record.hexlog', 100)])
def test_from_hex_on_the_real_ldmrs_captures_then_info_and_to_bag(tmp_path, name, messages):
    src = shared_path('samples', 'ibeo', 'raulexposito-ldmrs', name)
    out = tmp_path / 'cap.idc'
    proc = run('ibeo_idc', 'from-hex', src, out)
    assert proc.returncode == 0 and proc.stderr == '', proc.stderr
    assert f'wrote {messages} messages' in proc.stdout
    lines = [bytes.fromhex(ln) for ln in src.read_text().splitlines() if ln.strip()]
    assert out.read_bytes() == b''.join(lines)
    with IdcReader(out) as reader:                  # read without a single report
        assert len(reader) == messages and not reader.damages and not reader.chain_breaks
        assert {e.data_type for e in reader} == {0x2202, 0x2030}
    info = run('ibeo_idc', 'info', out)
    assert info.returncode == 0 and 'damage:    0 region(s)' in info.stdout
    bag = run('ibeo_idc', 'to-bag', out, tmp_path / 'bag', '--no-progress')
    assert bag.returncode == 0 and (tmp_path / 'bag' / 'metadata.yaml').exists(), bag.stderr
    assert 'wrote ' in bag.stdout and 'wrote 0 ' not in bag.stdout
