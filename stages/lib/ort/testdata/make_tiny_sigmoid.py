#!/usr/bin/python3
"""Writes tiny_sigmoid.onnx and tiny_sigmoid.json next to this script.

The model is y = sigmoid(x @ w), x: float32 [N, 10], w: float32 [10, 1] (an
initializer), y: float32 [N, 1]; IR version 8, opset 17, which onnxruntime
1.24 accepts. The weights are dyadic fractions so that they are exact in
float32 and in JSON, and the Go test can recompute the output from the JSON
alone. Run with Debian's interpreter (apt-get install -y python3-onnx):

    /usr/bin/python3 stages/ort/testdata/make_tiny_sigmoid.py
"""

import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))

# Mixed signs and magnitudes so that a transposed or reordered weight vector
# gives a visibly different output.
WEIGHTS = [0.5, -0.25, 0.125, 1.0, -0.75, 0.0625, -1.5, 0.375, 2.0, -0.03125]


def main():
    w = np.array(WEIGHTS, dtype=np.float32).reshape(10, 1)
    graph = helper.make_graph(
        nodes=[
            helper.make_node("MatMul", ["x", "w"], ["logit"]),
            helper.make_node("Sigmoid", ["logit"], ["y"]),
        ],
        name="tiny_sigmoid",
        inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 10])],
        outputs=[helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 1])],
        initializer=[helper.make_tensor("w", TensorProto.FLOAT, [10, 1], w.flatten().tolist())],
    )
    model = helper.make_model(
        graph,
        producer_name="mlsched stages/ort testdata",
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(HERE, "tiny_sigmoid.onnx"))
    with open(os.path.join(HERE, "tiny_sigmoid.json"), "w") as f:
        json.dump({"input": "x", "output": "y", "features": 10, "weights": WEIGHTS}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
