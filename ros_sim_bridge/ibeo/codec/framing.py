"""Framing an Ibeo byte stream (TCP or a raw ``.idc``) into decoded messages (spec §2.4,
SUPPLEMENT §3.3).

:func:`make_framer` gives a :class:`~ros_sim_bridge.core.framer.MagicFramer` that

* decodes each 24-byte data header once (``frame.parsed`` is the :class:`~.header.IbeoHeader`)
  and refuses implausible ones (:func:`check_plausible`: a data type outside the Ibeo range, a
  size no layout of a registered type can have, a body above ``max_body``), so that a magic
  word inside a payload does not derail the stream;
* decodes each body of a registered type once (``frame.record``, see :func:`decode_body`); a
  body that fails to decode is a ``Rejected`` event: the message is skipped whole, or, when a
  plausible header starts inside it (a false sync), the magic search resumes at the byte after
  that message's magic word;
* gives up a message whose declared body holds a plausible header of a message running past
  the body's end (a message cut short by its sender) when no plausible header stands at that
  end, resuming the same way, so the complete messages inside that window are not lost (issue
  #10, defect 5); a complete message followed by a plausible header is framed whatever its
  body holds (a magic word in LUX contour bytes, issue #26);
* skips a well-framed message above ``max_body`` (e.g. a legal 0x2280 of 65,535 objects, about
  11 MB) by its declared size: one OVERSIZED event naming its type, size and the limit.
"""
from __future__ import annotations

from functools import partial
from typing import Callable, Optional

from ros_sim_bridge.core.binary import BAD_VALUE, CodecError
from ros_sim_bridge.core.framer import Frame, MagicFramer, Rejected
from . import registry
from .header import (DEFAULT_MAX_BODY, HEADER_SIZE, MAGIC_BYTES, PLAUSIBLE_TYPES, IbeoHeader,
                     decode_header)

NAME = 'ibeo_header'
#: the ECU scan data types (0x2205, 0x2204: :mod:`.scan_ecu`)
ECU_SCANS = (0x2205, 0x2204)


def check_plausible(header: IbeoHeader, max_body: Optional[int] = None) -> None:
    """CodecError(BAD_VALUE) for a header no real peer sends (a false sync on payload bytes).

    Checks the data type range and, for registered types, the type's size limits.  Unknown
    types inside the range pass: the caller skips them by size (the framer refuses bodies
    above its ``max_body`` as OVERSIZED), and so does a size above ``max_body`` (when given)
    whatever the type's bound: the framer's OVERSIZED, counted as such.
    """
    error = implausible(header.data_type, header.size, max_body)
    if error is not None:
        raise error


def implausible(data_type: int, size: int, max_body: Optional[int] = None
                ) -> Optional[CodecError]:
    """What :func:`check_plausible` raises for a header of ``data_type`` and body ``size``;
    None when it passes (nothing made: the ``.idc`` index asks this of every message)."""
    if data_type not in PLAUSIBLE_TYPES:
        return CodecError(NAME, f'data type 0x{data_type:04X} outside the Ibeo range',
                          field='data_type', offset=14, kind=BAD_VALUE)
    limits = registry.size_limits(data_type)
    if limits is not None and (max_body is None or size <= max_body):
        low, high = limits
        if size < low or (high is not None and size > high):
            return CodecError(NAME, f'size {size} impossible for data type '
                              f'0x{data_type:04X} (allowed {low}..{high})',
                              field='size', offset=8, kind=BAD_VALUE)
    return None


def plausible_header(data, offset: int = 0, max_body: int = DEFAULT_MAX_BODY
                     ) -> Optional[IbeoHeader]:
    """The header at ``offset`` of ``data`` when it could start a real message (magic word,
    :func:`check_plausible`, body within ``max_body``), else None: the test the live framer's
    window search applies to a magic word inside a body, for the ``.idc`` reader too."""
    try:
        header = decode_header(data, offset)
        check_plausible(header)
    except CodecError:
        return None
    return header if header.size <= max_body else None


#: the scan decoders, imported on first use (kept here: an import statement costs 1 µs a
#: message)
_decode_scan_wire: Optional[Callable] = None
_decode_scan_into: Optional[Callable] = None


def decode_body(frame: Frame, points_out: Optional[Callable] = None):
    """The record of a frame's body: ``(LuxScan, wire points)`` of a 0x2202
    (:func:`~.scan.decode_scan_wire`, zero-copy), the registry's record of any other registered
    type, None for an unregistered type (skipped by size).  CodecError when it fails.
    ``points_out(n)``: where a 0x2205 / 0x2204 scan in vehicle coordinates puts its n points
    (:func:`~.scan_ecu.decode_scan_into`)."""
    global _decode_scan_wire, _decode_scan_into
    header = frame.parsed
    if header.data_type == registry.SCAN:
        if _decode_scan_wire is None:           # imported by the first LUX scan
            from .scan import decode_scan_wire as _decode_scan_wire
        return _decode_scan_wire(frame.body, header)
    if points_out is not None and header.data_type in ECU_SCANS:
        if _decode_scan_into is None:           # imported by the first ECU scan
            from .scan_ecu import decode_scan_into as _decode_scan_into
        return _decode_scan_into(header.data_type, frame.body, points_out)
    if registry.size_limits(header.data_type) is None:
        return None
    return registry.decode_message(header.data_type, frame.body, header)


def make_framer(max_body: int = DEFAULT_MAX_BODY, *, name: str = 'ibeo',
                plausibility: bool = True, decode: bool = True,
                points_out: Optional[Callable] = None) -> MagicFramer:
    """A MagicFramer for Ibeo streams: frames carry ``frame.parsed`` (IbeoHeader) and, with
    ``decode``, ``frame.record`` (:func:`decode_body`).  Implausible headers resynchronise at
    the next byte (:func:`check_plausible`); ``plausibility=False`` trusts every magic word
    (and turns the window search off).  A body that lies whole in one read is a view of it
    (the framer's ``views``: the decoders take any buffer), not a copy.  ``points_out``: see
    :func:`body_decoder`."""
    def body_size(raw: bytes) -> IbeoHeader:
        header = decode_header(raw)
        if plausibility:
            check_plausible(header, max_body)
        return header

    return MagicFramer(name, MAGIC_BYTES, HEADER_SIZE, body_size, max_body,
                       check_body=body_decoder(points_out) if decode else None,
                       search_window=plausibility, skip_oversized=True, describe=describe,
                       views=True)


def body_decoder(points_out: Optional[Callable] = None) -> Callable:
    """The framer's ``check_body``: :func:`decode_body`, with ``points_out(n)`` (e.g. inside
    the message that publishes them) for the points of ECU scans in vehicle coordinates."""
    return decode_body if points_out is None else partial(decode_body, points_out=points_out)


def describe(header: IbeoHeader) -> str:
    """'a 0x2280 (ecu_objects_2280)': a message named in the framer's error texts."""
    name = registry.DATA_TYPE_NAMES.get(header.data_type, 'unknown type')
    return f'a 0x{header.data_type:04X} ({name})'


def split_messages(data: bytes, max_body: int = DEFAULT_MAX_BODY) -> tuple[list, list]:
    """Frames and errors (Rejected events included) of a complete in-memory byte stream."""
    framer = make_framer(max_body)
    events = framer.feed(bytes(data)) + framer.finish()
    return ([e for e in events if isinstance(e, Frame)],
            [e for e in events if not isinstance(e, Frame)])


__all__ = ['PLAUSIBLE_TYPES', 'check_plausible', 'plausible_header', 'decode_body',
           'body_decoder', 'describe',
           'make_framer', 'split_messages', 'Frame', 'Rejected']
