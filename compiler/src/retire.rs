//! Freeing large values off the editor's path.

/// A value no longer needed, kept until the editor has its answer and then
/// freed on another thread: freeing a large app's tables or analysis takes
/// milliseconds, and doing it while the next one is built takes a core
/// from it.
pub struct Retired<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> Default for Retired<T> {
    fn default() -> Self {
        Retired(None)
    }
}

impl<T: Send + 'static> Retired<T> {
    /// Keeps `value` until [`Retired::free`]; one kept before it is freed
    /// now, on another thread.
    pub fn keep(&mut self, value: T) {
        if let Some(older) = self.0.replace(value) {
            rayon::spawn(move || drop(older));
        }
    }

    /// Frees, on another thread, what is kept.
    pub fn free(&mut self) {
        if let Some(value) = self.0.take() {
            rayon::spawn(move || drop(value));
        }
    }
}
