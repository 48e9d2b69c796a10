"""``ibeo_idc to-bag``: an IDC recording's messages, converted as the live drivers convert them,
written to a rosbag2 folder in file order (the ROS part of the ``ibeo_idc`` command)."""
from __future__ import annotations

import dataclasses
import itertools
from collections import Counter
from pathlib import Path

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.cli import imports_without_gc
from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S
from ros_sim_bridge.ibeo.idc import IdcReader


class ConversionReport:
    def __init__(self):
        self.written: Counter = Counter()
        self.undecodable: Counter = Counter()      # (data type, kind) → count
        self.without_ros_form: Counter = Counter()
        self.first_errors: list = []
        #: (data type, whether another message of the record was written) → [records,
        #: messages left out for a NaN / ±Inf]; (offset, why) of the first ten
        self.left_out: dict = {}
        self.left_out_examples: list = []
        self.invalid_times = 0
        self.invalid_time_examples: list = []       # (offset, data type, why) of the first
        self.invalid_record_times = 0               # records' own times, likewise
        self.invalid_record_time_examples: list = []
        self.non_finite_points = 0                  # ECU scan points with a NaN / ±Inf x, y, z
        self.non_finite_scans = 0                   # the scans holding them
        self.interrupted = False
        self.stopped_at = 0          # bytes of the file converted (all of it when not interrupted)

    def invalid_record_time(self, entry, why: str) -> None:
        """A record's own time not used (its header time was): counted, the first ten named."""
        self.invalid_record_times += 1
        if len(self.invalid_record_time_examples) < 10:
            self.invalid_record_time_examples.append((entry.offset, entry.data_type, why))

    def skipped(self, entry, exc: CodecError) -> None:
        """A message not written: counted by (data type, kind), the first ten named."""
        self.undecodable[(entry.data_type, exc.kind)] += 1
        if len(self.first_errors) < 10:
            self.first_errors.append((entry.offset, str(exc)))

    def left_out_of(self, entry, refused: list, written: bool) -> None:
        """The ROS messages of a record left out for a NaN / ±Inf (``refused``: a transform,
        odometry, IMU or twist), its others ``written`` or none to write: counted by data type,
        the first ten named."""
        counts = self.left_out.setdefault((entry.data_type, written), [0, 0])
        counts[0] += 1
        counts[1] += len(refused)
        room = 10 - len(self.left_out_examples)
        self.left_out_examples += [(entry.offset, str(exc)) for exc in refused[:max(room, 0)]]


#: :func:`convert` takes the file in windows of this many messages: the smaller ones of a
#: window are decoded and converted first, grouped by data type (a type's code runs hot, not
#: once per frame between scans that flush the caches); the bigger ones (above :data:`IN_ORDER_BYTES` of body: scans, images) and those of the
#: converter's ``STATEFUL_TYPES`` as they are written, so one big one at a time is held
WINDOW = 256
IN_ORDER_BYTES = 16 << 10


class _NoBar:
    """What ``convert`` updates when no progress is shown."""
    def update(self, n) -> None:
        pass

    def close(self) -> None:
        pass


def convert(reader: IdcReader, out: Path, *, namespace: str = '', progress: bool = True,
            converter=None, writer=None, should_stop=lambda: False,
            node_name: str = 'ibeo', max_jump_s: float = MAX_TIME_JUMP_S) -> ConversionReport:
    """Write every convertible message of ``reader`` to the bag folder ``out``, in file order;
    stops between two messages once ``should_stop()`` is true (the bag is closed either way).
    /diagnostics status names start with ``node_name: `` (live: the driver node's name).  An
    invalid header time (``max_jump_s``: :meth:`IdcReader.checked_times`) is replaced by a valid
    neighbour's, as log time and in the header the converter reads.  The converter (an
    :class:`IbeoToRos`; a given one judges record times by its own ``max_jump_s``) must give
    the same for a message whatever it converted before, but for its ``STATEFUL_TYPES`` (see
    :data:`WINDOW`)."""
    with imports_without_gc():
        from ros_sim_bridge.core.memory import reuse_freed_memory
        from ros_sim_bridge.ibeo.codec.scan_ecu import (SCAN_2204, SCAN_2205,
                                                        decode_scan_grouped)
        from ros_sim_bridge.ibeo.ros.ecu_conversions import Conversion, IbeoToRos, ntp_to_ns
        from ros_sim_bridge.ros.bag import BagWriter
        from ros_sim_bridge.ros.pointcloud_cdr import CdrMessage
    reuse_freed_memory()                # each scan's points: a new array of up to 1.8 MB
    conv = converter or IbeoToRos(namespace=namespace, status_prefix=f'{node_name}: ',
                                  max_jump_s=max_jump_s, cdr=True)
    report = ConversionReport()
    scans = (SCAN_2204, SCAN_2205)
    checked = reader.checked_times(max_jump_s)
    report.invalid_times = len(checked.invalid)
    report.invalid_time_examples = reader.invalid_time_examples(checked)

    def converted(batch: list) -> list:
        """A :class:`~ros_sim_bridge.ibeo.ros.ecu_conversions.Conversion` of each (entry,
        checked time) of ``batch`` (of one data type: converted together where the converter
        can; a record that does not decode: its error, a CodecError counted in its turn, any
        other raised in its turn)."""
        records = []
        for entry, ntp in batch:
            header = reader.header(entry)
            if ntp != entry.ntp:        # an invalid header time: a valid neighbour's
                header = dataclasses.replace(header, ntp=ntp)
            try:            # a scan in scanner coordinates: its points grouped by scanner
                records.append((header, decode_scan_grouped(entry.data_type, reader.body(entry))
                                if entry.data_type in scans else reader.decode(entry)))
            except Exception as exc:
                records.append((header, exc))
        made = iter(conv.convert_many([(h, r) for h, r in records
                                       if not isinstance(r, Exception)]))
        return [Conversion(error=r) if isinstance(r, Exception) else next(made)
                for _, r in records]

    bag = writer or BagWriter(out)
    if progress:
        from ros_sim_bridge.core.progress import Progress
        bar = Progress(reader.file_size, Path(reader.path).name)
    else:
        bar = _NoBar()
    messages = list(zip(reader.entries, checked.times))
    done = 0
    try:
        for first in range(0, len(messages), WINDOW):
            window = messages[first:first + WINDOW]
            ahead = {}
            for _, ks in itertools.groupby(sorted(
                    (k for k, (e, _) in enumerate(window)
                     if e.size <= IN_ORDER_BYTES and e.data_type not in conv.STATEFUL_TYPES),
                    key=lambda k: window[k][0].data_type), key=lambda k: window[k][0].data_type):
                ks = list(ks)
                ahead.update(zip(ks, converted([window[k] for k in ks])))
            for k, (entry, ntp) in enumerate(window):
                if should_stop():
                    report.interrupted = True
                    break
                result = ahead.pop(k) if k in ahead else converted([(entry, ntp)])[0]
                if result.invalid_time is not None:
                    report.invalid_record_time(entry, result.invalid_time)
                if isinstance(result.error, CodecError):
                    report.skipped(entry, result.error)
                elif result.error is not None:
                    raise result.error
                else:
                    if result.non_finite:   # written as sent, the cloud not dense
                        report.non_finite_points += result.non_finite
                        report.non_finite_scans += 1
                    if result.refused:      # a transform, odometry, IMU, twist of NaN / ±Inf
                        report.left_out_of(entry, result.refused, bool(result.pairs))
                    if not result.pairs and not result.refused:
                        report.without_ros_form[entry.data_type] += 1
                    t_ns = ntp_to_ns(ntp)
                    for topic, msg in result.pairs:
                        if isinstance(msg, CdrMessage):   # made for this write: handed over
                            bag.write(topic, t_ns, msg.parts, msg.type_name, handed_over=True)
                        else:
                            bag.write_msg(topic, t_ns, msg)
                        report.written[topic] += 1
                bar.update(entry.end - done)
                done = report.stopped_at = entry.end
            if report.interrupted:
                break
        else:
            report.stopped_at = reader.file_size
            bar.update(reader.file_size - done)    # the trailing damage, if any, was read too
    finally:
        bar.close()                     # interrupted: the bar stays where the conversion stopped
        if writer is None:
            bag.close()
    return report
