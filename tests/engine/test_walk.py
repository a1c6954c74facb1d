"""surgeon.BackWalk: each value once (never an absent input), in the order the caller pushes
them, nodes kept once and given back in graph order; the caller decides where it stops."""

from onnx import TensorProto, helper

import surgeon
from surgeon.graph import GraphIndex


def _index():
    """x -> Split -> (a, b); c = Add(b, a); d = Mul(c, a); e = Resize(d, "", "", sizes) (empty inputs)."""
    nodes = [helper.make_node("Split", ["x"], ["a", "b"], name="split", axis=0, num_outputs=2),
             helper.make_node("Add", ["b", "a"], ["c"], name="add"),
             helper.make_node("Mul", ["c", "a"], ["d"], name="mul"),
             helper.make_node("Resize", ["d", "", "", "sizes"], ["e"], name="resize")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                                           helper.make_tensor_value_info("sizes", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    return GraphIndex(graph)


def test_every_value_once_last_pushed_first_and_nodes_in_graph_order():
    index, visited = _index(), []
    walk = surgeon.BackWalk(["e"])
    for value in walk:
        visited.append(value)
        node = index.find_producer(value)
        if node is not None:
            walk.take(node)
            walk.into(node.inputs)
    # a stack: a node's last input first; "a" is reached three times and visited once; "" never
    assert visited == ["e", "sizes", "d", "a", "x", "c", "b"]
    assert [n.name for n in walk.nodes()] == ["split", "add", "mul", "resize"] and walk.taken == 4


def test_take_says_whether_a_node_is_new_and_the_caller_decides_where_to_stop():
    index = _index()
    walk, leaves, first_takes = surgeon.BackWalk(["c"]), [], []
    for value in walk:
        node = index.find_producer(value)
        if node is None or node.op_type == "Split":  # stop at the Split's outputs
            leaves.append(value)
            continue
        first_takes.append(walk.take(node))
        walk.into(node.inputs)
    assert leaves == ["a", "b"] and first_takes == [True]
    split = index.find_producer("a")
    assert walk.take(split) is True and walk.take(index.find_producer("b")) is False  # one node, two outputs
