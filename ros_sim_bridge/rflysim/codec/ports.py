"""The truth port of a CopterID (SUPPLEMENT §2.1)."""
from __future__ import annotations

from ros_sim_bridge.core.binary import CodecError, check_range

TRUTH_BASE_PORT = 30101        # CopterID 1; ID n uses 30101 + 2·(n − 1)  (SUPPLEMENT §2.1)
COPTER_ID_MIN, COPTER_ID_MAX = 1, 255  # the document's CopterID range (mask parameter)


def truth_port(copter_id: int, base_port: int = TRUTH_BASE_PORT) -> int:
    """UDP port of CopterID's ground truth: ``base_port + 2·(copter_id − 1)`` (SUPPLEMENT §2.1;
    the document's ``30101 + 2·ID`` is the next vehicle's port).  CopterID 1..255 (document)."""
    if isinstance(copter_id, bool) or not isinstance(copter_id, int):
        raise CodecError('truth_port', f'CopterID must be an int, not {copter_id!r}',
                         field='copter_id')
    check_range(copter_id, COPTER_ID_MIN, COPTER_ID_MAX, 'truth_port', 'copter_id')
    port = base_port + 2 * (copter_id - 1)
    check_range(port, 1, 65535, 'truth_port', 'port')
    return port
