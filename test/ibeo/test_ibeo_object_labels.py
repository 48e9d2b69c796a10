"""ibeo/ros/lux_cdr.py: the object label texts (``id class``), made by the compiled kernel
(label_text.c) and column-wise with numpy, are the texts Python formats, for every digit count
and for class numbers without a name."""
import numpy as np
import pytest

from ros_sim_bridge.ibeo.codec import objects as lux_objects
from ros_sim_bridge.ibeo.codec import objects_ecu as ecu_objects
from ros_sim_bridge.ibeo.ros.lux_cdr import LABEL_TEXTS, id_class_texts


@pytest.mark.parametrize('native', [True, False], ids=['compiled', 'numpy'])
def test_label_texts_equal_formatted_strings(native):
    if native and LABEL_TEXTS is None:
        pytest.skip('the label kernel is not built here')
    rng = np.random.default_rng(7)
    ids = np.concatenate([[0, 9, 10, 99, 100, 65535, 2**31, 2**32 - 1],
                          rng.integers(0, 2**32, 300)])
    classes = np.concatenate([[0, 12, 13, 255, 7, 5, 6, 3], rng.integers(0, 20, 300)])
    for name_of in (lux_objects.classification_name, ecu_objects.classification_name):
        text, lengths = id_class_texts(ids, classes, name_of, native=native)
        want = [f'{i} {name_of(c)}'.encode() for i, c in zip(ids.tolist(), classes.tolist())]
        assert text.tobytes() == b''.join(want)
        assert lengths.tolist() == [len(w) for w in want]
    text, lengths = id_class_texts(np.zeros(0, np.int64), np.zeros(0, np.int64),
                                   native=native)
    assert len(text) == 0 and len(lengths) == 0


def test_label_texts_need_a_class_for_each_id_and_ids_of_zero_or_more():
    for ids, classes in (([1, 2, 3], [5]), ([1], [5, 6]), ([-5], [5])):
        for native in (True, False):
            with pytest.raises(ValueError):
                id_class_texts(np.array(ids), np.array(classes), native=native)
