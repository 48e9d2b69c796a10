"""ibeo/ros/lux_cdr.py: the object label texts (``id class``) made column-wise are the texts
Python formats, for every digit count and for class numbers without a name."""
import numpy as np

from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec import objects_ecu as ecu_objects
from ros_sim_bridge.ibeo.ros.lux_cdr import id_class_texts


def test_label_texts_equal_formatted_strings():
    rng = np.random.default_rng(7)
    ids = np.concatenate([[0, 9, 10, 99, 100, 65535, 2**31, 2**32 - 1],
                          rng.integers(0, 2**32, 300)])
    classes = np.concatenate([[0, 12, 13, 255, 7, 5, 6, 3], rng.integers(0, 20, 300)])
    for name_of in (lux_objects.classification_name, ecu_objects.classification_name):
        text, lengths = id_class_texts(ids, classes, name_of)
        want = [f'{i} {name_of(c)}'.encode() for i, c in zip(ids.tolist(), classes.tolist())]
        assert text.tobytes() == b''.join(want)
        assert lengths.tolist() == [len(w) for w in want]
    text, lengths = id_class_texts(np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert len(text) == 0 and len(lengths) == 0
