//! Moved from `src/index.rs`.

use jadpo_compiler::index::*;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Id(u32);
jadpo_compiler::idx!(Id);

#[test]
fn ids_index_the_entries_they_were_pushed_as() {
    let mut v: IndexVec<Id, &str> = IndexVec::new();
    let a = v.push("a");
    let b = v.push("b");
    assert_eq!((a, b), (Id(0), Id(1)));
    assert_eq!((v[a], v[b]), ("a", "b"));
    assert_eq!(v.get(Id(2)), None);
    let listed: Vec<(Id, &&str)> = v.iter_enumerated().collect();
    assert_eq!(listed, [(Id(0), &"a"), (Id(1), &"b")]);
    assert_eq!(v.ids().collect::<Vec<_>>(), [Id(0), Id(1)]);
}
