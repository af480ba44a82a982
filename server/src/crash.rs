//! The crash hook of the real crash matrix (design section 25): a build
//! with the `crash-hooks` feature reads `JADPO_CRASH_AT=action:step:point`
//! (`point` one of `before_send`, `after_send_before_record`,
//! `after_record`) and kills itself with SIGKILL there, the first time an
//! attempt of that action reaches it. Without the feature the variable is
//! ignored and nothing here can stop the process.

use jadpo_plan::Point;
use jadpo_runtime::CrashAt;

/// The crash point for an attempt of `action`, when the hook is built in
/// and the variable names it.
pub fn point_for(action: &str) -> Option<CrashAt> {
    if !cfg!(feature = "crash-hooks") {
        return None;
    }
    let spec = std::env::var("JADPO_CRASH_AT").ok()?;
    let (at, crash) = parse(&spec)?;
    (at == action).then_some(crash)
}

/// `subscribe:2:after_send_before_record`
pub fn parse(spec: &str) -> Option<(String, CrashAt)> {
    let mut parts = spec.rsplitn(3, ':');
    let point = parts.next()?;
    let step: u32 = parts.next()?.parse().ok()?;
    let action = parts.next()?.to_string();
    let point = Point::ALL.into_iter().find(|p| p.as_str() == point)?;
    Some((action, CrashAt { step, point }))
}

/// Whether the hook names the point between an app's two stores
/// (`JADPO_CRASH_AT=between_stores`): after a delivery's commit landed in
/// its action's record store, before its row in its home store is
/// completed (design section 14.5).
pub fn between_stores() -> bool {
    cfg!(feature = "crash-hooks")
        && std::env::var("JADPO_CRASH_AT").is_ok_and(|v| v == "between_stores")
}

/// Dies as a crash does: no destructor runs, nothing is flushed.
pub fn die() -> ! {
    #[cfg(all(unix, feature = "crash-hooks"))]
    {
        // SAFETY: kill(2) with our own pid and SIGKILL; it does not return.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_point_reads_as_action_step_point() {
        let (action, at) = parse("subscribe:2:after_send_before_record").expect("a point");
        assert_eq!(action, "subscribe");
        assert_eq!(at.step, 2);
        assert_eq!(at.point, Point::AfterSendBeforeRecord);
        assert!(parse("subscribe:x:before_send").is_none());
        assert!(parse("subscribe:1:sometime").is_none());
        // An inline route action's name has spaces and slashes, no colon.
        let (action, _) = parse("route POST /x:1:before_send").expect("a point");
        assert_eq!(action, "route POST /x");
    }
}
