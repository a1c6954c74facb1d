import numpy as np
import pytest
from onnx import AttributeProto

import surgeon
from surgeon.graph.attrs import make_attribute, make_attributes, read_attribute


def test_suffixes_make_typed_attributes():
    attrs = {a.name: a for a in make_attributes(
        align_corners_i=0, mode_s="bilinear", scale_f=1.5, sizes_i=[2, 3], flag_b=True,
        value_t=np.arange(3, dtype=np.int64), weights_f=[0.5, 2], names_s=["a", "b"])}
    assert attrs["align_corners"].type == AttributeProto.INT and attrs["align_corners"].i == 0
    assert attrs["mode"].type == AttributeProto.STRING and attrs["mode"].s == b"bilinear"
    assert attrs["scale"].type == AttributeProto.FLOAT and attrs["scale"].f == 1.5
    assert attrs["sizes"].type == AttributeProto.INTS and list(attrs["sizes"].ints) == [2, 3]
    assert attrs["flag"].type == AttributeProto.INT and attrs["flag"].i == 1  # ONNX has no bool
    assert attrs["value"].type == AttributeProto.TENSOR
    np.testing.assert_array_equal(read_attribute(attrs["value"]), [0, 1, 2])
    assert attrs["weights"].type == AttributeProto.FLOATS and list(attrs["weights"].floats) == [0.5, 2.0]
    assert read_attribute(attrs["names"]) == ["a", "b"]
    assert make_attribute("off_b", False).i == 0
    assert make_attribute("n_i", np.int64(7)).i == 7


@pytest.mark.parametrize("key, value, message", [
    ("align_corners", 0, "has no type suffix"),
    ("scale_i", 1.5, "expected an int"),
    ("flag_b", 2, "expected a bool"),
    ("mode_s", 3, "expected a str"),
    ("scale_f", "x", "expected a float"),
    ("value_t", [1, 2], "expected a numpy array"),
    ("sizes_i", [1, "2"], "expected an int"),
    ("x_f", True, "expected a float"),
])
def test_values_that_do_not_fit_their_suffix_are_clear_errors(key, value, message):
    with pytest.raises(ValueError, match=message):
        make_attribute(key, value)


def test_the_public_suffixed_builders_are_deprecated_aliases():
    with pytest.warns(DeprecationWarning, match="surgeon.make_attribute is deprecated"):
        build = surgeon.make_attribute
    assert build is make_attribute and "make_attribute" not in surgeon.__all__
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        surgeon.no_such_name  # noqa: B018
