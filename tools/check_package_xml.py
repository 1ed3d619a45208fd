"""Validate every package.xml of the repository with catkin_pkg (what rosdep, bloom and colcon
read): format 3, the required tags, and each dependency well formed. For an ament_cargo package,
also check it against its Cargo.toml: the same name (cargo ament-build installs under the Cargo
name, `ros2 run` looks under the ROS one), a self-contained manifest (colcon's ament_cargo parses
it alone: no `workspace = true` anywhere), and the same dependencies on the repository's packages
(path dependencies are `<depend>`s, path dev-dependencies are `<test_depend>`s). Prints one line
per package and exits 1 on the first problem, naming the file."""

import pathlib
import sys
import tomllib

from catkin_pkg.package import InvalidPackage, parse_package

ROOT = pathlib.Path(__file__).resolve().parent.parent
SKIP = {"target", ".venv", ".ros_env", "node_modules", ".git"}


def package_files():
    for path in sorted(ROOT.rglob("package.xml")):
        if not SKIP.intersection(path.relative_to(ROOT).parts):
            yield path


def workspace_keys(table, prefix):
    """The keys of a parsed Cargo.toml that say `workspace = true`."""
    for key, value in table.items():
        if isinstance(value, dict):
            if value.get("workspace") is True:
                yield f"{prefix}{key}"
            else:
                yield from workspace_keys(value, f"{prefix}{key}.")


def cargo_problem(folder, pkg):
    cargo_file = folder / "Cargo.toml"
    if not cargo_file.is_file():
        return "build type ament_cargo but no Cargo.toml beside it"
    cargo = tomllib.loads(cargo_file.read_text())
    inherited = list(workspace_keys(cargo, ""))
    if inherited:
        return f"Cargo.toml inherits {', '.join(inherited)} from the workspace; ament_cargo parses it alone"
    if cargo["package"]["name"] != pkg.name:
        return f'Cargo package name "{cargo["package"]["name"]}" is not the ROS package name "{pkg.name}"'

    def path_deps(table):
        return {name for name, spec in cargo.get(table, {}).items() if isinstance(spec, dict) and "path" in spec}

    depends = {d.name for d in pkg.build_depends} & {d.name for d in pkg.exec_depends}
    if path_deps("dependencies") != depends:
        return f"<depend>s {sorted(depends)} differ from Cargo path dependencies {sorted(path_deps('dependencies'))}"
    test_only = {d.name for d in pkg.test_depends} - depends
    # The repository's harness is no ROS package; a dev-dependency on it is not declared.
    dev = {d for d in path_deps("dev-dependencies") if d != "acres-harness"} - depends
    if dev != test_only:
        return f"<test_depend>s {sorted(test_only)} differ from Cargo path dev-dependencies {sorted(dev)}"
    return None


def main():
    files = list(package_files())
    if not files:
        print("no package.xml found", file=sys.stderr)
        return 1
    for path in files:
        rel = path.relative_to(ROOT)
        try:
            pkg = parse_package(str(path))
            pkg.validate()
        except InvalidPackage as e:
            print(f"{rel}: invalid: {e}", file=sys.stderr)
            return 1
        if pkg.package_format != 3:
            print(f"{rel}: package format {pkg.package_format}; expected 3", file=sys.stderr)
            return 1
        if pkg.get_build_type() == "ament_cargo":
            problem = cargo_problem(path.parent, pkg)
            if problem:
                print(f"{rel}: {problem}", file=sys.stderr)
                return 1
        deps = sorted({d.name for d in pkg.build_depends + pkg.exec_depends + pkg.test_depends})
        print(f"{rel}: {pkg.name} {pkg.version} ({pkg.get_build_type()}), depends on {', '.join(deps) or 'nothing'}")
    print(f"{len(files)} package.xml files valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
