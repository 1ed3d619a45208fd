//! Links libpython3.11 into this package's executables (its tests): librcl loads
//! `*_rosidl_generator_py.so` type-support libraries that need libpython's symbols, and the PyPI
//! wheels link none (docs/ros.md). `--no-as-needed` keeps the link although no Rust code calls it.

fn main() {
    println!("cargo:rustc-link-arg=-Wl,--push-state,--no-as-needed,-lpython3.11,--pop-state");
    println!("cargo:rerun-if-changed=build.rs");
}
