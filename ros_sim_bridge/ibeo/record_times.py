"""The time an ECU / FUSION or LUX record carries in its body (when it was measured or
estimated), which stamps its ROS messages, and the rule for using it (ROS-free): it is used when
:func:`~ros_sim_bridge.core.ntp.why_invalid_beside` finds it valid beside its message's
checked header time (set, within ``max_jump_s`` of it), else the header time is, and the
record time is counted as invalid (live, playback, ``ibeo_idc info`` and ``to-bag``).
"""
from __future__ import annotations

from typing import Optional

from ros_sim_bridge.core.binary import CodecError
from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S, CheckedTime, why_invalid_beside
from .codec.body_sizes import OBJECT_LAYOUT, SCANNER_INFO_SIZE, scan_body_size, walk_objects

#: data type → the field of its record holding the record's own time (NTP64); the record
#: classes are the registry's of those types (each names its type as ``DATA_TYPE``)
RECORD_TIME_FIELDS = {
    0x2806: 'timestamp_ntp', 0x2807: 'timestamp_ntp', 0x2808: 'timestamp_ntp',   # vehicle state
    0x2604: 'timestamp_ntp', 0x2403: 'timestamp_ntp',                           # GPS, image
    0x9001: 'measurement_time_ecu_ntp', 0x9002: 'measurement_time_ecu_ntp',     # GpsImu, odometry
    0x2204: 'start_ntp', 0x2205: 'start_ntp',                                   # ECU scans
    0x2225: 'mid_scan_ntp', 0x2280: 'mid_scan_ntp', 0x2281: 'mid_scan_ntp',     # object lists
    0x2291: 'mid_scan_ntp',
    0x2821: 'ntp', 0x1002: 'receive_ntp',                                       # measurements, CAN
    0x2202: 'start_ntp', 0x2221: 'scan_start_ntp', 0x2805: 'timestamp_ntp',     # LUX
}
#: the data types of those records
RECORD_TIME_TYPES = frozenset(RECORD_TIME_FIELDS)
#: data types whose record time is their body's first 8 bytes (the scan start time, the
#: mid-scan time, NTP64 big endian, §8/§9 and the object lists'): :func:`leading_time` reads it
#: without decoding the scan's points or the objects (nor importing numpy)
TIME_FIRST = frozenset(SCANNER_INFO_SIZE) | frozenset(OBJECT_LAYOUT)


def leading_time(data_type: int, body) -> Optional[int]:
    """The record time of a :data:`TIME_FIRST` type's body; None when the decoder would refuse
    the body (shorter than its header's counts need, an object or property cut short:
    ``to-bag`` counts it as undecodable)."""
    if data_type in OBJECT_LAYOUT:
        try:
            walk_objects(data_type, body)
        except CodecError:
            return None
    else:
        need = scan_body_size(data_type, body)
        if need is None or need > len(body):
            return None
    return int.from_bytes(body[:8], 'big')


def checked_record_time(record, header_ntp: int, max_jump_s: float = MAX_TIME_JUMP_S
                        ) -> Optional[CheckedTime]:
    """None for a record without a time of its own; else the time to stamp it with (its own
    when valid beside ``header_ntp``, else ``header_ntp``) and why its own is not used (None
    when it is)."""
    name = RECORD_TIME_FIELDS.get(type(record).__dict__.get('DATA_TYPE'))
    if name is None:
        return None
    ntp = getattr(record, name)
    why = why_invalid_beside(ntp, header_ntp, max_jump_s)
    return CheckedTime(ntp if why is None else header_ntp, why)
