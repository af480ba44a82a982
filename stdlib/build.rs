//! Rebuilds the crate when the embedded folders change: `include_dir!` does
//! not tell cargo which files it read.

fn main() {
    println!("cargo:rerun-if-changed=lib");
    println!("cargo:rerun-if-changed=../packages");
}
