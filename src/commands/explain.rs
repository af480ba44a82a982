//! `jadpo explain CODE`: a diagnostic code's documentation, or with
//! `--list` every code.

use super::say;
use crate::cli::ExplainArgs;

pub fn explain(args: &ExplainArgs) -> u8 {
    let Some(code) = args.code.as_deref().filter(|_| !args.list) else {
        say(&crate::check::code_list());
        return 0;
    };
    match explanation(code) {
        Ok(text) => {
            say(&text);
            0
        }
        Err(why) => {
            eprintln!("{why}");
            2
        }
    }
}

/// The page `jadpo explain` prints for `code`, or the error naming the
/// nearest documented code.
fn explanation(code: &str) -> Result<String, String> {
    if let Some(rule) = crate::check::rule_doc(code) {
        let fix = jadpo_checker::registry::fix_note(rule.code);
        return Ok(format!("{}\n\n{fix}\n", rule.doc.trim_end()));
    }
    let codes = crate::check::rule_codes();
    Err(match jadpo_compiler::diag::nearest(code, codes.iter().copied()) {
        Some(near) => {
            format!("error: `{code}` is not a documented diagnostic code; did you mean `{near}`?")
        }
        None => format!(
            "error: `{code}` is not a documented diagnostic code; `jadpo explain --list` lists them all"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_code_has_a_page() {
        for code in crate::check::rule_codes() {
            let page = explanation(code).expect("a page");
            assert!(page.ends_with('\n'), "{code}");
        }
    }

    #[test]
    fn a_misspelled_code_names_the_nearest() {
        let why = explanation("name.unknown_actoin").expect_err("not a code");
        assert!(why.contains("did you mean `name.unknown_action`?"), "{why}");
        let far = explanation("zzzzzzzzzzzzzzzzzzzz").expect_err("not a code");
        assert!(far.contains("jadpo explain --list"), "{far}");
    }
}
