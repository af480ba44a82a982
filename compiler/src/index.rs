//! Vectors indexed by their own id type (`IndexVec<ActionId, Action>`), as
//! rustc and rust-analyzer keep theirs: an id can only index the table it
//! was made for, and no caller converts ids to `usize` by hand.

use std::fmt;
use std::marker::PhantomData;

/// An id that numbers the entries of one table.
pub trait Idx: Copy {
    fn from_usize(index: usize) -> Self;
    fn index(self) -> usize;
}

/// Implements [`Idx`] for `struct X(pub u32)` ids.
#[macro_export]
macro_rules! idx {
    ($($id:ty),* $(,)?) => {$(
        impl $crate::index::Idx for $id {
            fn from_usize(index: usize) -> Self {
                // Tables are far below 2^32 entries: the loader's limits
                // bound every file and the number of files.
                Self(u32::try_from(index).unwrap_or(u32::MAX))
            }
            fn index(self) -> usize {
                self.0 as usize
            }
        }
    )*};
}

/// A `Vec<T>` indexed by `I`. It reads as a slice (`iter`, `len`, `first`)
/// for everything that does not need the ids.
pub struct IndexVec<I, T> {
    raw: Vec<T>,
    ids: PhantomData<fn(&I)>,
}

impl<I: Idx, T> IndexVec<I, T> {
    pub fn new() -> Self {
        IndexVec {
            raw: Vec::new(),
            ids: PhantomData,
        }
    }

    /// Adds `value` and gives its id.
    pub fn push(&mut self, value: T) -> I {
        let id = I::from_usize(self.raw.len());
        self.raw.push(value);
        id
    }

    pub fn get(&self, id: I) -> Option<&T> {
        self.raw.get(id.index())
    }

    pub fn get_mut(&mut self, id: I) -> Option<&mut T> {
        self.raw.get_mut(id.index())
    }

    /// Each entry with its id, in order.
    pub fn iter_enumerated(&self) -> impl DoubleEndedIterator<Item = (I, &T)> + ExactSizeIterator {
        self.raw
            .iter()
            .enumerate()
            .map(|(i, v)| (I::from_usize(i), v))
    }

    /// The id of the first entry `matches` holds for.
    pub fn find_id(&self, matches: impl FnMut(&T) -> bool) -> Option<I> {
        self.raw.iter().position(matches).map(I::from_usize)
    }

    /// Every id, in order.
    pub fn ids(&self) -> impl DoubleEndedIterator<Item = I> + ExactSizeIterator + Clone + 'static
    where
        I: 'static,
    {
        (0..self.raw.len()).map(I::from_usize)
    }

    pub fn reserve(&mut self, additional: usize) {
        self.raw.reserve(additional);
    }

    pub fn clear(&mut self) {
        self.raw.clear();
    }

    pub fn as_slice(&self) -> &[T] {
        &self.raw
    }

    pub fn as_vec_mut(&mut self) -> &mut Vec<T> {
        &mut self.raw
    }
}

impl<I: Idx, T> Default for IndexVec<I, T> {
    fn default() -> Self {
        IndexVec::new()
    }
}

impl<I, T> From<Vec<T>> for IndexVec<I, T> {
    fn from(raw: Vec<T>) -> Self {
        IndexVec {
            raw,
            ids: PhantomData,
        }
    }
}

impl<I, T> FromIterator<T> for IndexVec<I, T> {
    fn from_iter<It: IntoIterator<Item = T>>(iter: It) -> Self {
        Vec::from_iter(iter).into()
    }
}

impl<I, T> IntoIterator for IndexVec<I, T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.into_iter()
    }
}

impl<'a, I, T> IntoIterator for &'a IndexVec<I, T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.iter()
    }
}

impl<'a, I, T> IntoIterator for &'a mut IndexVec<I, T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.raw.iter_mut()
    }
}

impl<I, T> std::ops::Deref for IndexVec<I, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.raw
    }
}

impl<I, T> std::ops::DerefMut for IndexVec<I, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.raw
    }
}

/// Indexing with an id of this table. An id is only ever made by the table
/// it indexes (or by the resolver that fills it in the same order), so it
/// is always in range; [`IndexVec::get`] is for ids from elsewhere.
#[allow(clippy::indexing_slicing)]
impl<I: Idx, T> std::ops::Index<I> for IndexVec<I, T> {
    type Output = T;
    fn index(&self, id: I) -> &T {
        &self.raw[id.index()]
    }
}

#[allow(clippy::indexing_slicing)]
impl<I: Idx, T> std::ops::IndexMut<I> for IndexVec<I, T> {
    fn index_mut(&mut self, id: I) -> &mut T {
        &mut self.raw[id.index()]
    }
}

impl<I, T: Clone> Clone for IndexVec<I, T> {
    fn clone(&self) -> Self {
        self.raw.clone().into()
    }
}

impl<I, T: fmt::Debug> fmt::Debug for IndexVec<I, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.raw.fmt(f)
    }
}

impl<I, T: PartialEq> PartialEq for IndexVec<I, T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<I, T: Eq> Eq for IndexVec<I, T> {}

impl<I, T: std::hash::Hash> std::hash::Hash for IndexVec<I, T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}
