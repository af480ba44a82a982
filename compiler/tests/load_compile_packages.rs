//! The bundled first-party packages and the standard library go through the
//! whole front end (parse and resolve) without a diagnostic.

use crate::load_support;

use jadpo_compiler::compile;
use load_support::*;

#[test]
fn first_party_packages_compile_cleanly() {
    let mem = MemLoader::new()
        .with(
            "app/jadpo.yaml",
            "app: shop\npackages:\n  stripe: \"3\"\n  adyen: \"1\"\n  paypal: \"2\"\n  github: \"1\"\n  twilio: \"1\"\n  postmark: \"1\"\n",
        )
        .with("app/app.jadpo", "type Note = Text { max_length: 10 }\n");
    let compiled = compile(&mem, "app");
    assert_eq!(
        render(&compiled.files, &compiled.diagnostics),
        "(no diagnostics)\n"
    );
}
