"""Frame end separator 0x1100 (spec §23; big-endian) and the IDC trailer 0x6120 (spec §27,
header only: marks the end of an ``.idc`` file)."""
from __future__ import annotations

from dataclasses import dataclass

from . import registry
from .fixed_layout import FixedLayout

FRAME_END_1100 = 0x1100
IDC_TRAILER_6120 = 0x6120


@dataclass(frozen=True)
class FrameEndSeparator:
    """§23: frame id, size of this frame and of the next (bytes between separators; 0 when
    unknown), creation time NTP64, six reserved UINT16."""
    frame_id: int = 0
    size_of_this_frame: int = 0
    size_of_next_frame: int = 0
    creation_ntp: int = 0
    reserved01: int = 0
    reserved02: int = 0
    reserved03: int = 0
    reserved04: int = 0
    reserved05: int = 0
    reserved06: int = 0

    DATA_TYPE = FRAME_END_1100


@dataclass(frozen=True)
class IdcTrailer:
    """§27: no data."""
    DATA_TYPE = IDC_TRAILER_6120


def _decode_trailer(body, header=None) -> IdcTrailer:
    return IdcTrailer()


def _encode_trailer(_record) -> bytes:
    return b''


LAYOUT_1100 = FixedLayout(FRAME_END_1100, 'frame_end_separator', '>IIIQ6H',
                          FrameEndSeparator).register()
assert LAYOUT_1100.size == 32
registry.register(IDC_TRAILER_6120, 'idc_trailer', _decode_trailer, record=IdcTrailer,
                  encode=_encode_trailer, min_size=0)
