"""Setting a message's uint8[] field (Image.data, PointCloud2.data …) without copying.

The generated setter checks every element and builds an array.array: two passes over
megabytes for a camera frame.  The slot behind the property takes any buffer, and the
generated C conversion at publish (``PyObject_CheckBuffer`` → one ``memcpy``) copies it once
into the outgoing message.  The buffer must stay unchanged until the message is published.
"""
from __future__ import annotations

import array


def set_uint8_field(msg, field: str, buffer) -> None:
    """``msg.<field> = buffer`` (bytes, bytearray, memoryview) with no copy in Python.

    Reading the field back gives a memoryview of ``buffer``.  Falls back to the setter (an
    array.array copy) for a message class without the ``_<field>`` slot."""
    view = memoryview(buffer).cast('B')
    if hasattr(type(msg), '_' + field):
        setattr(msg, '_' + field, view)
    else:
        data = array.array('B')
        data.frombytes(view)
        setattr(msg, field, data)
