//! `effect.*`: where outside calls may be made (loops, after writes, recursion).

pub mod call_after_write;
pub mod call_in_loop;
pub mod recursion;
