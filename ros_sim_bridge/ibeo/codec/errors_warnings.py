"""ibeo LUX errors and warnings, data type 0x2030 (spec §6; little-endian, 16 bytes).

Four 16-bit registers (error 1, error 2, warning 1, warning 2) and four reserved words.  Every
named bit of §6.1–6.4 decodes to its spec name and description, a reserved bit that is set to
its register's name and number (``error_register_2.reserved_bit_14``: each register's own).
E-Temp (error register 1, bits 8–9) is a 2-bit field: 01 under temperature, 10 over
temperature, 11 sensor defect.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ros_sim_bridge.core.binary import pack, unpack_from
from . import registry

DATA_TYPE = registry.ERRORS_WARNINGS
NAME = 'ibeo_errors_warnings'

_BODY = struct.Struct('<8H')
SIZE = _BODY.size   # 16

# (mask, name, description) per register; names as in the spec tables (one typo fixed:
# "E-Configuartion_2" is given as E-Configuration_2).
ERROR_REGISTER_1 = (
    (0x0001, 'E-SP', 'internal error'),
    (0x0002, 'E-Motor_1', 'motor fault'),
    (0x0004, 'E-Buffer_1', 'scan buffer transmitted incompletely'),
    (0x0008, 'E-Buffer_2', 'scan buffer overflow'),
    (0x0400, 'E-Motor_2', 'motor fault'),
    (0x0800, 'E-Motor_3', 'motor fault'),
    (0x1000, 'E-Motor_4', 'motor fault'),
    (0x2000, 'E-Motor_5', 'motor fault'),
)
E_TEMP_MASK = 0x0300
E_TEMP = {0x0100: 'APD under temperature', 0x0200: 'APD over temperature',
          0x0300: 'APD temperature sensor defect'}
ERROR_REGISTER_2 = (
    (0x0001, 'E-IF_internal_1', 'no scan data received'),
    (0x0002, 'E-IF_internal_2', 'internal communication error'),
    (0x0004, 'E-IF_internal_3', 'incorrect scan data'),
    (0x0008, 'E-Configuration_1', 'FPGA not configurable'),
    (0x0010, 'E-Configuration_2', 'incorrect configuration data'),
    (0x0020, 'E-Configuration_3', 'configuration contains incorrect parameters'),
    (0x0040, 'E-Timeout_1', 'data processing timeout'),
    (0x0080, 'E-Timeout_2', 'reset the computation of the environmental model'),
)
WARNING_REGISTER_1 = (
    (0x0001, 'W-CMD', 'internal communication error'),
    (0x0008, 'W-low_temperature', 'temperature too low'),
    (0x0010, 'W-high_temperature', 'temperature too high'),
    (0x0020, 'W-Motor_1', 'internal warning'),
    (0x0080, 'W-Sync', 'synchronisation error'),
    (0x1000, 'W-SP_1', 'start pulse missing (laser 1)'),
    (0x2000, 'W-SP_2', 'start pulse missing (laser 2)'),
)
WARNING_REGISTER_2 = (
    (0x0001, 'W-IF_CAN', 'CAN interface blocked'),
    (0x0002, 'E-IF_ETH', 'Ethernet interface blocked'),   # spec names it E-, in a warning register
    (0x0004, 'W-CANdata', 'incorrect CAN message received'),
    (0x0008, 'W-IF_internal_1', 'incorrect scan data'),
    (0x0010, 'W-ETHdata', 'unknown or incomplete data'),
    (0x0020, 'W-Command', 'incorrect or forbidden command received'),
    (0x0040, 'W-Flash', 'memory access failure'),
    (0x0080, 'W-Overflow_1', 'internal overflow'),
    (0x0100, 'W-EgoMotion', 'vehicle data update missing'),
    (0x0200, 'W-Mounting Position', 'incorrect mounting parameters'),
    (0x0400, 'W-CalcFrequency', 'no object computation due to scan frequency'),
)
#: Register name → table, in body order.
REGISTERS = (('error_register_1', ERROR_REGISTER_1), ('error_register_2', ERROR_REGISTER_2),
             ('warning_register_1', WARNING_REGISTER_1), ('warning_register_2', WARNING_REGISTER_2))


def mask_for(name: str) -> tuple[str, int]:
    """(register field, mask) of a bit name, e.g. ``mask_for('W-Sync')`` (for encoders/tests)."""
    for reg, table in REGISTERS:
        for mask, bit_name, _ in table:
            if bit_name == name:
                return reg, mask
    if name.startswith('E-Temp'):
        return 'error_register_1', E_TEMP_MASK
    raise KeyError(name)


def _decode_register(register: str, value: int, table) -> list[tuple[str, str]]:
    """(name, description) of the bits set in ``value`` of the register named ``register``."""
    out = [(name, text) for mask, name, text in table if value & mask]
    known = 0
    for mask, _, _ in table:
        known |= mask
    rest = value & ~known & 0xFFFF
    for bit in range(16):
        if rest & (1 << bit):
            out.append((f'{register}.reserved_bit_{bit}', 'reserved'))
    return out


@dataclass(frozen=True)
class LuxErrorsWarnings:
    """0x2030: the four registers (raw) and the reserved words; properties name the bits."""
    error_register_1: int = 0
    error_register_2: int = 0
    warning_register_1: int = 0
    warning_register_2: int = 0
    reserved: tuple = (0, 0, 0, 0)

    DATA_TYPE = DATA_TYPE

    @property
    def errors(self) -> list[tuple[str, str]]:
        """(name, description) of every error bit set (reserved bits as
        ``error_register_<k>.reserved_bit_<n>``)."""
        temp = self.error_register_1 & E_TEMP_MASK
        out = _decode_register('error_register_1', self.error_register_1 & ~E_TEMP_MASK,
                               ERROR_REGISTER_1)
        if temp:
            out.insert(0, ('E-Temp', E_TEMP[temp]))
        return out + _decode_register('error_register_2', self.error_register_2,
                                      ERROR_REGISTER_2)

    @property
    def warnings(self) -> list[tuple[str, str]]:
        return (_decode_register('warning_register_1', self.warning_register_1,
                                 WARNING_REGISTER_1)
                + _decode_register('warning_register_2', self.warning_register_2,
                                   WARNING_REGISTER_2))

    @property
    def error_names(self) -> list[str]:
        return [n for n, _ in self.errors]

    @property
    def warning_names(self) -> list[str]:
        return [n for n, _ in self.warnings]

    @property
    def has_error(self) -> bool:
        return bool(self.error_register_1 or self.error_register_2)

    @property
    def has_warning(self) -> bool:
        return bool(self.warning_register_1 or self.warning_register_2)


def decode_errors(body, header=None) -> LuxErrorsWarnings:
    """Decode a 0x2030 body (§6); trailing bytes beyond 16 are ignored."""
    e1, e2, w1, w2, *reserved = unpack_from(_BODY, body, 0, NAME, 'registers')
    return LuxErrorsWarnings(e1, e2, w1, w2, tuple(reserved))


def encode_errors(m: LuxErrorsWarnings) -> bytes:
    reserved = tuple(m.reserved) + (0,) * (4 - len(m.reserved))
    return pack(_BODY, (m.error_register_1, m.error_register_2, m.warning_register_1,
                        m.warning_register_2) + reserved[:4], NAME)


def errors_from_names(*names: str) -> LuxErrorsWarnings:
    """A message with the named bits set (e.g. ``'W-Sync', 'E-Motor_1'``)."""
    regs = dict.fromkeys((r for r, _ in REGISTERS), 0)
    for name in names:
        reg, mask = mask_for(name)
        regs[reg] |= mask
    return LuxErrorsWarnings(**regs)


registry.register(DATA_TYPE, 'lux_errors_warnings', decode_errors, record=LuxErrorsWarnings,
                  encode=encode_errors, min_size=SIZE, max_size=SIZE + 64)
