"""Reports as data: every kind follows surgeon/schemas/report.schema.json (installed with the
package), names nodes by their fields and plugins by one label. tests/conftest.py holds every
report any test makes to the same schema; here each kind is made on purpose, and the schema is
shown to refuse what it must."""

import copy
import fnmatch
import json
import os

import jsonschema
import numpy as np
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

import surgeon
from surgeon.lint import ENGINES, lint
from surgeon.reportfields import SCHEMA_VERSION, schema

from ..builders import relu_model
from ..relu_patterns import DoublingRelu
from .stn_sample import ROOT, STN


IF_SAMPLE = os.path.join(ROOT, "samples", "models", "if_branch_dynamo_opset18.onnx")  # the chain in a branch
NEAR_MISS = os.path.join(ROOT, "samples", "models", "neg_nonaffine_grid.onnx")  # refused: Tanh in the grid


def _valid(data: dict) -> dict:
    """``data`` as a file holds it, checked against the schema."""
    data = json.loads(json.dumps(data))
    jsonschema.Draft202012Validator(schema()).validate(data)
    return data


def test_the_schema_is_a_valid_json_schema_and_ships_with_the_package():
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        wheel = tomllib.load(f)["tool"]["scikit-build"]["wheel"]
    assert "surgeon" in wheel["packages"]  # the whole folder, data files included
    assert not any(fnmatch.fnmatch("surgeon/schemas/report.schema.json", p) for p in wheel.get("exclude", []))


def test_fuse_and_inspect_reports_name_nodes_by_their_fields():
    fused = _valid(surgeon.fuse(IF_SAMPLE, quiet=True).report.to_dict())
    assert (fused["schema_version"], fused["kind"]) == (SCHEMA_VERSION, "fuse")
    rewrite = fused["rewrites"][0]
    assert rewrite["anchor"]["op_type"] == "GridSample" and rewrite["anchor"]["graph"].endswith(".then_branch")
    assert rewrite["written"][0]["domain"] == "custom.ops" and rewrite["plugin"].startswith("surgeon ")
    inspected = _valid(surgeon.inspect(NEAR_MISS, quiet=True).to_dict(regions=True))
    assert inspected["kind"] == "inspect" and inspected["dry_run"] is True
    miss = inspected["refusals"][0]
    assert miss["node"] == {"name": "/GridSample", "op_type": "GridSample", "domain": "", "graph": "main",
                            "output": miss["node"]["output"]} and "not affine" in miss["reason"]


def test_unfuse_reports_name_the_plugin_that_brought_the_standard_form():
    data = _valid(surgeon.unfuse(surgeon.fuse(STN, quiet=True).model, quiet=True).report.to_dict())
    assert data["kind"] == "unfuse" and data["rewrites"][0]["plugin"].startswith("surgeon ")
    assert data["rewrites"][0]["anchor"]["op_type"] == "FusedGridSample"


def test_validate_reports_passed_failed_and_far_follow_the_schema():
    fused = surgeon.fuse(IF_SAMPLE, quiet=True)
    passed = _valid(surgeon.validate(IF_SAMPLE, fused.model, quiet=True).to_dict())
    assert passed["kind"] == "validate" and passed["passed"] and passed["far"]["passed"]
    (node,) = passed["rewrites"][0]["nodes"]
    assert node["graph"] == fused.report.rewrites[0].anchor_ref.graph  # the fuse report's path for that graph
    assert (node["pattern"], node["plugin"]) == ("affine-grid-sample", fused.report.rewrites[0].plugin)
    wrong = surgeon.fuse(relu_model(), plugins=[DoublingRelu()], quiet=True)
    feeds = {"x": np.full((2, 3), 2.0, np.float32)}
    failed = surgeon.validate(relu_model(), wrong.model, feeds, plugins=[DoublingRelu()], quiet=True)
    data = _valid(json.loads(failed.to_json()))  # the file's form: no inf or NaN
    assert not data["passed"] and data["far"] is None and data["failures"]
    plugin = data["rewrites"][0]["nodes"][0]["plugin"]
    assert plugin == wrong.report.rewrites[0].plugin == "tests.relu_patterns:DoublingRelu"  # one label everywhere


@pytest.mark.parametrize("target", ENGINES)
def test_lint_reports_follow_the_schema(target):
    data = _valid(lint(surgeon.fuse(STN, quiet=True).model, target).to_dict())
    assert data["kind"] == "lint" and data["target"] == target


@pytest.mark.parametrize("breakage", [
    lambda d: d.pop("schema_version"),
    lambda d: d.update(schema_version=0),
    lambda d: d.update(kind="fused"),
    lambda d: d["rewrites"][0].update(anchor="/GridSample (GridSample)"),  # a node as text
    lambda d: d["rewrites"][0]["anchor"].pop("graph"),
    lambda d: d["rewrites"][0].update(surprise=1),
])
def test_the_schema_refuses_a_report_that_breaks_it(breakage):
    data = json.loads(surgeon.fuse(STN, quiet=True).report.to_json())
    broken = copy.deepcopy(data)
    breakage(broken)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema()).validate(broken)
