"""Every model the tests build by hand, in one place, each builder named for what it builds:

- graph: ``onnx_model`` (a model from nodes and value infos), ``value_info``, ``GraphBuilder``
  (op by op);
- toy_models: a few standard ops (``relu_model``, ``relu_neg_abs_model``, ...) and chains of the
  trivial custom op test.ops::Scale;
- warps: native AffineGrid -> GridSample models and their rewritten twins (``warp_pair``,
  ``stn_pair``, ``if_warp_model``, ``weighted_warp_model``), their inputs, tampered twins;
- warp_spellings: warps spelled as exporters write them, or do not (``native_pair``,
  ``homogeneous_perspective``, ``dynamo_chains``, ``aten_pair``, ...);
- custom_ops: models of one custom.ops node (``fused_grid_sample_model``, ``affine_grid_model``,
  ``custom_op_model``, TensorRT plugin nodes) and their feeds;
- external_data: models written with their weights in external data, and edits of them.

Everything is importable from ``tests.builders`` itself. Builders use onnx and numpy only."""

from .custom_ops import (F16, F32, NP, affine_grid_model, custom_op_feeds, custom_op_model,
    fused_grid_sample_case_model, fused_grid_sample_model, plugin_node_model, plugin_node_with_graph_attr,
    plugin_node_with_tensor_attr, sized_plugin_model, twice_op_model, with_empty_size_input)
from .external_data import (STN_SAMPLE, external_tensor_names, initializer_named, move_to_external_data,
    set_external_data, stn_sample_with_external_data, weighted_warp_file, with_value_renamed, write_model)
from .graph import (CUSTOM_OPS, FLOAT, INT64, GraphBuilder, onnx_model, value_info)
from .toy_models import (SCALE_DOMAIN, relu_model, relu_neg_abs_model, relu_neg_abs_mul_sigmoid_model,
    relu_scale_chain_model, relu_scale_fanout_model, scale_node, scale_ops_model, single_op_model)
from .warp_spellings import (aten_pair, baked_base_grid, padded_row_perspective, dynamo_chains, elementwise_homogeneous, homogeneous_perspective, inverse3,
    matmul_range_grid, ms_matmul_pair, native_pair)
from .warps import (ONNX_MODE, TAMPERED_WARPS, WARP_THETA, WEIGHTED_WARP_HW, custom_affine_grid_read_twice_model,
    fused_grid_sample_node, grid_sample_model, if_warp_model, stn_pair, swap_theta_rows, warp_feeds, warp_model,
    warp_pair, weighted_warp_model, with_align_corners_flipped)
