"""ibeo LUX / SICK LD-MRS / Ibeo ECU protocol codec (sans-IO).

Modules, one concept each: :mod:`.header` (24-byte data header), :mod:`.framing` (the
stream framer: false syncs, decode once),
:mod:`.registry` (data type → decoder/encoder dispatch), :mod:`.scan` (0x2202),
:mod:`.objects` (0x2221), :mod:`.vehicle_state` (0x2805), :mod:`.errors_warnings` (0x2030),
:mod:`.commands` (0x2010 / 0x2020), :mod:`.units` (the factors from the spec's units to SI;
the codec itself keeps the spec's units, see the README's units rule).  Importing
this package registers every type; later modules (ECU 0x2205, 0x2280, 0x2403, ``.idc`` types) register themselves the same way.
"""
from . import header, registry  # noqa: F401  (registry first: the type modules use it)
from . import commands, errors_warnings, objects, scan, vehicle_state  # noqa: F401
from . import (can_message, carriage_way, frame_end, frame_index, gps_imu, image,  # noqa: F401
               measurement_list, meta_information, object_association, objects_ecu,
               odometry, point_cloud_plane, scan_ecu, set_filter, system_monitoring,
               time_record, vehicle_state_ecu)

from . import framing  # noqa: F401  (after the types: it uses their size limits)
from .framing import check_plausible, make_framer, split_messages  # noqa: F401
from .header import (DEFAULT_MAX_BODY, HEADER_SIZE, MAGIC, IbeoHeader, decode_header,  # noqa: F401
                     encode_header, encode_message)
from .registry import (decode_frame, decode_message, encode_record,  # noqa: F401
                       encode_record_message, register, type_name)
