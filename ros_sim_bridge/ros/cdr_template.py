"""CDR message templates: a message serialised once, its numeric fields left as named slots that
are filled per message from numpy arrays; every other byte (strings, constants, sequence
lengths, padding) is copied as it is.

For writers of many messages whose structure rarely changes (a bag of a recording: the same
actors frame after frame, only poses and stamps moving): building and serialising rclpy
messages field by field costs microseconds per field; a template costs one ``bytearray`` copy
plus one numpy assignment per slot name, whatever the number of elements.

The message is described by a value tree: a ``dict`` per message (field name → value; a field
left out takes the rclpy class default, e.g. ``Quaternion.w = 1``), lists for sequences, plain
Python values, an rclpy message instance for a constant part, or :class:`Slot` for a field to
fill later.  A slot may sit on a primitive field, a fixed array of primitives, or a nested
message whose leaves are primitives of one size (``Pose``: 7 float64, ``Time``: int32 +
uint32); the same name on several fields (one per actor) fills them all from the rows of one
array.  Field types and defaults come from each type's description (the JSON rosidl installs
beside its ``.msg``; the rclpy class where there is none), so the bytes are those of
``rclpy.serialization.serialize_message`` for the same message (XCDR1 little endian with the
4-byte encapsulation header, 8-byte primitives aligned on 8 from the payload start; padding is
zero here).

Usage::

    tmpl = build('tf2_msgs/msg/TFMessage', {'transforms': [
        {'header': {'stamp': Slot('stamp'), 'frame_id': 'map'}, 'child_frame_id': name,
         'transform': Slot('transform')} for name in names]})
    cdr = tmpl.fill(stamp=(sec, nanosec), transform=xyz_xyzw)    # (n, 7) rows
"""
from __future__ import annotations

import ctypes
import importlib
import json
import math
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Callable, Optional

import numpy as np
from rosidl_parser.definition import (AbstractNestedType, AbstractString, AbstractWString,
                                      Array, BasicType, BoundedSequence, BoundedString,
                                      NamespacedType, UnboundedSequence, UnboundedString)

from ros_sim_bridge.core.native import address as _address, new_bytes
from ros_sim_bridge.ros import cdr_native
from ros_sim_bridge.ros.ament import package_share

ENCAPSULATION = b'\x00\x01\x00\x00'          # CDR, little endian
#: whether :func:`messages_with_elements` fills elements with the compiled filler
#: (:mod:`.cdr_native`) or with numpy index arrays (the same bytes; tests use both)
NATIVE = cdr_native.AVAILABLE

# rosidl basic type → (struct code, size, numpy dtype)
_BASIC = {
    'boolean': ('?', 1, 'u1'), 'octet': ('B', 1, 'u1'), 'char': ('B', 1, 'u1'),
    'uint8': ('B', 1, 'u1'), 'int8': ('b', 1, 'i1'),
    'uint16': ('H', 2, '<u2'), 'int16': ('h', 2, '<i2'),
    'uint32': ('I', 4, '<u4'), 'int32': ('i', 4, '<i4'), 'float': ('f', 4, '<f4'),
    'uint64': ('Q', 8, '<u8'), 'int64': ('q', 8, '<i8'), 'double': ('d', 8, '<f8'),
}


@dataclass(frozen=True)
class Slot:
    """A field filled per message from the array given to :meth:`CdrTemplate.fill` as
    ``name``."""
    name: str


@dataclass(frozen=True)
class TextSlot(Slot):
    """A string field of ``length`` bytes (UTF-8, without the terminating NUL) filled per
    message: its count and NUL are in the template, its bytes a slot of ``length`` uint8
    fields (values: (n, length) bytes, e.g. :func:`ragged` over the texts' bytes joined)."""
    length: int = 0


@lru_cache(maxsize=None)
def message_class(namespaced: str):
    """The rclpy class of ``pkg/msg/Name``."""
    pkg, sub, name = namespaced.split('/')
    return getattr(importlib.import_module(f'{pkg}.{sub}'), name)


#: type ids of the type description (type_description_interfaces/FieldType: a basic type's
#: id, + 48 for a fixed array of it, + 96 for a bounded sequence, + 144 for an unbounded one)
_TYPE_IDS = {2: 'int8', 3: 'uint8', 4: 'int16', 5: 'uint16', 6: 'int32', 7: 'uint32',
             8: 'int64', 9: 'uint64', 10: 'float', 11: 'double', 13: 'char', 15: 'boolean',
             16: 'octet'}
_NESTED, _STRING, _BOUNDED_STRING = 1, 17, 21
#: the one field (uint8) of a message without fields, in its description and in its CDR
_EMPTY = 'structure_needs_at_least_one_member'


def _described_type(ft: dict):
    """The rosidl type of a type description's field type, and the value of a default
    ``text`` ('' for none) of a field of it (KeyError / ValueError for those not supported:
    wide and fixed strings, default arrays and sequences, strings)."""
    kind, base = divmod(ft['type_id'], 48)
    if base == _NESTED:
        *namespaces, name = ft['nested_type_name'].split('/')
        t = NamespacedType(namespaces, name)
    elif base == _STRING:
        t = UnboundedString()
    elif base == _BOUNDED_STRING:
        t = BoundedString(ft['string_capacity'])
    else:
        t = BasicType(_TYPE_IDS[base])
    if kind == 1:
        return Array(t, ft['capacity'])
    if kind == 2:
        return BoundedSequence(t, ft['capacity'])
    if kind == 3:
        return UnboundedSequence(t)
    if kind:
        raise KeyError(ft['type_id'])
    return t


def _default(t, text: str):
    """A field's default value from its type description's text ('' : zero, empty)."""
    if isinstance(t, Array):
        if text:
            raise ValueError(f'default array {text!r}')
        if isinstance(t.value_type, BasicType):
            zero = 0.0 if t.value_type.typename in ('float', 'double') else 0
            return bytes(t.size) if t.value_type.typename == 'octet' else [zero] * t.size
        return [_default(t.value_type, '') for _ in range(t.size)]
    if isinstance(t, AbstractNestedType):
        if text:
            raise ValueError(f'default sequence {text!r}')
        return []
    if isinstance(t, NamespacedType):
        return None                                   # the message's own defaults
    if isinstance(t, AbstractString):
        if text:
            raise ValueError(f'default string {text!r}')
        return ''
    name = t.typename
    if name == 'boolean':
        return {'': False, 'False': False, 'True': True}[text]
    if name in ('float', 'double'):
        return float(text or 0)
    return int(text or 0)


@lru_cache(maxsize=None)
def _described_fields(type_name: str) -> Optional[tuple]:
    """(name, rosidl type, default) of each field of ``pkg/msg/Name`` from its type
    description (``msg/<Name>.json`` in the package's share folder, :mod:`.ament`, rosidl's
    REP-2011 type description): no rclpy class imported.  None when there is none, or it
    holds what :func:`_described_type` does not read."""
    pkg, sub, name = type_name.split('/')
    share = package_share(pkg)
    if share is None:
        return None
    try:
        with open(os.path.join(share, sub, f'{name}.json'), 'rb') as f:
            described = json.load(f)['type_description_msg']['type_description']
        if described['type_name'] != type_name:
            return None
        out = []
        for field in described['fields']:
            t = _described_type(field['type'])
            out.append((field['name'], t, _default(t, field['default_value'])))
        return tuple(out)
    except (OSError, KeyError, ValueError, TypeError):
        return None


@lru_cache(maxsize=None)
def _fields(type_name: str) -> tuple:
    """(name, rosidl type, default value) of each field of ``pkg/msg/Name``: from its type
    description (:func:`_described_fields`: the message packages need not be imported, 30 ms
    of a command's start-up), else from its rclpy class (types, default instance); a nested
    message's default is None (its own defaults)."""
    described = _described_fields(type_name)
    if described is not None:
        return described
    cls = message_class(type_name)
    default = cls()
    return tuple((name, t, None if isinstance(t, NamespacedType) else getattr(default, name))
                 for name, t in zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES))


def field_types(type_name: str) -> dict:
    """Field name → rosidl type name of each field of ``pkg/msg/Name`` of a basic type (e.g.
    'float', 'uint64', 'boolean'), None for the others (messages, strings, arrays): what the
    class's ``get_fields_and_field_types()`` says of them, without importing it."""
    return {name: t.typename if isinstance(t, BasicType) else None
            for name, t, _ in _fields(type_name)}


def _name_of(t: NamespacedType) -> str:
    return '/'.join(t.namespaces) + '/' + t.name


def _leaves(t) -> list[str]:
    """The basic type names of every primitive inside ``t`` (for a slot), in order."""
    if isinstance(t, BasicType):
        return [t.typename]
    if isinstance(t, Array):
        return _leaves(t.value_type) * t.size
    if isinstance(t, NamespacedType):
        return list(_message_leaves(_name_of(t)))
    raise TypeError(f'a slot holds primitives, fixed arrays or messages of them, not {t}')


@lru_cache(maxsize=None)
def _message_leaves(type_name: str) -> tuple:
    return tuple(leaf for _, ft, _ in _fields(type_name) for leaf in _leaves(ft))


class CdrTemplate:
    """Serialised bytes with slots: :meth:`fill` returns a new buffer per message.  A template
    built with ``phase`` (:func:`build`) is a sequence element: :meth:`fill` returns the
    element's bytes only, for appending at a payload offset ≡ ``phase`` (mod 8)."""

    def __init__(self, type_name: str, data: bytes, slots: dict, phase: Optional[int] = None):
        self.type_name = type_name
        self.data = bytes(data)
        # 4 bytes ahead of the encapsulation header put the payload on an 8-byte boundary of
        # numpy's (aligned) allocation: aligned views are several times faster to index
        self._lead = np.frombuffer(bytes(4) + self.data, np.uint8).copy()
        #: name → (dtype, (n, k) element indices into a view of that dtype from the payload)
        self.slots = slots
        self._views = sorted({dtype for dtype, _ in slots.values()}, key=str)
        self._ends = {d: 8 + (len(self._lead) - 8) // d.itemsize * d.itemsize
                      for d in self._views}
        #: where :meth:`fill`'s result starts: the encapsulation header, or an element's bytes
        self._start = 4 if phase is None else 8 + phase
        # fill's plan: per dtype its view's end and its slots, a slot of one row of adjacent
        # elements as a slice (several times faster to assign than the index array)
        plan: dict = {d: [] for d in self._views}
        for name, (dtype, index) in slots.items():
            flat = index.reshape(-1)
            first = int(flat[0]) if flat.size else 0
            adjacent = flat.size > 0 and index.shape[0] == 1 and bool(
                np.array_equal(flat, np.arange(first, first + flat.size)))
            plan[dtype].append((name, slice(first, first + flat.size) if adjacent else index))
        #: per dtype: its view's end and its slots (name, slice or index array)
        self.plan = [(d, self._ends[d], plan[d]) for d in self._views]
        #: a sequence element's phase and bytes (the message's bytes otherwise)
        self.phase = phase or 0
        self.element = self._lead[self._start:]

    def fill(self, **values) -> memoryview:
        """The message (a memoryview of its bytes: ``bytes()`` it to keep) with each slot
        ``name`` set from ``values[name]``: an array of shape (n, k) for n fields of k
        primitives, or anything broadcasting to it (one row for all).  Every slot must be
        given."""
        out = self._lead.copy()
        for dtype, end, slots in self.plan:
            view = out[8:end].view(dtype)
            for name, index in slots:
                view[index] = values[name]
        return memoryview(out)[self._start:]

    def fill_rows(self, count: int, **values) -> np.ndarray:
        """``count`` messages at once (one allocation, one assignment per slot for all:
        ``values[name]`` of shape (count, n, k), or broadcasting to it) as the rows of a
        (count, len(self)) uint8 array (a view: row i is message i's bytes), for writers of
        many messages at once."""
        out, size = self._fill(count, values)
        return out[:, self._start:size]

    def _fill(self, count: int, values: dict):
        size = len(self._lead)
        stride = -(-size // 8) * 8                  # each payload 8-aligned
        out = np.empty((count, stride), np.uint8)
        out[:, :size] = self._lead
        out[:, size:] = 0
        views = {}
        for dtype in self._views:                   # (count, elements) from each payload
            n = (stride - 8) // dtype.itemsize
            views[dtype] = out[:, 8:8 + n * dtype.itemsize].view(dtype)
        for name, (dtype, index) in self.slots.items():
            views[dtype][:, index] = values[name]
        return out, size

    def __len__(self) -> int:
        return len(self.data)

    def packer(self) -> 'SlotPacker':
        """This template's :class:`SlotPacker` (made on first use)."""
        packer = self.__dict__.get('_packer')
        if packer is None:
            packer = self._packer = SlotPacker(self)
        return packer


#: struct codes of the slot dtypes (standard sizes, little-endian)
_STRUCT_CODES = {('i', 1): 'b', ('i', 2): 'h', ('i', 4): 'i', ('i', 8): 'q', ('u', 1): 'B',
                 ('u', 2): 'H', ('u', 4): 'I', ('u', 8): 'Q', ('f', 4): 'f', ('f', 8): 'd',
                 ('b', 1): '?'}


class SlotPacker:
    """:meth:`CdrTemplate.fill` by ``struct`` for a message whose slots hold a few numbers
    (a scan's info, a header): one ``pack_into`` of the span from the first slot element to
    the last into a copy of the template's bytes (the template's own bytes between them
    packed as they are), the same bytes as :meth:`CdrTemplate.fill` gives (several times
    faster than numpy views there).  ``names``: only these slots (the others keep the
    template's bytes, for the caller to fill)."""

    def __init__(self, template: CdrTemplate, names: Optional[tuple] = None):
        self.data = template.data
        slots = {name: template.slots[name] for name in (names or template.slots)}
        self._sizes = tuple((name, index.size) for name, (_, index) in slots.items())
        # a fill's values are flattened slot by slot (_sizes order), the gaps' bytes after
        flat_at, k = {}, 0
        for name, size in self._sizes:
            for pos in range(size):
                flat_at[name, pos], k = k, k + 1
        elements = sorted((4 + i * dtype.itemsize, _STRUCT_CODES[dtype.kind, dtype.itemsize],
                           dtype.itemsize, flat_at[name, pos])
                          for name, (dtype, index) in slots.items()
                          for pos, i in enumerate(index.reshape(-1).tolist()))
        self._start = at = elements[0][0] if elements else 0
        codes, order, gaps = ['<'], [], []
        for offset, code, size, source in elements:
            if offset > at:                      # the template's bytes, packed as they are
                codes.append(f'{offset - at}s')
                order.append(k + len(gaps))
                gaps.append(bytes(self.data[at:offset]))
            codes.append(code)
            order.append(source)
            at = offset + size
        self._gaps = gaps
        self._struct = struct.Struct(''.join(codes))
        self._order = (itemgetter(*order) if len(order) > 1 else
                       (lambda flat, i=order[0]: (flat[i],)) if order else None)

    def fill(self, **values) -> bytearray:
        """The message with each slot ``name`` set from ``values[name]``: a sequence of its
        elements' values, rows first, or of one row's for all (every slot packed given)."""
        flat: list = []
        for name, size in self._sizes:
            given = values[name]
            if len(given) != size:
                if not given or size % len(given):
                    raise ValueError(f'slot {name!r} holds {size} values, not {len(given)}')
                given = list(given) * (size // len(given))
            flat += given
        out = bytearray(self.data)
        if self._order is not None:
            flat += self._gaps
            self._struct.pack_into(out, self._start, *self._order(flat))
        return out


class _Writer:
    def __init__(self):
        self.buf = bytearray(ENCAPSULATION)
        self.slots: dict[str, list] = {}          # name → [dtype, k, [start index, …]]

    def align(self, n: int) -> None:
        pad = -(len(self.buf) - 4) % n
        if pad:
            self.buf += bytes(pad)

    def basic(self, typename: str, value) -> None:
        code, size, _ = _BASIC[typename]
        if isinstance(value, bytes):               # rclpy: a byte field holds 1-byte bytes
            value = value[0]
        self.align(size)
        self.buf += struct.pack('<' + code, value)

    def basics(self, typename: str, values) -> None:
        """A run of primitives (fixed array or sequence body)."""
        code, size, dtype = _BASIC[typename]
        if typename == 'octet' and not isinstance(values, (bytes, bytearray)):
            values = b''.join(values)              # rclpy: byte[] is a list of 1-byte bytes
        values = np.frombuffer(values, 'u1') if isinstance(values, (bytes, bytearray)) \
            else np.asarray(values, dtype)
        if len(values):
            self.align(size)
            self.buf += values.tobytes()

    def string(self, text) -> None:
        raw = (text if isinstance(text, bytes) else str(text).encode()) + b'\0'
        self.basic('uint32', len(raw))
        self.buf += raw

    def slot(self, t, slot: Slot) -> None:
        leaves = _leaves(t)
        sizes = {_BASIC[leaf][1] for leaf in leaves}
        if len(sizes) != 1:
            raise TypeError(f'slot {slot.name}: {t} mixes primitive sizes {sorted(sizes)}')
        size = sizes.pop()
        dtype = np.dtype(_BASIC[leaves[0]][2])
        self.align(size)
        entry = self.slots.setdefault(slot.name, [dtype, len(leaves), []])
        if entry[0].itemsize != size or entry[1] != len(leaves):
            raise TypeError(f'slot {slot.name}: used on fields of different shapes')
        entry[2].append((len(self.buf) - 4) // size)
        self.buf += bytes(size * len(leaves))

    def text_slot(self, t, slot: TextSlot) -> None:
        if not isinstance(t, AbstractString) or isinstance(t, AbstractWString):
            raise TypeError(f'text slot {slot.name} on {t}, not a string')
        self.basic('uint32', slot.length + 1)
        octet = BasicType('uint8')
        for _ in range(slot.length):
            self.slot(octet, slot)
        self.buf += b'\0'

    def field(self, t, value) -> None:
        if isinstance(value, TextSlot):
            self.text_slot(t, value)
        elif isinstance(value, Slot):
            self.slot(t, value)
        elif isinstance(t, BasicType):
            self.basic(t.typename, value)
        elif isinstance(t, AbstractString):
            self.string(value)
        elif isinstance(t, NamespacedType):
            self.message(_name_of(t), value)
        elif isinstance(t, AbstractWString):
            raise TypeError('wstring fields are not supported')
        elif isinstance(t, AbstractNestedType):
            if not isinstance(t, Array):
                if isinstance(t, BoundedSequence) and len(value) > t.maximum_size:
                    raise ValueError(f'{len(value)} elements for a sequence of at most '
                                     f'{t.maximum_size}')
                self.basic('uint32', len(value))
            elif len(value) != t.size:
                raise ValueError(f'{len(value)} elements for an array of {t.size}')
            vt = t.value_type
            if isinstance(vt, BasicType) and not any(isinstance(v, Slot) for v in value):
                self.basics(vt.typename, value)
            else:
                for v in value:
                    self.field(vt, v)
        else:
            raise TypeError(f'unsupported field type {t}')

    def message(self, type_name: str, value) -> None:
        """A message ``value``: a dict (fields left out: their defaults), None (every field
        its default) or an rclpy message."""
        fields = _fields(type_name)
        if isinstance(value, dict):
            for name, t, default in fields:
                self.field(t, value[name] if name in value else default)
            unknown = set(value) - {name for name, _, _ in fields}
            if unknown:
                raise KeyError(f'{type_name} has no field {sorted(unknown)}')
        elif value is None:
            for _, t, default in fields:
                self.field(t, default)
        else:                   # an empty message's one byte is not an rclpy attribute
            for name, t, default in fields:
                self.field(t, default if name == _EMPTY else getattr(value, name))


def build(type_name: str, value, *, phase: Optional[int] = None) -> CdrTemplate:
    """The template of a ``pkg/msg/Name`` message described by ``value`` (see the module);
    with ``phase`` (0..7) the template of one element of a sequence of such messages, placed
    at a payload offset ≡ ``phase`` (mod 8) (see :func:`messages_with_elements`)."""
    w = _Writer()
    w.buf += bytes(phase or 0)
    w.message(type_name, value)
    slots = {name: (dtype, np.add.outer(np.asarray(starts, np.intp), np.arange(k)))
             for name, (dtype, k, starts) in w.slots.items()}
    return CdrTemplate(type_name, w.buf, slots, phase)


class ElementTemplates:
    """Element templates of one message type, built on first use and kept by (shape key,
    phase); :meth:`at` gives the phase → template function :func:`messages_with_elements`
    takes (the same function for the same key).  The key must name everything the value tree
    bakes in (strings, inner sequence lengths); at ``max_templates`` the cache starts again
    (e.g. labels of ever new ids)."""

    def __init__(self, type_name: str, max_templates: int = 4096):
        self.type_name = type_name
        self._cache: dict = {}
        self._at: dict = {}
        self._max = max_templates

    def at(self, key, value):
        """``value``: the element's value tree (see the module), or a function returning it
        (called only when a template is built)."""
        template_at = self._at.get(key)
        if template_at is not None:
            return template_at

        def template_at(phase: int) -> CdrTemplate:
            tmpl = self._cache.get((key, phase))
            if tmpl is None:
                if len(self._cache) >= self._max:
                    self._cache.clear()
                    self._at.clear()
                tmpl = self._cache[(key, phase)] = build(
                    self.type_name, value() if callable(value) else value, phase=phase)
            return tmpl
        if len(self._at) >= self._max:
            self._at.clear()
        self._at[key] = template_at
        return template_at


def small_unique(values) -> tuple:
    """``np.unique(values, return_inverse=True)`` of integers ≥ 0 of a small range (shape
    numbers, lengths, classes) without sorting: a table over the range."""
    values = np.asarray(values).reshape(-1)
    if not len(values):
        return values[:0], np.zeros(0, np.intp)
    low, top = int(values.min()), int(values.max()) + 1
    if low == top - 1:                                 # one value
        return values[:1].copy(), np.zeros(len(values), np.intp)
    if top > 4 * len(values) + 4096:
        uniq, inverse = np.unique(values, return_inverse=True)
        return uniq, inverse.reshape(-1)
    if low >= 0 and values.dtype.kind in 'iu' and values.dtype != np.uint64:
        uniq = np.bincount(values).nonzero()[0]         # (fewer steps than the table)
        rank = np.empty(top, np.intp)                   # each value's place in uniq
        rank[uniq] = np.arange(len(uniq))
        return uniq.astype(values.dtype), rank.take(values)
    present = np.zeros(top, bool)
    present[values] = True
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present).astype(values.dtype), rank[values]


class Ragged:
    """A ``values`` entry of :func:`messages_with_elements` for a slot on a number of fields
    that varies by element (points of contours, of line strips): element ``row``'s m values
    are ``flat[starts[row]:starts[row] + m]`` (callable as ``(rows, m)`` → those rows)."""
    __slots__ = ('flat', 'starts')

    def __init__(self, flat: np.ndarray, starts: np.ndarray):
        self.flat = flat
        self.starts = np.asarray(starts, np.intp)

    def __call__(self, rows, m):
        return self.flat[self.starts[rows][:, None] + np.arange(m)]

    def gather(self, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The values of elements ``rows`` with ``counts`` fields each, one after another."""
        total = int(counts.sum())
        first = np.cumsum(counts) - counts
        if len(rows) and total == len(self.flat) and \
                np.array_equal(self.starts[rows], first):
            return self.flat                    # every row once, in order: no gather
        return self.flat[np.repeat(self.starts[rows] - first, counts) + np.arange(total)]


def ragged(flat: np.ndarray, starts: np.ndarray) -> Ragged:
    """:class:`Ragged` values: element ``row``'s m values ``flat[starts[row]:][:m]``."""
    return Ragged(flat, starts)


class Run(Sequence):
    """Elements of :func:`messages_with_elements` that share their ``values``: element e is
    the template function ``templates[shape[e]]`` filled from row ``rows[e]`` (the rows in
    order when None).  A sequence of the (template function, values, row) items it stands
    for; slicing gives a Run."""
    __slots__ = ('templates', 'shape', 'values', 'rows', 'ordered')

    def __init__(self, templates, shape, values: dict, rows=None):
        self.templates = list(templates)
        self.shape = np.asarray(shape, np.intp).reshape(-1)
        self.values = values
        self.ordered = rows is None
        self.rows = np.arange(len(self.shape)) if rows is None else \
            np.asarray(rows, np.intp).reshape(-1)

    def __len__(self) -> int:
        return len(self.shape)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Run(self.templates, self.shape[i], self.values, self.rows[i])
        return self.templates[self.shape[i]], self.values, int(self.rows[i])

    def __add__(self, other) -> list:
        """The items of both (a list: put Runs in a list to keep them Runs)."""
        return list(self) + list(other)

    def __radd__(self, other) -> list:
        return list(other) + list(self)


def _flat(elements):
    """The items and Runs of ``elements``, lists in it opened."""
    for item in elements:
        if isinstance(item, list):
            yield from _flat(item)
        else:
            yield item


def _runs(elements) -> tuple:
    """A message's elements (Runs and items) as Runs, and which of them are one item of row
    None (values not indexed)."""
    runs, singles, pending = [], [], []

    def flush():
        if pending:
            funcs: dict = {}
            shape = [funcs.setdefault(f, len(funcs)) for f, _, _ in pending]
            runs.append(Run(list(funcs), shape, pending[0][1], [r for _, _, r in pending]))
            pending.clear()
    for item in _flat(elements):
        if isinstance(item, Run):
            flush()
            if len(item):
                runs.append(item)
            continue
        f, values, row = item
        if row is None:
            flush()
            singles.append(len(runs))
            runs.append(Run([f], [0], values, [0]))
        else:
            if pending and pending[0][1] is not values:
                flush()
            pending.append(item)
    flush()
    return runs, singles


def messages_with_elements(heads, element_lists) -> list:
    """Messages whose last field is a sequence of messages: each a ``bytes`` built in place
    by the compiled filler, else memoryviews of one buffer.  ``heads[j]`` is message j with
    that sequence empty (its bytes end with the count 0); ``element_lists[j]`` its elements:
    :class:`Run` s (or lists of them), or items (a function phase → the element's
    :func:`build` template at that phase, ``values``, ``row``): the element's slot
    values are ``values[name]`` when ``row`` is None, else row ``row`` of ``values[name]``
    (an array of rows, or a :class:`Ragged` / function (rows, m) → those rows' values for a
    slot on m fields: e.g. m points of ragged contours).  Each element is placed after the
    previous one, its alignment from the template of its phase; the count is set.  For
    elements whose shape varies (strings, inner sequences): a template per shape and phase,
    cached by the caller.

    No loop over the elements in Python.  The compiled filler (:data:`NATIVE`, ``cdr_fill.c``)
    follows the elements' phases (payload offset mod 8: where the one before ended) and
    places in one loop, then copies every element's template bytes and slot values in
    another (two calls for all the messages; each template's slots as byte copies, kept per
    tuple of template functions), into the ``bytes`` each message is published as.  Without
    it: an element with an 8-byte field ends at a
    phase of its own whatever its start (checked; else the phases are followed one by one),
    so phases, sizes and offsets are array arithmetic (``np.cumsum``), the template bytes are
    joined in one pass and each slot of a Run is one fancy-index assignment for all its
    elements."""
    heads = [bytes(h) for h in heads]
    if any(len(h) < 8 for h in heads):
        raise ValueError('messages_with_elements: a head is the encapsulation and at least '
                         'the sequence count (8 bytes)')
    n_msg = len(heads)
    runs, singles, msg_of = [], set(), []
    for j, elements in enumerate(element_lists):
        r, s = _runs(elements)
        singles.update(len(runs) + k for k in s)
        runs += r
        msg_of += [j] * len(r)
    if NATIVE and runs:
        made = _native_messages(heads, runs, singles, msg_of)
        if made is not None:
            return made
    ids: dict = {}                                     # template function → its number
    fid = np.concatenate([np.array([ids.setdefault(f, len(ids)) for f in run.templates],
                                   np.intp)[run.shape] for run in runs]) \
        if runs else np.zeros(0, np.intp)
    funcs = list(ids)
    per_msg = np.bincount(np.repeat(np.array(msg_of, np.intp),
                                    [len(run) for run in runs]), minlength=n_msg) \
        if runs else np.zeros(n_msg, np.intp)
    first = np.cumsum(per_msg) - per_msg               # each message's first element
    head_end = np.array([len(h) - 4 for h in heads], np.intp)
    used = per_msg > 0
    phase = np.empty(len(fid), np.intp)
    if len(fid):
        end0 = np.array([len(f(0).element) & 7 for f in funcs], np.intp)
        phase[1:] = end0[fid[:-1]]
        phase[first[used]] = head_end[used] & 7
        keys, tid = small_unique(fid * 8 + phase)
        tmpls = [funcs[k >> 3](k & 7) for k in keys.tolist()]
        size = np.array([len(t.element) for t in tmpls], np.intp)[tid]
        if not np.array_equal((phase + size) & 7, end0[fid]):
            phase, tmpls, tid, size = _phases_in_turn(funcs, fid, first, per_msg, head_end)
    else:
        tmpls, tid, size = [], np.zeros(0, np.intp), np.zeros(0, np.intp)
    csum = np.cumsum(size) - size                      # exclusive
    ends = head_end.copy()
    if len(fid):
        ends[used] += np.add.reduceat(size, first[used])
    base = np.empty(n_msg, np.intp)                    # each payload's buffer offset
    at = 8
    for j in range(n_msg):
        base[j] = at
        at = -(-(at + int(ends[j]) + 4) // 8) * 8
    msg_index = np.repeat(np.arange(n_msg), per_msg)
    start = (base + head_end)[msg_index] + csum - csum[first[msg_index]] if len(fid) else csum
    origin = start - phase                             # each element template's 8-aligned 0
    # the bytes: heads (counts set), elements and padding joined, 4 bytes ahead so that the
    # payloads are 8-aligned in the buffer
    pool = [t.element.tobytes() for t in tmpls]
    order = tid.tolist()
    parts, pos = [], 0
    for j, h in enumerate(heads):
        head = bytearray(h)
        struct.pack_into('<I', head, len(head) - 4, int(per_msg[j]))
        parts += [bytes(int(base[j]) - 4 - pos), head]
        a, b = int(first[j]), int(first[j] + per_msg[j])
        if b - a == 1:
            parts.append(pool[order[a]])
        elif b > a:
            parts.extend(itemgetter(*order[a:b])(pool))
        pos = int(base[j] + ends[j])
    parts.append(bytes(at - pos))
    out = np.frombuffer(bytearray().join(parts), np.uint8)
    _fill_runs(out, runs, singles, tmpls, tid, origin)
    whole = memoryview(out)
    return [whole[int(b) - 4:int(b) + int(e)] for b, e in zip(base, ends)]


def _views(out: np.ndarray):
    """dtype → a view of that dtype from the buffer's start (made on first use)."""
    views: dict = {}

    def view_of(dtype):
        view = views.get(dtype)
        if view is None:
            view = views[dtype] = out[:len(out) // dtype.itemsize * dtype.itemsize].view(dtype)
        return view
    return view_of


def _fill_runs(out: np.ndarray, runs: list, singles: set, tmpls: list, tid: np.ndarray,
               origin: np.ndarray, only: Optional[Callable[[int], set]] = None) -> None:
    """Each Run's slots set in ``out`` (the elements' template bytes in place) by numpy;
    ``only`` (run number → slot names): those slots of each run that is no single, none of a
    run it gives none."""
    view_of = _views(out)
    g = 0
    for r, run in enumerate(runs):
        part = slice(g, g + len(run))
        g += len(run)
        if r in singles:
            _fill_single(view_of, tmpls[tid[g - 1]], int(origin[g - 1]), run.values)
            continue
        names = None if only is None else only(r)
        if names is None or names:
            _fill_run(view_of, tmpls, tid[part], origin[part], run, only=names)


def _int64(a: np.ndarray) -> np.ndarray:
    return a if a.dtype == np.int64 and a.flags.c_contiguous else \
        np.ascontiguousarray(a, np.int64)


class _Layout:
    """What the compiled filler keeps for the calls of one tuple of template functions:
    ``known``, the (function, phase) → template number table of :data:`.cdr_native.LAYOUT`,
    the templates' sizes and the templates made so far (replaced as one, never changed in
    place: a call holds the ones it started with), and their :class:`_FillPlan`."""
    __slots__ = ('funcs', 'known', 'plan')

    def __init__(self, funcs: tuple):
        self.funcs = funcs
        self.known = (np.full(8 * len(funcs), -1, np.int64), np.zeros(0, np.int64), ())
        self.plan: Optional[_FillPlan] = None

    def add(self, f: int, phase: int) -> tuple:
        """``known`` with template function ``f`` at ``phase`` made and numbered."""
        table, sizes, tmpls = self.known
        tmpl = self.funcs[f](phase)
        table = table.copy()
        table[8 * f + phase] = len(tmpls)
        self.known = (table, np.append(sizes, len(tmpl.element)).astype(np.int64),
                      tmpls + (tmpl,))
        return self.known

    def plan_of(self, tmpls: tuple) -> '_FillPlan':
        """The :class:`_FillPlan` of ``tmpls`` (the templates of ``known``)."""
        plan = self.plan
        if plan is None or plan.tmpls is not tmpls:
            plan = self.plan = _FillPlan(tmpls)
        return plan


class _FillPlan:
    """The templates of a :class:`_Layout` for :data:`.cdr_native.FILL`: their bytes one after
    another (``pool``, ``pool_at``), and per template its slots (``slot_at``: the first of
    each in ``slots``) as byte copies (``copies``) from a source per slot name and dtype
    (``sources``: name → [(source number, dtype)]; ``names``: each source's name)."""

    def __init__(self, tmpls: tuple):
        self.tmpls = tmpls
        elements = [t.element for t in tmpls]
        sizes = np.array([len(e) for e in elements], np.int64)
        self.pool = np.concatenate(elements) if elements else np.zeros(1, np.uint8)
        self.pool_at = np.cumsum(sizes) - sizes
        self.phase = np.array([t.phase for t in tmpls], np.int64)
        self.sources: dict = {}
        self.names: list = []
        slot_at, slots, copies = [0], [], []
        for t in tmpls:
            for name, (dtype, index) in t.slots.items():
                numbers = self.sources.setdefault(name, [])
                number = next((k for k, d in numbers if d == dtype), None)
                if number is None:
                    number = len(self.names)
                    numbers.append((number, dtype))
                    self.names.append(name)
                w = dtype.itemsize
                m, k = index.shape
                runs = _byte_runs(index.reshape(-1) * w - t.phase, w)
                slots.append((number, m * k * w, k * w, m, len(copies), len(runs)))
                done = 0
                for at, size in runs:                 # the values row read in order
                    copies.append((at, done, size))
                    done += size
            slot_at.append(len(slots))
        self.slot_at = np.array(slot_at, np.int64)
        self.slots = np.array(slots or [(0,) * 6], np.int64)
        self.copies = np.array(copies or [(0,) * 3], np.int64)
        #: the addresses of pool, pool_at, slot_at, slots, copies (held by this plan)
        self.addresses = tuple(_address(a) for a in (self.pool, self.pool_at, self.slot_at,
                                                     self.slots, self.copies))


def _byte_runs(offsets: np.ndarray, size: int) -> list:
    """(offset, bytes) of the runs of adjacent ones among values of ``size`` bytes at byte
    ``offsets``, in order (the values read one after another)."""
    runs: list = []
    for off in offsets.tolist():
        if runs and runs[-1][0] + runs[-1][1] == off:
            runs[-1][1] += size
        else:
            runs.append([off, size])
    return runs


_LAYOUTS: dict = {}                # template functions of a call → its _Layout
_SOURCE = struct.Struct('<7q')      # a source of cdr_fill.c


def _native_source(value, dtype: np.dtype, keep: list):
    """The :data:`.cdr_native.FILL` source of a slot's ``value`` (rows of values, or a
    :class:`Ragged`) in ``dtype``; None for what numpy assigns (a function of the rows, a
    scalar or no rows to broadcast)."""
    w = dtype.itemsize
    if type(value) is np.ndarray and value.dtype == dtype and value.ndim == 2:
        n, k = value.shape                      # rows as they are (the common case)
        rows, step = value.strides
        if n and rows and (k == 1 or step == w):
            keep.append(value)
            return (1, _address(value), rows, k * w, n, 0, 0)
    if type(value) is Ragged:
        flat, starts = value.flat, value.starts
        if flat.dtype != dtype or not flat.flags.c_contiguous:
            flat = np.ascontiguousarray(flat, dtype)
        if flat.ndim == 0 or starts.ndim != 1:
            return None
        starts = _int64(starts)
        keep += (flat, starts)
        row = math.prod(flat.shape[1:]) * w
        return (2, _address(flat), row, row, flat.shape[0], _address(starts), len(starts))
    if callable(value):
        return None
    src = value if type(value) is np.ndarray else np.asarray(value)
    if src.ndim == 0 or not len(src):
        return None
    n = len(src)
    if src.ndim != 2:
        src = src.reshape(n, -1)
    stride = src.strides[0]
    if stride == 0:                             # one row for all: that row only
        src = src[:1]
    if src.dtype != dtype:
        src = src.astype(dtype)
    if src.shape[1] > 1 and src.strides[1] != w:
        src = np.ascontiguousarray(src)
    keep.append(src)
    return (1, _address(src), stride and src.strides[0], src.shape[1] * w, n, 0, 0)


def _native_messages(heads: list, runs: list, singles: set, msg_of: list) -> Optional[list]:
    """:func:`messages_with_elements` by the compiled filler (``cdr_fill.c``): the elements'
    places and templates followed in one loop (:data:`.cdr_native.LAYOUT`), then every
    element's bytes and slot values in another (:data:`.cdr_native.FILL`); a slot whose
    values it does not take (a function of the rows, a shape to broadcast, rows they do not
    have) then goes through numpy, which assigns or raises as it does.  None for a shape
    number outside its Run's templates (numpy's path raises)."""
    ids: dict = {}
    keep: list = []
    fmaps: list = []
    table = []                                  # per run: message, n, shape, fmap at, its length
    for r, run in enumerate(runs):
        shape = _int64(run.shape)
        keep.append(shape)
        table.append((msg_of[r], len(shape), _address(shape), len(fmaps), len(run.templates)))
        fmaps += [ids.setdefault(f, len(ids)) for f in run.templates]
    funcs = tuple(ids)
    layout = _LAYOUTS.get(funcs)
    if layout is None:
        if len(_LAYOUTS) >= 256:
            _LAYOUTS.clear()
        layout = _LAYOUTS[funcs] = _Layout(funcs)
    n_msg, n = len(heads), sum(t[1] for t in table)
    head_end = np.array([len(h) - 4 for h in heads], np.int64)
    run_table = np.array(table, np.int64)
    fmap = np.array(fmaps or [0], np.int64)
    tid, start = np.empty(n, np.int64), np.empty(n, np.int64)
    base, ends = np.empty(n_msg, np.int64), np.empty(n_msg, np.int64)
    state = np.zeros(9, np.int64)
    table, sizes, tmpls = layout.known
    while True:
        size = cdr_native.LAYOUT(n_msg, _address(head_end), len(runs), _address(run_table),
                                 _address(fmap), _address(table), _address(sizes),
                                 _address(tid), _address(start), _address(base),
                                 _address(ends), _address(state))
        if size != -1:
            break
        table, sizes, tmpls = layout.add(int(state[7]), int(state[8]))
    if size < 0:
        return None
    plan = layout.plan_of(tmpls)
    count = len(plan.names)
    packed = bytearray(56 * max(len(runs) * count, 1))     # (runs × count, 7) int64, 0: none
    fill = []                                   # per run: n, rows, its first source
    for r, run in enumerate(runs):
        rows = 0
        if r not in singles:
            if not run.ordered:
                given = _int64(run.rows)
                keep.append(given)
                rows = _address(given)
            for name, value in run.values.items():
                for number, dtype in plan.sources.get(name, ()):
                    source = _native_source(value, dtype, keep)
                    if source is not None:
                        _SOURCE.pack_into(packed, 56 * (r * count + number), *source)
        fill.append((len(run), rows, r * count, 0))
    fill = np.array(fill, np.int64)
    sources = np.frombuffer(packed, np.int64)
    refused = np.zeros(len(sources) // 7, np.uint8)
    per_msg = [0] * n_msg
    for r, run in enumerate(runs):
        per_msg[msg_of[r]] += len(run)
    starts, stops = base.tolist(), (base + ends).tolist()

    def fill_at(bias) -> None:
        fill[:, 3] = bias                       # where each run's buffer offsets count from
        pool, pool_at, slot_at, slots, copies = plan.addresses
        cdr_native.FILL(len(runs), _address(fill), _address(tid), _address(start), pool,
                        pool_at, _address(sizes), slot_at, slots, copies, _address(sources),
                        _address(refused))
    if not singles:             # each message built in the bytes it is published as
        made = [new_bytes(e - b + 4) for b, e in zip(starts, stops)]
        fill_at([made[j][1] - starts[j] + 4 for j in msg_of])
        if not refused.any():
            for (_, at), h, count in zip(made, heads, per_msg):
                ctypes.memmove(at, h, len(h) - 4)
                ctypes.memmove(at + len(h) - 4, struct.pack('<I', count), 4)
            return [m for m, _ in made]
    out = np.empty(size, np.uint8)              # every byte written: elements, heads, gaps
    fill_at(_address(out))
    out[:starts[0] - 4] = 0
    for j, h in enumerate(heads):
        b = starts[j] - 4
        out[b:b + len(h)] = np.frombuffer(h, np.uint8)
        out[b + len(h) - 4:b + len(h)] = np.frombuffer(struct.pack('<I', per_msg[j]), np.uint8)
        out[stops[j]:starts[j + 1] - 4 if j + 1 < n_msg else size] = 0
    if refused.any() or singles:                # what numpy assigns
        _fill_runs(out, runs, singles, tmpls, tid, start - plan.phase[tid],
                   only=lambda r: {plan.names[k] for k in np.flatnonzero(
                       refused[r * count:(r + 1) * count]).tolist()})
    whole = memoryview(out)
    return [whole[b - 4:e] for b, e in zip(starts, stops)]


def _phases_in_turn(funcs, fid, first, per_msg, head_end) -> tuple:
    """Phases, templates, template numbers and sizes of the elements followed one by one (an
    element whose end phase depends on its start)."""
    known: dict = {}
    tmpls, tid, phase, size = [], [], [], []
    for j, count in enumerate(per_msg.tolist()):
        p = int(head_end[j]) & 7
        for f in fid[int(first[j]):int(first[j]) + count].tolist():
            k = known.get((f, p))
            if k is None:
                k = known[(f, p)] = len(tmpls)
                tmpls.append(funcs[f](p))
            n = len(tmpls[k].element)
            tid.append(k)
            phase.append(p)
            size.append(n)
            p = (p + n) & 7
    return (np.array(phase, np.intp), tmpls, np.array(tid, np.intp),
            np.array(size, np.intp))


def _fill_single(view_of, tmpl: CdrTemplate, origin: int, values: dict) -> None:
    for dtype, _, slots in tmpl.plan:
        view, shift = view_of(dtype), origin // dtype.itemsize
        for name, index in slots:
            if type(index) is slice:
                view[index.start + shift:index.stop + shift] = values[name]
            else:
                view[index + shift] = values[name]


_GROUP_PLANS: dict = {}            # templates of a Run → how each slot is placed


def _group_plan(group: tuple) -> list:
    """Per slot of the templates ``group``: (name, dtype, None, (T, m·k) offsets of its
    values in each template, m) when every template has the same field count m, else
    (name, dtype, k, (first offset, field count) of each template: its fields adjacent,
    None)."""
    plan = _GROUP_PLANS.get(group)
    if plan is not None:
        return plan
    slots: dict = {}
    for t in group:
        for name, (dtype, index) in t.slots.items():
            slots.setdefault(name, (dtype, index))
    plan = []
    for name, (dtype, index) in slots.items():
        none = np.zeros((0, index.shape[1]), np.intp)   # a template without the slot
        indices = [t.slots[name][1] if name in t.slots else none for t in group]
        if all(i.shape == index.shape for i in indices):
            rel = np.stack([i.reshape(-1) for i in indices])
            if rel.shape[1] and (rel - rel[:, :1] == rel[0] - rel[0, 0]).all():
                rel = (rel[:, 0], rel[0] - rel[0, 0])   # the same fields, shifted: (shift, rel)
            plan.append((name, dtype, None, rel, index.shape[0]))
            continue
        firsts, fields = [], []
        for i in indices:
            flat = i.reshape(-1)
            if len(flat) and not np.array_equal(flat, np.arange(flat[0], flat[0] + len(flat))):
                raise ValueError(f'slot {name}: fields not adjacent')
            firsts.append(int(flat[0]) if len(flat) else 0)
            fields.append(i.shape[0])
        plan.append((name, dtype, index.shape[1],
                     (np.array(firsts, np.intp), np.array(fields, np.intp)), None))
    if len(_GROUP_PLANS) >= 1024:
        _GROUP_PLANS.clear()
    _GROUP_PLANS[group] = plan
    return plan


def _fill_run(view_of, tmpls: list, tid: np.ndarray, origin: np.ndarray, run: Run,
              only: Optional[set] = None) -> None:
    """The slots of a Run's elements (templates ``tmpls[tid]`` at ``origin``): per slot one
    assignment for all, a slot whose field count varies by template (its fields adjacent)
    placed by ragged offsets."""
    used, local = small_unique(tid)
    group = tuple(tmpls[k] for k in used.tolist())
    rows, values = run.rows, run.values
    n = len(rows)
    in_order = run.ordered or (bool(n) and rows[0] == 0 and rows[-1] == n - 1 and
                               np.array_equal(rows, np.arange(n)))
    starts: dict = {}
    for name, dtype, width, layout, fixed in _group_plan(group):
        if only is not None and name not in only:
            continue
        at = starts.get(dtype.itemsize)
        if at is None:
            at = starts[dtype.itemsize] = origin // dtype.itemsize
        got = values[name]
        if width is None:
            if type(layout) is tuple:                  # offsets: a shift per template
                shift, rel = layout
                where = ((at + shift[0]) if len(group) == 1 else (at + shift[local]))[:, None] \
                    + rel
            else:
                where = at[:, None] + (layout[0] if len(group) == 1 else layout[local])
            if isinstance(got, Ragged):
                got = got.gather(rows, np.full(n, fixed))
            elif callable(got):
                got = got(rows, fixed)
            elif not (in_order and len(got) == n):
                got = np.asarray(got)[rows]
            view_of(dtype)[where] = np.reshape(got, (n, -1))
            continue
        firsts, fields = layout
        m = fields[local]                              # fields of each element
        counts = m * width
        done = np.cumsum(counts) - counts
        where = np.repeat(at + firsts[local] - done, counts) + np.arange(int(done[-1] +
                                                                             counts[-1]))
        if isinstance(got, Ragged):
            got = got.gather(rows, m)
        else:
            got = np.concatenate([np.reshape(got(rows[k:k + 1], int(c)), -1)
                                  for k, c in enumerate(m.tolist()) if c] or [np.zeros(0)])
        view_of(dtype)[where] = np.reshape(got, -1)


def serialize(type_name: str, value) -> bytes:
    """The CDR of a message without slots (a value tree as for :func:`build`)."""
    tmpl = build(type_name, value)
    if tmpl.slots:
        raise ValueError(f'serialize: slots {sorted(tmpl.slots)} left unfilled')
    return tmpl.data
