//! `provider.*`: what the app gives the packages it calls over HTTP.

pub mod missing_setting;
