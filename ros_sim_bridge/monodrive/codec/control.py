"""The control channel's framing and JSON envelope (SUPPLEMENT §4.1, §4.2).

Every message both ways: ``u32 magic``, ``u32 total_length`` (the 8 header bytes included),
both big-endian, then UTF-8 JSON ``{"type", "reference", "message"}``.  Clients send
0x6d6f6e6f; replies carry 0x6f6e6f6d (clients up to May 2020) or 0x6d6f6e6f (later): both are
accepted.  Sans-IO: bytes in, :class:`ControlMessage` / CodecError out.
"""
from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from ros_sim_bridge.core.binary import TRUNCATED, CodecError
from ros_sim_bridge.core.framer import Frame, MagicFramer

CLIENT_MAGIC = 0x6D6F6E6F        # b'mono': client → simulator, and replies of newer builds
LEGACY_REPLY_MAGIC = 0x6F6E6F6D  # b'onom': replies as clients up to May 2020 expect them
HEADER = struct.Struct('>II')    # magic, total length including these 8 bytes
HEADER_SIZE = HEADER.size
DEFAULT_MAX_MESSAGE = 64 << 20   # cap on one control message (a GetMap reply can be MBs)
BAD_JSON = 'bad_json'            # CodecError kind: bytes that are not UTF-8 JSON
NON_STANDARD_JSON = 'non_standard_json'   # CodecError kind: NaN / Infinity / -Infinity
MESSAGE = 'monoDrive control'


def dumps(value: Any, what: str = MESSAGE) -> str:
    """Standard JSON text of ``value`` (RFC 8259): a NaN or infinite number, which Python's
    json would write as the non-standard ``NaN``/``Infinity``, is a CodecError naming where it
    is (kind ``non_standard_json``), never sent."""
    try:
        return json.dumps(value, separators=(',', ':'), allow_nan=False)
    except ValueError:
        where = _non_finite_path(value)
        raise CodecError(what, f'{where} is not a finite number (NaN and Infinity are not JSON)',
                         field=where, kind=NON_STANDARD_JSON) from None


def _non_finite_path(value: Any) -> str:
    """Where the first NaN/infinite float in ``value`` is, as 'message.a[2].b'."""
    stack = [(value, '')]
    while stack:
        v, p = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return p or 'value'
        if isinstance(v, dict):
            stack.extend((x, f'{p}.{k}' if p else str(k)) for k, x in reversed(list(v.items())))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f'{p}[{i}]') for i, x in reversed(list(enumerate(v))))
    return 'value'


def encode_frame(payload: Union[bytes, str, dict, list], magic: int = CLIENT_MAGIC) -> bytes:
    """One framed control message; ``payload`` is JSON text/bytes or a value to serialise
    (standard JSON only: CodecError ``non_standard_json`` for a NaN or infinite number)."""
    if isinstance(payload, (dict, list)):
        payload = dumps(payload)
    if isinstance(payload, str):
        payload = payload.encode('utf-8')
    return HEADER.pack(magic, HEADER_SIZE + len(payload)) + payload


def envelope(msg_type: str, reference: int, message: Any, *,
             success: Optional[bool] = None) -> dict:
    """The JSON object of one request (the C++ client adds ``success``; pass it to match)."""
    out = {'type': msg_type, 'reference': int(reference), 'message': message}
    if success is not None:
        out['success'] = bool(success)
    return out


def encode_request(msg_type: str, reference: int, message: Any, *,
                   magic: int = CLIENT_MAGIC) -> bytes:
    return encode_frame(envelope(msg_type, reference, message), magic)


def body_size(header: bytes) -> int:
    """Body length from a control header; CodecError when total_length < 8 (a false sync)."""
    _, total = HEADER.unpack(header)
    if total < HEADER_SIZE:
        raise CodecError(MESSAGE, f'total_length {total} is below the 8-byte header',
                         field='total_length', offset=4)
    return total - HEADER_SIZE


class ControlFramer(MagicFramer):
    """Stream framer for the control channel; bodies above ``max_message`` are refused and
    the stream resynchronised on the next magic word (nothing that large is buffered)."""

    def __init__(self, max_message: int = DEFAULT_MAX_MESSAGE,
                 magics: tuple[int, ...] = (CLIENT_MAGIC, LEGACY_REPLY_MAGIC)):
        super().__init__(MESSAGE, [struct.pack('>I', m) for m in magics], HEADER_SIZE,
                         body_size, max_message)


def json_float(value: Union[int, float]) -> float:
    """A JSON number as a float: an integer beyond float range is ±inf (``float()`` and
    ``math.isfinite`` would raise OverflowError on it)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _parse_int(text: str) -> Union[int, float]:
    """json's integer hook: an integer beyond float range (or over Python's 4,300-digit
    int-string limit) is ±inf, refused wherever a finite value is required."""
    if len(text) > 300:                 # float() reads any length; int() raises past 4,300
        f = float(text)
        if math.isinf(f):
            return f
    return int(text)


# a JSON escape of a backslash, a surrogate pair, or a lone surrogate (in that order, so an
# escaped backslash before 'ud800' is not read as an escape)
_ESCAPES = re.compile(r'\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}'
                      r'|\\u[dD][89a-fA-F][0-9a-fA-F]{2}')
_LONE = re.compile(r'\\u[dD][89a-fA-F]')
_SURROGATE = re.compile('[\ud800-\udfff]')


def _replace_lone(text: str) -> str:
    """JSON text with each lone-surrogate escape (``\\ud800``, legal JSON, not encodable as
    UTF-8) replaced by U+FFFD; surrogate pairs are kept."""
    if not _LONE.search(text):
        return text
    return _ESCAPES.sub(lambda m: '\\ufffd' if len(m.group()) == 6 else m.group(), text)


def utf8_text(text: str) -> str:
    """``text`` with any lone surrogate replaced by U+FFFD (encodable for a ROS string)."""
    return _SURROGATE.sub('\ufffd', text)


def standard_json(value: Any) -> str:
    """JSON text of a parsed value for a ROS string: a non-finite number becomes ``null``."""
    try:
        return json.dumps(value, separators=(',', ':'), allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), separators=(',', ':'))


def _finite(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def parse_json(data: Union[bytes, bytearray, memoryview, str], what: str = MESSAGE) -> Any:
    """UTF-8 JSON, tolerant of the single-quoted JSON some simulator builds emit (the public
    client's remedy: ``'`` → ``"``, SUPPLEMENT §4.4).  CodecError(kind='bad_json') names the
    byte offset of invalid UTF-8, or the line and column of the JSON error.  Numbers and text
    follow one rule: an integer beyond float range (or over 4,300 digits) and a float beyond it
    (``1e400``) are ±inf, refused wherever a finite value is required; a lone surrogate escape
    in a string is replaced by U+FFFD (every string is UTF-8 encodable)."""
    if not isinstance(data, str):
        try:
            data = bytes(data).decode('utf-8')
        except UnicodeDecodeError as exc:
            raise CodecError(what, f'invalid UTF-8 ({exc.reason}) at byte {exc.start}',
                             offset=exc.start, kind=BAD_JSON) from None
    text = _replace_lone(data.rstrip('\0 \r\n\t'))  # some builds NUL-terminate the string
    try:
        try:
            return json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int)
        except json.JSONDecodeError as exc:
            first = exc
        if "'" in text:
            try:
                return json.loads(text.replace("'", '"'), parse_constant=_refuse_constant,
                                  parse_int=_parse_int)
            except json.JSONDecodeError:
                pass
    except RecursionError:              # arrays/objects nested deeper than Python recurses
        raise CodecError(what, 'invalid JSON: nested too deeply', kind=BAD_JSON) from None
    except _NonStandard as exc:
        pos = text.find(exc.name)
        line = text.count('\n', 0, max(pos, 0)) + 1
        raise CodecError(what, f'non-standard JSON constant {exc.name} at line {line} (NaN and '
                         'Infinity are not JSON; refused)', offset=max(pos, 0),
                         kind=NON_STANDARD_JSON) from None
    raise CodecError(what, f'invalid JSON: {first.msg} at line {first.lineno} column '
                     f'{first.colno}', offset=first.pos, kind=BAD_JSON)


class _NonStandard(Exception):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


def _refuse_constant(name: str):
    """json's hook for NaN, Infinity, -Infinity (which Python accepts and RFC 8259 does not)."""
    raise _NonStandard(name)


_REFERENCE = re.compile(r'-?[0-9]{1,20}')   # ASCII digits only ('²'.isdigit() is true)


@dataclass
class ControlMessage:
    """One message of the control channel (a reply, or an unsolicited message)."""
    type: str
    reference: Optional[int]
    success: bool
    message: Any
    magic: int = CLIENT_MAGIC
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        """``message`` as text: a string as is, anything else as compact JSON."""
        if isinstance(self.message, str):
            return self.message
        return standard_json(self.message)


def decode_message(body: Union[bytes, bytearray, memoryview], magic: int = CLIENT_MAGIC
                   ) -> ControlMessage:
    """The envelope of one control message body (SUPPLEMENT §4.2): ``type`` (string,
    required), ``reference`` (integer, optional), ``success`` (bool, default true),
    ``message`` (string or JSON value)."""
    value = parse_json(body)
    if not isinstance(value, dict):
        raise CodecError(MESSAGE, f'expected a JSON object, got {type(value).__name__}',
                         kind=BAD_JSON)
    msg_type = value.get('type')
    if not isinstance(msg_type, str) or not msg_type:
        raise CodecError(MESSAGE, f'missing or non-string type ({msg_type!r})', field='type')
    reference = value.get('reference')
    if isinstance(reference, bool) or not isinstance(reference, (int, type(None))):
        if isinstance(reference, float) and reference.is_integer():
            reference = int(reference)
        elif isinstance(reference, str) and _REFERENCE.fullmatch(reference.strip()):
            reference = int(reference)
        else:
            raise CodecError(MESSAGE, f'reference {reference!r:.40} is not an integer (1-20 ASCII digits)',
                             field='reference')
    success = value.get('success', True)
    if success is None:
        success = True
    if not isinstance(success, bool):
        if isinstance(success, (int, float)):
            success = bool(success)
        elif isinstance(success, str) and success.lower() in ('true', 'false'):
            success = success.lower() == 'true'
        else:
            raise CodecError(MESSAGE, f'success {success!r} is not a boolean', field='success')
    return ControlMessage(msg_type, reference, success, value.get('message'), magic, value)


def peek_envelope(body: Union[bytes, bytearray, memoryview]) -> tuple[Optional[str],
                                                                     Optional[int]]:
    """(type, reference) of a body that is JSON but for NaN/Infinity constants, read leniently
    only to tell which request a refused reply answers; (None, None) when not readable."""
    try:
        value = json.loads(_replace_lone(bytes(body).decode('utf-8').rstrip('\0 \r\n\t')),
                           parse_int=_parse_int)
    except (ValueError, RecursionError):
        return None, None
    if not isinstance(value, dict):
        return None, None
    msg_type, ref = value.get('type'), value.get('reference')
    return (msg_type if isinstance(msg_type, str) else None,
            ref if isinstance(ref, int) and not isinstance(ref, bool) else None)


def decode_frame(frame: Frame) -> ControlMessage:
    """A framed body → ControlMessage, remembering which magic it came with."""
    if len(frame.header) < HEADER_SIZE:
        raise CodecError(MESSAGE, 'header truncated', kind=TRUNCATED)
    magic, _ = HEADER.unpack(frame.header[:HEADER_SIZE])
    return decode_message(frame.body, magic)


__all__ = ['CLIENT_MAGIC', 'LEGACY_REPLY_MAGIC', 'HEADER_SIZE', 'DEFAULT_MAX_MESSAGE',
           'BAD_JSON', 'NON_STANDARD_JSON', 'dumps', 'encode_frame', 'envelope', 'encode_request', 'ControlFramer',
           'parse_json', 'ControlMessage', 'decode_message', 'peek_envelope', 'decode_frame']
