//! The corpus generator: a realistic app of a requested number of lines,
//! the same bytes for the same seed. Modules of 300 to 500 lines, 100 per
//! folder, built from the group templates in [`templates`], plus two local
//! packages (`ledger` with keys, `notify` without) under `packages/`.

pub mod templates;

use crate::rng::Rng;
use std::path::Path;

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Lines wanted in all written files together (reached or just passed).
    pub lines: usize,
    pub seed: u64,
}

/// A generated app: relative paths and their text.
pub struct Corpus {
    pub files: Vec<(String, String)>,
}

impl Corpus {
    pub fn lines(&self) -> usize {
        self.files.iter().map(|(_, text)| count_lines(text)).sum()
    }

    pub fn bytes(&self) -> usize {
        self.files.iter().map(|(_, text)| text.len()).sum()
    }

    /// Writes every file under `dir` (which should not hold an older corpus).
    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        for (path, text) in &self.files {
            let full = dir.join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(full, text)?;
        }
        Ok(())
    }
}

pub fn count_lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count()
}

/// Generates an app of about `options.lines` lines.
pub fn generate(options: Options) -> Corpus {
    let mut rng = Rng::new(options.seed);
    let mut files: Vec<(String, String)> = vec![
        ("jadpo.yaml".into(), templates::JADPO_YAML.into()),
        ("src/app.jadpo".into(), templates::APP.into()),
        (
            "packages/ledger/package.yaml".into(),
            templates::LEDGER_YAML.into(),
        ),
        (
            "packages/ledger/ledger.jadpo".into(),
            templates::LEDGER.into(),
        ),
        (
            "packages/notify/package.yaml".into(),
            templates::NOTIFY_YAML.into(),
        ),
        (
            "packages/notify/notify.jadpo".into(),
            templates::NOTIFY.into(),
        ),
    ];
    let mut total: usize = files.iter().map(|(_, t)| count_lines(t)).sum();
    let mut module = 0usize;
    while total < options.lines {
        let want = rng.range(300, 500) as usize;
        let text = module_text(&mut rng, module, want);
        total += count_lines(&text);
        let path = format!("src/region_{:03}/orders_{module:05}.jadpo", module / 100);
        files.push((path, text));
        module += 1;
    }
    Corpus { files }
}

/// One module of at least `want` lines: the header, then groups.
fn module_text(rng: &mut Rng, module: usize, want: usize) -> String {
    let k = module.to_string();
    let mut text = fill(templates::HEADER, &[("{K}", &k)]);
    let mut group = 0usize;
    while count_lines(&text) < want {
        let template = pick_group(rng);
        let chained = templates::CHAINED
            .iter()
            .find(|(_, before)| *before == template)
            .filter(|_| rng.below(2) == 0);
        text.push_str(&group_text(rng, template, &k, group));
        if let Some((chain, _)) = chained {
            text.push_str(&group_text(rng, chain, &k, group));
        }
        group += 1;
    }
    text
}

fn pick_group(rng: &mut Rng) -> &'static str {
    let total: u64 = templates::GROUPS.iter().map(|(_, w)| w).sum();
    let mut at = rng.below(total);
    for (template, weight) in templates::GROUPS {
        if at < *weight {
            return template;
        }
        at -= weight;
    }
    templates::GROUPS[0].0
}

/// One group with its small numbers picked: loop bounds, thresholds,
/// queues and priorities, each within what the rules accept.
fn group_text(rng: &mut Rng, template: &str, k: &str, group: usize) -> String {
    let n = rng.range(2, 8);
    let values = [
        ("{I}", group.to_string()),
        ("{N}", n.to_string()),
        ("{D}", (n * 10 + 20).to_string()),
        ("{A}", rng.range(2, 900).to_string()),
        ("{B}", rng.range(10, 1000).to_string()),
        ("{C}", rng.range(100, 900).to_string()),
        ("{L}", rng.range(50, 950).to_string()),
        ("{M}", rng.range(1, 1000).to_string()),
        ("{P}", rng.range(1, 4).to_string()),
        ("{H}", rng.pick(&[1u64, 6, 12, 24]).to_string()),
        ("{Q}", rng.pick(&QUEUES).to_string()),
        ("{K}", k.to_string()),
    ];
    let pairs: Vec<(&str, &str)> = values.iter().map(|(p, v)| (*p, v.as_str())).collect();
    fill(template, &pairs)
}

const QUEUES: [&str; 5] = ["billing", "orders", "dunning", "regions", "audit"];

/// Replaces each placeholder by its value.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (placeholder, value) in values {
        if out.contains(placeholder) {
            out = out.replace(placeholder, value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes() {
        let a = generate(Options {
            lines: 3000,
            seed: 7,
        });
        let b = generate(Options {
            lines: 3000,
            seed: 7,
        });
        assert_eq!(a.files, b.files);
        assert!(a.lines() >= 3000);
    }

    #[test]
    fn different_seeds_differ() {
        let a = generate(Options {
            lines: 3000,
            seed: 1,
        });
        let b = generate(Options {
            lines: 3000,
            seed: 2,
        });
        assert_ne!(a.files, b.files);
    }
}
