#!/usr/bin/env python3
"""Trains a learned skill's policy and writes it as ONNX (docs/learned-skills.md, "How to train").

The policy is a small network (observation -> 32 tanh -> [speed m/s, yaw rate rad/s]) fitted
with numpy (full-batch Adam, seeded) to the built-in follower's commands on recorded drives:
the CSV that `cargo run -p acres_vehicle --example skill_data` prints (one row per control
step: the skill's observation vector, then cmd_speed_mps, cmd_yaw_rate_rps). The input
normalisation is folded into the first layer, so the ONNX model reads the raw observation.
Exported with the PyPI `onnx` package (opset 13: MatMul, Add, Tanh), which RTen runs.

    python3 tools/train_skill.py train data.csv scenarios/learned/edge_pass/policy.onnx
    python3 tools/train_skill.py fixture constant 1.0 0.0 5 out.onnx   # a fixed command
    python3 tools/train_skill.py fixture nan 5 out.onnx                # NaN commands

`train` also writes `policy_check.json` beside the model: a few observations and the numpy
network's outputs, which the Rust tests compare with RTen's (to 1e-5).

Needs numpy and onnx (pinned in tools/requirements-train.txt); no torch.
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN = 32
STEPS = 4000
MAX_ROWS = 40000
SEED = 21
OPSET = 13
IR_VERSION = 8


def load_csv(path):
    with open(path, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64)
    n_obs = len(header) - 2
    return header[:n_obs], data[:, :n_obs], data[:, n_obs:]


def forward(params, x):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    return h @ w2 + b2, h


def fit(x, y):
    """Full-batch Adam on the mean squared error of standardised inputs and outputs."""
    rng = np.random.default_rng(SEED)
    mu, sd = x.mean(0), x.std(0) + 1e-6
    y_sd = y.std(0) + 1e-6
    xs, ys = (x - mu) / sd, y / y_sd
    n = x.shape[1]
    params = [
        rng.normal(0, 1 / np.sqrt(n), (n, HIDDEN)),
        np.zeros(HIDDEN),
        rng.normal(0, 1 / np.sqrt(HIDDEN), (HIDDEN, 2)),
        np.zeros(2),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, b1c, b2c = 1e-2, 0.9, 0.999
    for t in range(1, STEPS + 1):
        out, h = forward(params, xs)
        err = (out - ys) * (2 / len(xs))
        g_w2, g_b2 = h.T @ err, err.sum(0)
        dh = (err @ params[2].T) * (1 - h * h)
        g_w1, g_b1 = xs.T @ dh, dh.sum(0)
        for i, g in enumerate([g_w1, g_b1, g_w2, g_b2]):
            m[i] = b1c * m[i] + (1 - b1c) * g
            v[i] = b2c * v[i] + (1 - b2c) * g * g
            mh, vh = m[i] / (1 - b1c**t), v[i] / (1 - b2c**t)
            params[i] -= lr * mh / (np.sqrt(vh) + 1e-8)
        if t % 1000 == 0:
            mse = np.mean((forward(params, xs)[0] - ys) ** 2)
            print(f"step {t}: mse (standardised) {mse:.6f}", file=sys.stderr)
    w1, b1, w2, b2 = params
    # Fold the standardisation into the weights: the model reads raw observations.
    w1f = w1 / sd[:, None]
    b1f = b1 - (mu / sd) @ w1
    return [w1f, b1f, w2 * y_sd, b2 * y_sd]


def mlp_model(params, names):
    w1, b1, w2, b2 = (p.astype(np.float32) for p in params)
    n = w1.shape[0]
    inits = [
        numpy_helper.from_array(w1, "w1"),
        numpy_helper.from_array(b1, "b1"),
        numpy_helper.from_array(w2, "w2"),
        numpy_helper.from_array(b2, "b2"),
    ]
    nodes = [
        helper.make_node("MatMul", ["obs", "w1"], ["h0"]),
        helper.make_node("Add", ["h0", "b1"], ["h1"]),
        helper.make_node("Tanh", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "w2"], ["c0"]),
        helper.make_node("Add", ["c0", "b2"], ["cmd"]),
    ]
    return graph_model(nodes, inits, n, "observation: " + ", ".join(names))


def graph_model(nodes, inits, n, doc):
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, n])],
        [helper.make_tensor_value_info("cmd", TensorProto.FLOAT, [1, 2])],
        initializer=inits,
        doc_string=doc,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="acres train_skill.py")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def constant_model(speed, yaw, n):
    """A policy that commands (speed, yaw) whatever it observes: obs @ 0 + [speed, yaw]."""
    inits = [
        numpy_helper.from_array(np.zeros((n, 2), np.float32), "w"),
        numpy_helper.from_array(np.array([speed, yaw], np.float32), "b"),
    ]
    nodes = [helper.make_node("MatMul", ["obs", "w"], ["c0"]), helper.make_node("Add", ["c0", "b"], ["cmd"])]
    return graph_model(nodes, inits, n, f"constant command ({speed}, {yaw})")


def train(csv, out):
    names, x, y = load_csv(csv)
    print(f"{len(x)} rows, observation {names}", file=sys.stderr)
    if len(x) > MAX_ROWS:
        keep = np.sort(np.random.default_rng(SEED).choice(len(x), size=MAX_ROWS, replace=False))
        x, y = x[keep], y[keep]
    params = fit(x, y)
    out = Path(out)
    onnx.save(mlp_model(params, names), out)
    rng = np.random.default_rng(SEED)
    picks = rng.choice(len(x), size=8, replace=False)
    obs = x[picks].astype(np.float32)
    p32 = [p.astype(np.float32) for p in params]
    cmd = forward(p32, obs)[0]
    rmse = np.sqrt(np.mean((forward(params, x)[0] - y) ** 2, axis=0))
    check = {"observation": names, "inputs": obs.tolist(), "outputs": cmd.astype(np.float64).tolist(),
             "rmse": {"speed_mps": float(rmse[0]), "yaw_rate_rps": float(rmse[1])}}
    (out.parent / "policy_check.json").write_text(json.dumps(check, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}; fit RMSE speed {rmse[0]:.4f} m/s, yaw rate {rmse[1]:.4f} rad/s", file=sys.stderr)


def main(argv):
    if len(argv) == 3 and argv[0] == "train":
        train(argv[1], argv[2])
    elif len(argv) == 6 and argv[:2] == ["fixture", "constant"]:
        onnx.save(constant_model(float(argv[2]), float(argv[3]), int(argv[4])), argv[5])
    elif len(argv) == 4 and argv[:2] == ["fixture", "nan"]:
        onnx.save(constant_model(float("nan"), float("nan"), int(argv[2])), argv[3])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
