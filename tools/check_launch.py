"""Static check of the ROS 2 launch files (launch/*.launch.py), which cannot run here: the ROS 2
`launch` and `launch_ros` packages come only with a ROS installation, not from PyPI.

For every launch file: it compiles; each `Node(package=..., executable=...)` names a package of
this repository whose Cargo.toml has that `[[bin]]` (so `colcon build` installs it where the
launch system looks, install/<pkg>/lib/<pkg>/<exe>); every parameter it passes is one the node
reads; every parameter the node reads is passed (the issue asks for "every parameter an
argument"), except the ones listed in NOT_ARGUMENTS with the reason; and every parameter passed
is a declared launch argument; every argument's default is the node's own default for that
parameter (a path argument, resolved by the launch file from its base folder, excepted), and an
argument the node cannot do without (REQUIRED) has no empty default. The parameters a node reads
and their defaults are taken from its Rust source (the `str_or`/`f64_or`/`bool_or` calls of its
parameter parsing; a constant named there is looked up in the sources). Exits 1 naming the file
and the problem."""

import ast
import pathlib
import re
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = {
    "acres_core": ROOT / "ros_pkgs/acres_core",
    "acres_vehicle_node": ROOT / "ros_pkgs/acres_vehicle_node",
    "acres_bridge": ROOT / "bridge/node",
}
# The library whose node module a node package's executable runs (its parameters are read there).
NODE_LIBRARY = {"acres_vehicle_node": ROOT / "ros_pkgs/acres_vehicle"}
# Parameters a launch file does not pass on purpose, with the reason.
NOT_ARGUMENTS = {
    # The link token never travels as a parameter: it would show in `ros2 param get` and in the
    # launch log. The bridge reads ACRES_LINK_TOKEN from the environment.
    ("acres_bridge", "token"),
    # The core node publishes /clock: it is the simulated clock and never follows one.
    ("acres_core", "use_sim_time"),
}
PARAM_CALL = re.compile(r'\b(?:str|f64|bool|u64|i64)_or\(\s*"([a-z_]+)"')
# A parameter read with its default: the kind, the name, the default's Rust text.
PARAM_DEFAULT = re.compile(r'\b(str|f64|bool|u64|i64)_or\(\s*"([a-z_]+)"\s*,\s*([^;]*?)\)\?')
CONST = re.compile(r'\bconst\s+([A-Z_]+)\s*:\s*[A-Za-z0-9]+\s*=\s*([^;]+);')
# Node parameters the node cannot do without: their launch argument is required (no default) or
# has a real default, never an empty one.
REQUIRED = {("acres_core", "scenario"), ("acres_vehicle_node", "scenario")}
# Launch arguments that are paths: the launch file resolves their defaults from its base folder
# (the package's share folder when installed, the repository otherwise), the node from its own.
PATH_ARGUMENTS = {"scenario", "maps_dir"}


def node_parameters(pkg):
    """The parameters the node of `pkg` reads, from its Rust sources."""
    sources = package_sources(pkg)
    names = set()
    # Every source of the package: only the node's code reads parameters (the libraries of
    # acres_core/acres_vehicle read none), so the whole package gives the node's set.
    for src in sources:
        names.update(PARAM_CALL.findall(src.read_text()))
    # acres_ros reads these for every node (RosNode::new).
    names.update(node_parameters_of_acres_ros())
    return names


def node_parameters_of_acres_ros():
    return set(PARAM_CALL.findall((ROOT / "ros_pkgs/acres_ros/src/node.rs").read_text()))


def package_sources(pkg):
    """The Rust sources of the node of `pkg`: its package's and its node library's."""
    folders = [PACKAGES[pkg]] + ([NODE_LIBRARY[pkg]] if pkg in NODE_LIBRARY else [])
    return [src for folder in folders for src in (folder / "src").rglob("*.rs")]


def rust_sources(pkg):
    return package_sources(pkg) + [ROOT / "ros_pkgs/acres_ros/src/node.rs"] + list(
        (ROOT / "bridge/protocol/src").rglob("*.rs"))


def node_defaults(pkg):
    """{parameter: its default as a Python value, or None when the source does not say it
    literally}, from the node's Rust sources."""
    consts = {}
    for src in rust_sources(pkg):
        for name, value in CONST.findall(src.read_text()):
            consts[name] = value.strip()
    out = {}
    for src in rust_sources(pkg):
        for kind, name, text in PARAM_DEFAULT.findall(src.read_text()):
            text = text.strip()
            m = re.fullmatch(r'f64::from\((?:[a-z_]+::)*([A-Z_]+)\)|(?:[a-z_]+::)*([A-Z_]+)', text)
            if m:
                text = consts.get(m.group(1) or m.group(2), text)
            out[name] = rust_literal(kind, text)
    return out


def rust_literal(kind, text):
    if kind == "str":
        m = re.fullmatch(r'"([^"]*)"', text)
        return m.group(1) if m else None
    if kind == "bool":
        return {"true": True, "false": False}.get(text)
    try:
        return float(text.replace("_", ""))
    except ValueError:
        return None


def same_default(launch_value, node_value):
    """Whether a launch argument's default (a string) means the node's default."""
    if isinstance(node_value, bool):
        return launch_value.lower() == str(node_value).lower()
    if isinstance(node_value, float):
        try:
            return float(launch_value) == node_value
        except ValueError:
            return False
    return launch_value == node_value


def check_defaults(pkg, exe, params, args):
    """The problem with the defaults of the arguments passed to one node, or None."""
    defaults = node_defaults(pkg)
    for p in sorted(params):
        if p not in args:
            continue
        value = args[p][0]
        if (pkg, p) in REQUIRED and value == "":
            return f"argument {p!r}: {pkg}/{exe} cannot run without it; make it required (default None), not empty"
        if value is None or p in PATH_ARGUMENTS:
            continue
        if p not in defaults or defaults[p] is None:
            return f"argument {p!r}: the default of {pkg}/{exe}'s parameter cannot be read from its source"
        if not same_default(value, defaults[p]):
            return f"argument {p!r}: default {value!r}, but {pkg}/{exe} defaults to {defaults[p]!r}"
    return None


def binaries(pkg):
    cargo = tomllib.loads((PACKAGES[pkg] / "Cargo.toml").read_text())
    return {b["name"] for b in cargo.get("bin", [])}


def literal_or_none(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def check(path):
    text = path.read_text()
    tree = ast.parse(text, filename=str(path))
    compile(tree, str(path), "exec")
    # The declared arguments: the keys of a module-level dict literal named ARGS (the house form).
    declared, args = None, {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ARGS" for t in stmt.targets):
            args = literal_or_none(stmt.value) or {}
            declared = set(args)
    if not declared:
        return "no ARGS dict of launch arguments"
    # Dict literals bound to names (e.g. `sim = {"use_sim_time": True}`), for parameters=[sim, ...].
    bound = {
        t.id: stmt.value
        for stmt in ast.walk(tree)
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Dict)
        for t in stmt.targets
        if isinstance(t, ast.Name) and t.id != "ARGS"
    }
    nodes = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Node":
            kw = {k.arg: k.value for k in call.keywords}
            pkg = literal_or_none(kw.get("package"))
            exe = literal_or_none(kw.get("executable"))
            params = set()
            for d in getattr(kw.get("parameters"), "elts", []):
                # {k: C(k) for k in (...)}, a dict literal, or a name bound to one
                if isinstance(d, ast.Name) and d.id in bound:
                    d = bound[d.id]
                if isinstance(d, ast.DictComp):
                    params.update(literal_or_none(d.generators[0].iter) or ())
                elif isinstance(d, ast.Dict):
                    params.update(literal_or_none(k) for k in d.keys)
            nodes.append((pkg, exe, params))
    if not nodes:
        return "no Node(...) in it"
    for pkg, exe, params in nodes:
        if pkg not in PACKAGES:
            return f"Node package {pkg!r} is not a node package of this repository"
        if exe not in binaries(pkg):
            return f"package {pkg} has no executable {exe!r} (its Cargo.toml [[bin]]s: {sorted(binaries(pkg))})"
        reads = node_parameters(pkg)
        unknown = params - reads
        if unknown:
            return f"{pkg}/{exe} is passed parameters it does not read: {sorted(unknown)}"
        missing = {p for p in reads - params if (pkg, p) not in NOT_ARGUMENTS}
        if missing:
            return f"{pkg}/{exe} reads parameters the launch file does not pass: {sorted(missing)}"
        undeclared = params - declared - {literal_or_none(k) for v in bound.values() for k in v.keys}
        if undeclared:
            return f"{pkg}/{exe} is passed parameters that are no launch argument: {sorted(undeclared)}"
        problem = check_defaults(pkg, exe, params, args)
        if problem:
            return problem
    used = set().union(*(p for _, _, p in nodes))
    # Arguments the file hands on as fixed values (such as use_sim_time) are not launch arguments.
    fixed = {literal_or_none(k) for v in bound.values() for k in v.keys}
    used -= fixed
    unused = declared - used
    if unused:
        return f"launch arguments no node uses: {sorted(unused)}"
    return None


def main():
    files = sorted((ROOT / "launch").glob("*.launch.py"))
    if not files:
        print("no launch files", file=sys.stderr)
        return 1
    for path in files:
        problem = check(path)
        rel = path.relative_to(ROOT)
        if problem:
            print(f"{rel}: {problem}", file=sys.stderr)
            return 1
        print(f"{rel}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
