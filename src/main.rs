//! The `jadpo` command line.

fn main() {
    println!("jadpo");
}
