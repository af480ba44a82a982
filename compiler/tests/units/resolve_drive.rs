//! Moved from `src/resolve/drive.rs`.

use jadpo_compiler::load::MemLoader;

/// An app with many actions, functions and entry points, most with
/// mistakes: enough bodies that several threads share the work.
fn app(n: usize) -> MemLoader {
    let mut src = String::from(
        "failure Refused { kind: Rejected }\nfailure Gone { kind: NotFound }\n\
         type Small = Int { min: 1 max: 5 }\nevent Done { n: Small }\n",
    );
    for i in 0..n {
        src.push_str(&format!(
            "action a{i}(x: Small) fails Refused, Refused -> Int {{\n\
             \x20   var y = x + missing{i}\n\
             \x20   emit Done {{ n: 9 }}\n\
             \x20   if y > 2 {{ reject Gone }}\n\
             }}\n\
             function f{i}(x: Smal) -> Int {{\n    var z = a{i}(1)\n}}\n\
             subscriber s{i} on Done {{\n    run: a{i}(event.m)\n}}\n"
        ));
    }
    MemLoader::new()
        .with("app/jadpo.yaml", "app: many\n")
        .with("app/app.jadpo", src)
}

/// Diagnostics and lowered program, compiled on `threads` threads.
fn compiled(loader: &MemLoader, threads: usize) -> String {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
    let Ok(pool) = pool else {
        return String::from("no pool");
    };
    pool.install(|| {
        let c = jadpo_compiler::compile(loader, "app");
        let actions = c.program.map(|p| (p.actions, p.entries));
        format!("{:?}\n{:?}", c.diagnostics, actions)
    })
}

#[test]
fn same_output_whatever_the_thread_count() {
    let loader = app(300);
    let one = compiled(&loader, 1);
    assert!(one.matches("name.unknown_variable").count() >= 300);
    assert_eq!(one, compiled(&loader, 4));
    assert_eq!(one, compiled(&loader, 3));
}
