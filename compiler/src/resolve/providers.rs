//! The application's `providers: { PKG: { SETTING: config.x } }` (design
//! `language.md` section 2, `server.md` section 15): the settings each
//! package's HTTP binding names, given from config entries. A missing or
//! unknown setting is an error, and a secret setting comes from a
//! `secret: true` entry.

use crate::ast::{self, SettingValue};
use crate::diag::Diagnostic;
use crate::http::{HttpProvider, BASE_URL};
use crate::ir::{self, PkgId};

use super::Builder;

impl<'a> Builder<'a> {
    /// `providers:` of the application, lowered into `prog.app.providers`.
    pub(super) fn providers_setting(&mut self, value: &SettingValue, key: ast::Ident) {
        let SettingValue::Record(items, _) = value else {
            return self.rx().report_setting_value(
                key,
                value,
                "a record such as `{ stripe: { api_key: config.stripe_key } }`",
            );
        };
        self.rx().check_setting_repeats(items.iter());
        for item in items {
            self.package_settings(item);
        }
    }

    fn package_settings(&mut self, item: &ast::Setting) {
        let name = item.key.name.as_str();
        let found = self
            .loaded_packages()
            .position(|p| p.manifest.name.node == name);
        let Some(p) = found.filter(|_| name != "ai") else {
            let cands: Vec<String> = self
                .prog
                .packages
                .iter()
                .filter(|p| p.http.is_some())
                .map(|p| p.name.as_str().to_string())
                .collect();
            return self.rx().report_unknown(
                "name.unknown_package",
                "package",
                item.key.span,
                name,
                &cands,
            );
        };
        let p = PkgId(p as u32);
        let Some(binding) = self.prog.package(p).http.clone() else {
            return self.report_no_binding(item.key, p);
        };
        let SettingValue::Record(values, _) = &item.value else {
            return self.rx().report_setting_value(
                item.key,
                &item.value,
                "a record such as `{ api_key: config.stripe_key }`",
            );
        };
        self.rx().check_setting_repeats(values.iter());
        let mut given = Vec::new();
        for v in values {
            if let Some(entry) = self.provider_value(&binding, v) {
                given.push(entry);
            }
        }
        self.prog.app.providers.push(ir::ProviderSettings {
            package: p,
            span: item.key.span,
            given,
        });
    }

    /// One `SETTING: config.x`.
    fn provider_value(
        &mut self,
        binding: &HttpProvider,
        v: &ast::Setting,
    ) -> Option<ir::ProviderSetting> {
        let name = v.key.name.as_str();
        let declared = binding.setting(name);
        if declared.is_none() && name != BASE_URL {
            let mut known: Vec<&str> = binding.settings.iter().map(|s| s.name.as_str()).collect();
            known.push(BASE_URL);
            self.rx()
                .report_unknown_key(v.key, "provider setting", &known);
            return None;
        }
        let (entry, config) = self.config_entry(v)?;
        let secret = declared.is_some_and(|s| s.secret);
        if secret && !config.secret {
            self.rx().error(
                Diagnostic::error(
                    "provider.not_secret",
                    v.value.span(),
                    format!("the provider setting `{name}` is a secret, but `config.{}` is not", entry),
                )
                .with_label("not a `secret: true` config entry")
                .with_related(config.span, "declared here without `secret: true`")
                .with_reason("a secret is redacted from every log, listing and error; a plain config entry is not")
                .with_fix("mark the config entry `secret: true`"),
            );
        }
        Some(ir::ProviderSetting {
            name: name.to_string(),
            config: entry,
            span: v.key.span,
        })
    }

    fn report_no_binding(&mut self, key: ast::Ident, p: PkgId) {
        let pkg = self.prog.package(p).clone();
        self.rx().error(
            Diagnostic::error(
                "provider.no_binding",
                key.span,
                format!("package `{}` is not called over HTTP, so it takes no provider settings", pkg.name),
            )
            .with_label("no `provider: http:` in its package.yaml")
            .with_related(pkg.manifest_span, "the package")
            .with_reason("`providers:` gives the settings a package's HTTP binding names; this package has no binding")
            .with_fix(format!("remove `{}` from `providers:`", pkg.name)),
        );
    }
}
