"""The time an ECU / FUSION or LUX record carries in its body (when it was measured or
estimated), which stamps its ROS messages, and the rule for using it (ROS-free): it is used when
:func:`~ros_sim_bridge.core.ntp.why_invalid_beside` finds it valid beside its message's
checked header time (set, within ``max_jump_s`` of it), else the header time is, and the
record time is counted as invalid (live, playback, ``ibeo_idc info`` and ``to-bag``).
"""
from __future__ import annotations

from typing import Optional

from ros_sim_bridge.core.ntp import MAX_TIME_JUMP_S, CheckedTime, why_invalid_beside
from .codec import can_message as cm
from .codec import gps_imu as gi
from .codec import image as im
from .codec import measurement_list as ml
from .codec import objects_ecu as oe
from .codec import objects as lux_objects
from .codec import odometry as od
from .codec import scan as lux_scan
from .codec import scan_ecu as se
from .codec import vehicle_state as lux_vs
from .codec import vehicle_state_ecu as ve

#: record class → the field holding its own time (NTP64)
RECORD_TIME_FIELDS = {
    ve.EcuVehicleState2806: 'timestamp_ntp', ve.EcuVehicleState2807: 'timestamp_ntp',
    ve.EcuVehicleState2808: 'timestamp_ntp', gi.PositionWgs84: 'timestamp_ntp',
    im.EcuImage: 'timestamp_ntp', gi.GpsImu: 'measurement_time_ecu_ntp',
    od.EcuOdometry: 'measurement_time_ecu_ntp',
    se.EcuScan: 'start_ntp', se.EcuScan2204: 'start_ntp',
    oe.EcuObjectList2225: 'mid_scan_ntp', oe.EcuObjectList2280: 'mid_scan_ntp',
    oe.EcuObjectList2281: 'mid_scan_ntp', oe.ReferenceObjectList2291: 'mid_scan_ntp',
    ml.MeasurementList: 'ntp', cm.CanMessage: 'receive_ntp',
    lux_scan.LuxScan: 'start_ntp', lux_objects.LuxObjectList: 'scan_start_ntp',
    lux_vs.LuxVehicleState: 'timestamp_ntp',
}
#: the data types of those records
RECORD_TIME_TYPES = frozenset(cls.DATA_TYPE for cls in RECORD_TIME_FIELDS)
#: data types whose record time is their body's first 8 bytes (the scan start time, NTP64
#: big endian, §8/§9): :func:`leading_time` reads it without decoding the scan's points
TIME_FIRST = frozenset({se.SCAN_2204, se.SCAN_2205})


def leading_time(data_type: int, body) -> Optional[int]:
    """The record time of a :data:`TIME_FIRST` type's body; None when the decoder would refuse
    the body (shorter than its header's counts need: ``to-bag`` counts it as undecodable)."""
    need = se.declared_body_size(data_type, body)
    return int.from_bytes(body[:8], 'big') if need is not None and need <= len(body) else None


def checked_record_time(record, header_ntp: int, max_jump_s: float = MAX_TIME_JUMP_S
                        ) -> Optional[CheckedTime]:
    """None for a record without a time of its own; else the time to stamp it with (its own
    when valid beside ``header_ntp``, else ``header_ntp``) and why its own is not used (None
    when it is)."""
    name = RECORD_TIME_FIELDS.get(type(record))
    if name is None:
        return None
    ntp = getattr(record, name)
    why = why_invalid_beside(ntp, header_ntp, max_jump_s)
    return CheckedTime(ntp if why is None else header_ntp, why)
