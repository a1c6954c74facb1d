"""The kernel registry: explicit registrations, pattern plugins' kernels, precedence."""

import pytest

from surgeon.errors import SurgeonError
from surgeon.runtime import find_kernel, load_plugin_kernels, register_kernel, unregister_kernel

PLUGIN = "tests.runtime.kernel_plugin:TorchKernels"


def test_register_find_unregister():
    fn = lambda inputs, attrs, device="cpu": inputs  # noqa: E731
    assert find_kernel("test.reg", "Op") is None
    register_kernel("test.reg", "Op", fn)
    assert find_kernel("test.reg", "Op") is fn
    unregister_kernel("test.reg", "Op")
    assert find_kernel("test.reg", "Op") is None
    with pytest.raises(SurgeonError, match="not a function"):
        register_kernel("test.reg", "Op", 3)


def test_plugin_kernels_load_and_explicit_ones_win():
    from .kernel_plugin import triple

    assert find_kernel("test.ops", "PluginOnly", [PLUGIN]) is triple
    own = lambda inputs, attrs, device="cpu": inputs  # noqa: E731
    register_kernel("test.ops", "PluginOnly", own)
    assert find_kernel("test.ops", "PluginOnly") is own
    unregister_kernel("test.ops", "PluginOnly")
    assert find_kernel("test.ops", "PluginOnly") is triple


def test_a_plugin_that_cannot_load_is_an_error():
    with pytest.raises(SurgeonError, match="--plugin no_such_module:Nope: cannot load"):
        load_plugin_kernels(["no_such_module:Nope"])
