"""``result.model`` of a model whose weights stay in external data is first class: run, validate,
unfuse, inspect and fuse take it as they take a path (the weights read where they are), and
``surgeon.save`` writes it elsewhere with its data, copied file to file."""

import os
import shutil
import tracemalloc

import numpy as np
import onnx
import pytest

import surgeon
from surgeon.io import homes

from ..builders import external_tensor_names, stn_sample_with_external_data
from .stn_sample import stn_feeds


@pytest.fixture
def external(tmp_path):
    """The STN sample in tmp_path/in with its weights in external data, and what it computes."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = stn_sample_with_external_data(folder)
    return path, surgeon.run(path, stn_feeds())["y"]


def test_the_result_knows_where_its_data_lives(external):
    path, _ = external
    result = surgeon.fuse(path, quiet=True)
    assert result.data_dir == os.path.dirname(path)
    assert external_tensor_names(result.model)  # still outside: nothing was read into memory
    inline = surgeon.fuse(onnx.load(path), quiet=True)  # weights loaded by onnx: nothing outside
    assert inline.data_dir is None and not external_tensor_names(inline.model)


def test_run_validate_inspect_unfuse_and_fuse_take_result_model(external):
    path, want = external
    result = surgeon.fuse(path, quiet=True)
    np.testing.assert_allclose(surgeon.run(result.model, stn_feeds(), quiet=True)["y"], want, atol=1e-5)
    assert surgeon.validate(path, result.model, quiet=True).passed
    assert surgeon.validate(result.model, result.model, far=False, quiet=True).passed
    assert surgeon.inspect(result.model, quiet=True).rewrites == []  # nothing left to fuse
    again = surgeon.fuse(result.model, quiet=True)
    assert again.report.rewrites == [] and again.data_dir == result.data_dir
    standard = surgeon.unfuse(result.model, quiet=True)
    assert all(n.domain in ("", "ai.onnx") for n in standard.model.graph.node)
    np.testing.assert_allclose(surgeon.run(standard.model, stn_feeds(), quiet=True)["y"], want, atol=1e-5)


def test_the_validated_result_model_passes_where_the_readme_says(external):
    path, _ = external
    result = surgeon.fuse(path, validate=True, quiet=True)
    report = surgeon.validate(path, result.model, quiet=True)
    assert report.passed and result.validation.passed


def test_save_writes_it_elsewhere_with_its_data_and_changes_nothing(external, tmp_path):
    path, want = external
    result = surgeon.fuse(path, quiet=True)
    before = result.model.SerializeToString()
    inputs = {name: (tmp_path / "in" / name).read_bytes() for name in os.listdir(tmp_path / "in")}
    out = tmp_path / "out"
    out.mkdir()
    surgeon.save(result, out / "fused.onnx")
    assert sorted(os.listdir(out)) == ["fused.onnx", "fused.onnx.data"]
    assert result.model.SerializeToString() == before  # the result is as it was
    assert {name: (tmp_path / "in" / name).read_bytes() for name in os.listdir(tmp_path / "in")} == inputs
    shutil.rmtree(tmp_path / "in")  # the copy stands alone
    onnx.checker.check_model(str(out / "fused.onnx"))
    np.testing.assert_allclose(surgeon.run(str(out / "fused.onnx"), stn_feeds())["y"], want, atol=1e-5)


def test_save_takes_the_model_too_and_can_write_one_file(external, tmp_path):
    path, want = external
    result = surgeon.fuse(path, quiet=True)
    surgeon.save(result.model, tmp_path / "one.onnx", external_data=False)
    assert not (tmp_path / "one.onnx.data").exists()
    assert not external_tensor_names(onnx.load(str(tmp_path / "one.onnx"), load_external_data=False))
    np.testing.assert_allclose(surgeon.run(str(tmp_path / "one.onnx"), stn_feeds())["y"], want, atol=1e-5)


def test_save_never_writes_onto_the_data_the_model_reads(external):
    path, _ = external
    result = surgeon.fuse(path, quiet=True)
    os.remove(path)  # the model file may go; its data file is what result.model still reads
    with pytest.raises(surgeon.CannotWriteError, match="output is the input's external data") as info:
        surgeon.save(result, path)  # would write path + ".data": the very file
    assert info.value.path == path + ".data"


def test_onnx_save_of_result_model_is_what_surgeon_save_fixes(external, tmp_path):
    """Documented behaviour: onnx.save writes the graph only, its data references stay relative to the
    input's folder; surgeon.save copies the data."""
    path, _ = external
    result = surgeon.fuse(path, quiet=True)
    onnx.save(result.model, tmp_path / "bare.onnx")
    with pytest.raises(surgeon.InvalidModelError, match="external data file 'stn.onnx.data' not found"):
        surgeon.run(str(tmp_path / "bare.onnx"))


def test_a_model_surgeon_did_not_hand_back_still_needs_its_path(external):
    path, _ = external
    bare = onnx.load(path, load_external_data=False)
    with pytest.raises(surgeon.InvalidModelError, match="given in memory .* pass its path instead"):
        surgeon.run(bare, stn_feeds())
    copied = onnx.ModelProto()
    copied.CopyFrom(surgeon.fuse(path, quiet=True).model)  # a copy is another model: surgeon does not know it
    with pytest.raises(surgeon.InvalidModelError, match="given in memory"):
        surgeon.run(copied, stn_feeds())


def test_data_moved_away_is_one_line(external, tmp_path):
    path, _ = external
    result = surgeon.fuse(path, quiet=True)
    os.rename(path + ".data", tmp_path / "elsewhere.data")
    with pytest.raises(surgeon.InvalidModelError, match="external data file 'stn.onnx.data' not found") as info:
        surgeon.run(result.model, stn_feeds())
    assert "\n" not in str(info.value)


def test_a_remembered_model_is_forgotten_with_the_result(external):
    path, _ = external
    before = homes.count()
    result = surgeon.fuse(path, quiet=True)
    model = result.model
    del result
    assert homes.count() == before + 1  # the model is still held by the caller
    del model
    assert homes.count() == before


def test_memory_grows_with_the_graph_not_the_weights(tmp_path):
    path = stn_sample_with_external_data(tmp_path, big_elements=4 << 20)  # one 16 MiB weight
    result = surgeon.fuse(path, quiet=True)
    assert result.model.ByteSize() < 1 << 20  # the graph: the weights stayed in their file
    assert surgeon.run(result.model, stn_feeds(), quiet=True)["w_sum"] == pytest.approx(2 << 20)
    out = tmp_path / "out"
    out.mkdir()
    tracemalloc.start()
    try:
        surgeon.save(result, out / "m.onnx")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"saving held {peak} bytes: the weights went through memory"
    assert os.path.getsize(out / "m.onnx.data") >= 16 << 20
