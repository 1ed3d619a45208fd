//! The `acres-harness` binary.

fn main() {}
