//! Moved from `src/load/registry.rs`.

use jadpo_compiler::load::registry::*;
use jadpo_compiler::load::MemLoader;

fn files() -> Vec<Entry> {
    vec![
        ("package.yaml".into(), b"package: mailer\n".to_vec()),
        ("src/mail.jadpo".into(), b"type Email = Text\n".to_vec()),
    ]
}

#[test]
fn checksum_ignores_the_order_files_are_given_in() {
    let mut reversed = files();
    reversed.reverse();
    assert_eq!(checksum(&files()), checksum(&reversed));
}

#[test]
fn checksum_sees_a_moved_byte_between_path_and_contents() {
    let a = vec![("ab".to_string(), b"c".to_vec())];
    let b = vec![("a".to_string(), b"bc".to_vec())];
    assert_ne!(checksum(&a), checksum(&b));
}

#[test]
fn verify_names_the_changed_file() {
    let mut mem = MemLoader::default();
    for (path, bytes) in files() {
        mem.insert(format!("reg/{path}"), bytes);
    }
    mem.insert("reg/checksum", checksum_file(&files()).into_bytes());
    let mut read = files();
    read.sort();
    assert_eq!(verify(&mem, "reg"), Verdict::Intact(read));
    mem.insert("reg/src/mail.jadpo", b"type Email = Int\n".to_vec());
    assert_eq!(
        verify(&mem, "reg"),
        Verdict::Mismatch {
            differing: vec!["src/mail.jadpo".into()]
        }
    );
}
