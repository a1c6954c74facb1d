"""What the driver records for the HTML report: each rewrite's region before and after, each near
miss's region, the plugin, passes, time and bytes; weight-free, bounded, and out of to_json()."""

from __future__ import annotations

import json

import numpy as np
import onnx
from onnx import TensorProto, helper

import surgeon
from surgeon.graph import Node
from surgeon.rewrite import capture

from ..builders import relu_neg_abs_mul_sigmoid_model
from .toy_patterns import SAMPLE, TOY_PATTERNS


def test_rewrite_regions_before_and_after():
    report = surgeon.fuse(relu_neg_abs_mul_sigmoid_model(), plugins=TOY_PATTERNS).report
    (rewrite,) = report.rewrites
    before, after = rewrite.region["before"], rewrite.region["after"]
    assert [n[0] for n in before["nodes"]] == rewrite.replaced == ["Relu", "Neg"]
    assert [(n[0], n[1], n[5]) for n in after["nodes"]] == [("NegRelu", "test.visual", {"alpha": "0.5"})]
    assert rewrite.region["outputs"] == ["n"]
    names = {v[0]: v[1] for v in before["values"]}
    assert set(names) == {"x", "r", "n"} and names["x"] == names["n"] == "f32[1024,1024]"
    assert rewrite.plugin == "tests.visual.toy_patterns:NegRelu"  # patterns passed as a list: module:Name
    assert report.passes == 2 and report.seconds > 0
    assert report.bytes_before == report.bytes_after == 4 * 1024 * 1024


def test_near_miss_regions_say_what_was_looked_at():
    report = surgeon.inspect(relu_neg_abs_mul_sigmoid_model(), plugins=TOY_PATTERNS)
    misses = {m.pattern: m for m in report.refusals}
    checked = misses["refuses-in-check"]
    assert checked.region_kind == "matched" and [n[0] for n in checked.region["nodes"]] == ["Neg", "Abs"]
    looked = misses["refuses-in-match"]
    assert looked.region_kind == "neighbourhood"
    assert [n[0] for n in looked.region["nodes"]] == ["Abs", "Mul", "Sigmoid"]  # two steps back
    weight = next(v for v in looked.region["values"] if v[0] == "w")
    assert weight[2] == "tensor f32[1024,1024]"  # a weight by its type, never its data
    assert len(json.dumps(looked.region)) < 1000


def test_to_json_keeps_its_keys_and_leaves_the_regions_out():
    report = surgeon.fuse(relu_neg_abs_mul_sigmoid_model(), plugins=TOY_PATTERNS).report
    data = json.loads(report.to_json())
    assert {"pattern", "anchor", "graph", "replaced", "written", "warnings"} <= set(data["rewrites"][0])
    assert {"pattern", "node", "graph", "reason"} <= set(data["refusals"][0])
    assert {"patterns", "rewrites", "refusals", "nodes_before", "nodes_after", "constant_bytes_removed", "dry_run",
            "notes"} <= set(data)
    assert "region" not in json.dumps(data)
    full = report.to_dict(regions=True)
    assert full["rewrites"][0]["region"]["before"]["nodes"] and full["refusals"][0]["region"]["nodes"]


def test_installed_plugins_are_named_with_their_package():
    report = surgeon.inspect(str(SAMPLE))
    (rewrite,) = report.rewrites
    assert rewrite.plugin.startswith("surgeon ")
    assert len(rewrite.region["before"]["nodes"]) == len(rewrite.replaced) == 130
    assert len(json.dumps(rewrite.region)) < 40_000


def test_a_huge_region_is_cut_and_small_constants_are_shown_by_value():
    nodes = [Node(helper.make_node("Identity", [f"v{i}"], [f"v{i + 1}"], name=f"id{i}"), i) for i in range(400)]
    region = capture.describe(nodes, lambda v: (TensorProto.FLOAT, (1, "N", None)))
    assert len(region["nodes"]) == capture.MAX_NODES and region["omitted"] == 400 - capture.MAX_NODES
    assert region["values"][0][1] == "f32[1,N,?]"
    small = onnx.numpy_helper.from_array(np.array([1, -1, 9], np.int64), "s")
    assert capture.tensor_label(small) == "[1, -1, 9]"
    assert capture.tensor_label(onnx.numpy_helper.from_array(np.float32(0.25), "h")) == "0.25"
