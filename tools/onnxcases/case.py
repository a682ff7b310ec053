"""One single-node case in ONNX's backend-test layout: model.onnx and
test_data_set_0/{input,output}_N.pb, for the generators beside this file."""
import os

from onnx import TensorProto, helper, numpy_helper

ELEM = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE,
        "bool": TensorProto.BOOL, "int64": TensorProto.INT64, "int32": TensorProto.INT32,
        "uint64": TensorProto.UINT64}


def write_case(root, name, op, inputs, outputs, attrs, opset):
    """inputs: [(name, array or None for an omitted input)]; outputs: [(name, expected array or
    None for an output not asked for)]."""
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    node = helper.make_node(op, [n if a is not None else "" for n, a in inputs],
                            [n if a is not None else "" for n, a in outputs], **attrs)
    given = [(n, a) for n, a in inputs if a is not None]
    wanted = [(n, a) for n, a in outputs if a is not None]
    info = lambda n, a: helper.make_tensor_value_info(n, ELEM[a.dtype.name], a.shape)
    graph = helper.make_graph([node], name, [info(n, a) for n, a in given], [info(n, a) for n, a in wanted])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, items in (("input", given), ("output", wanted)):
        for k, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
