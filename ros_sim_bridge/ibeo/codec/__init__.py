"""ibeo LUX / SICK LD-MRS / Ibeo ECU protocol codec (sans-IO).

Modules, one concept each: :mod:`.header` (24-byte data header), :mod:`.framing` (the
stream framer: false syncs, decode once),
:mod:`.registry` (data type → decoder/encoder dispatch), :mod:`.scan` (0x2202),
:mod:`.objects` (0x2221), :mod:`.vehicle_state` (0x2805), :mod:`.errors_warnings` (0x2030),
:mod:`.commands` (0x2010 / 0x2020), :mod:`.units` (the factors from the spec's units to SI;
the codec itself keeps the spec's units, see the units rule in docs/development.md), and the ECU and
``.idc`` types (0x2205, 0x2280, 0x2403, …).  Each type's module registers it when imported;
the registry imports it when a body of that type is first decoded
(:data:`.registry.KNOWN_TYPES`), so framing and indexing import no decoder.  A type module is
also an attribute of this package (``codec.scan_ecu``), imported on first use.
"""
import importlib

from . import header, registry  # noqa: F401
from . import framing  # noqa: F401
from .framing import check_plausible, make_framer, split_messages  # noqa: F401
from .header import (DEFAULT_MAX_BODY, HEADER_SIZE, MAGIC, IbeoHeader, decode_header,  # noqa: F401
                     encode_header, encode_message)
from .registry import (decode_frame, decode_message, encode_record,  # noqa: F401
                       encode_record_message, register, type_name)

#: the modules of this package imported on first use as its attributes
_LAZY = frozenset({'can_message', 'carriage_way', 'commands', 'errors_warnings', 'fixed_layout',
                   'frame_end', 'frame_index', 'gps_imu', 'image', 'measurement_list',
                   'meta_information', 'object_association', 'objects', 'objects_ecu',
                   'odometry', 'point_cloud_plane', 'scan', 'scan_ecu', 'set_filter',
                   'system_monitoring', 'time_record', 'typed_values', 'units',
                   'vehicle_state', 'vehicle_state_ecu'})


def __getattr__(name: str):
    if name in _LAZY:
        return importlib.import_module(f'{__name__}.{name}')
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
