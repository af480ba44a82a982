//! Comparing two values by their `Debug` text, as the differential tests
//! do: the compact text is compared, and laid out only to show where two
//! values differ (pretty-printing every tree was most of their time).

/// `None` when `a` and `b` print the same; else the line of their laid-out
/// text where they first differ and the lines around it in each.
pub fn difference<T: std::fmt::Debug + ?Sized>(a: &T, b: &T) -> Option<(usize, String, String)> {
    if format!("{a:?}") == format!("{b:?}") {
        return None;
    }
    let (a, b) = (format!("{a:#?}"), format!("{b:#?}"));
    let at = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(0);
    let around = |t: &str| {
        t.lines()
            .skip(at.saturating_sub(12))
            .take(16)
            .collect::<Vec<_>>()
            .join("\n")
    };
    Some((at, around(&a), around(&b)))
}
