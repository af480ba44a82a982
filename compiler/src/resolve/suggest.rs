//! "Did you mean" for unknown names, at a cost that does not grow with
//! the number of unknowns. A lookup that scales with the program (types,
//! callables, declarations of a kind) builds its candidates once per unit
//! and kind, kept by length, and answers each distinct name once: renaming
//! a type used in 10,000 places used to scan every declaration 10,000
//! times (and 1M actions calling one unknown name took minutes).
//!
//! The answers are those of [`super::lookup::suggest`] over all the
//! names: `nearest` takes the smallest (distance, name), whatever the
//! order, and a name within the edit limit is within that many characters
//! of the written one's length; a swap keeps the length.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::diag::nearest;
use crate::ir::Owner;

/// The most names a suggestion is looked for among: past it (a generated
/// unit with thousands of names of one kind and length) an unknown name
/// gets no "did you mean", so that many distinct unknown names cost their
/// number, not their number times the declarations' (issue 37, D6). The
/// answer depends only on the names, never on the order bodies resolve.
pub(crate) const MAX_WINDOW: usize = 500;

/// The names one kind of lookup may suggest in a unit, by length in
/// characters, each length's names in the order they were given.
pub(crate) struct Candidates {
    /// Each name with the set of characters it holds ([`symbols`]).
    by_len: BTreeMap<usize, Vec<(String, u64)>>,
}

/// The characters a name holds, as bits (letters, digits and `_` each
/// their own; the rest share one). One edit changes at most two of them,
/// so names whose sets differ in more than twice the limit are not within
/// it: most of a generated unit's names are passed over by one XOR.
fn symbols(name: &str) -> u64 {
    name.chars().fold(0, |set, c| {
        let bit = match c {
            'a'..='z' => c as u32 - 'a' as u32,
            'A'..='Z' => 26 + (c as u32 - 'A' as u32),
            '0'..='9' => 52 + (c as u32 - '0' as u32),
            '_' => 62,
            _ => 63,
        };
        set | (1 << bit)
    })
}

impl Candidates {
    pub fn new(names: Vec<String>) -> Candidates {
        let mut by_len: BTreeMap<usize, Vec<(String, u64)>> = BTreeMap::new();
        for n in names {
            let set = symbols(&n);
            by_len.entry(n.chars().count()).or_default().push((n, set));
        }
        Candidates { by_len }
    }

    pub fn suggest(&self, written: &str) -> Option<String> {
        let w: Vec<char> = written.chars().collect();
        let limit = (w.len() / 3).max(1);
        let range = w.len().saturating_sub(limit)..=w.len() + limit;
        let size: usize = self.by_len.range(range.clone()).map(|(_, n)| n.len()).sum();
        if size > MAX_WINDOW {
            return None;
        }
        let set = symbols(written);
        let window = self
            .by_len
            .range(range)
            .flat_map(|(_, names)| names.iter())
            .filter(|(_, other)| (set ^ other).count_ones() as usize <= 2 * limit)
            .map(|(name, _)| name.as_str());
        if let Some(near) = nearest(written, window) {
            return Some(near.to_string());
        }
        let same = self.by_len.get(&w.len())?;
        same.iter()
            .map(|(name, _)| name)
            .find(|c| swapped(&w, c))
            .cloned()
    }
}

/// One swap of two neighbouring characters away (`cdoe` for `code`).
pub(crate) fn swapped(w: &[char], candidate: &str) -> bool {
    let c: Vec<char> = candidate.chars().collect();
    if c.len() != w.len() {
        return false;
    }
    let diff: Vec<usize> = (0..w.len()).filter(|i| w.get(*i) != c.get(*i)).collect();
    matches!(diff.as_slice(), [i, j] if *j == i + 1 && w.get(*i) == c.get(*j) && w.get(*j) == c.get(*i))
}

/// Which names: the code of the diagnostic that asks, the unit, and the
/// number of declarations when asked (a list built while declarations
/// are still being collected is not reused once there are more).
type ListKey = (&'static str, Owner, usize);

/// Candidate lists and answers, shared by the threads resolving bodies.
#[derive(Default)]
pub(crate) struct Memo {
    lists: Mutex<HashMap<ListKey, Arc<Candidates>>>,
    answers: Mutex<HashMap<(ListKey, String), Option<String>>>,
}

impl Memo {
    /// The suggestion for `written` among the names `names` gives (called
    /// at most once per key).
    pub fn suggest(
        &self,
        key: ListKey,
        written: &str,
        names: impl FnOnce() -> Vec<String>,
    ) -> Option<String> {
        let asked = (key, written.to_string());
        if let Some(found) = self
            .answers
            .lock()
            .ok()
            .and_then(|a| a.get(&asked).cloned())
        {
            return found;
        }
        let cached = self.lists.lock().ok().and_then(|l| l.get(&key).cloned());
        let list = match cached {
            Some(list) => list,
            None => {
                let list = Arc::new(Candidates::new(names()));
                if let Ok(mut l) = self.lists.lock() {
                    l.entry(key).or_insert_with(|| list.clone());
                }
                list
            }
        };
        let found = list.suggest(written);
        if let Ok(mut a) = self.answers.lock() {
            a.insert(asked, found.clone());
        }
        found
    }
}
