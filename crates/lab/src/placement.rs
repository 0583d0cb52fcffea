//! A study setup's thread placement, `pin = { "thread/innodb/page_cleaner_thread" = "1" }`:
//! the policy read from the spec (so placement is a factor like any setting), kept with the
//! setup's sandbox and re-applied every second while its cells run.

use crate::spec::Setup;
use qpslab_core::placement::Policy;
use qpslab_core::ConnectOptions;
use qpslab_probe::threads::Keeper;
use qpslab_sandbox::SandboxSpec;

/// Gives a setup's sandbox its policy (and performance_schema, which the policy needs).
pub fn configure(spec: &mut SandboxSpec, s: &Setup) -> Result<(), String> {
    spec.set_pin(s.pin_policy()?).map_err(|e| e.to_string())
}

/// Starts keeping the sandbox's policy on its server, if it has one.
pub fn keep(
    spec: &Policy,
    pid: Option<u32>,
    opts: &ConnectOptions,
) -> Result<Option<Keeper>, String> {
    let Some(pid) = pid.filter(|_| !spec.is_empty()) else {
        return Ok(None);
    };
    Keeper::start(pid, opts, spec)
        .map(Some)
        .map_err(|e| format!("placing threads (pin): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_pin_table_becomes_the_sandbox_policy() {
        let spec = crate::spec::parse(
            "t.toml",
            "name = \"p\"\n[[variant]]\nname = \"split\"\npin = { \"thread/innodb/page_cleaner_thread\" = \"0\" }\n",
        )
        .unwrap();
        let mut sb = SandboxSpec::new("x");
        configure(&mut sb, &spec.variant[0]).unwrap();
        assert_eq!(sb.pin.rules[0].class, "thread/innodb/page_cleaner_thread");
        assert!(sb
            .settings
            .contains(&("performance_schema".into(), "ON".into())));
        let bad = crate::spec::parse(
            "t.toml",
            "name = \"p\"\n[[variant]]\nname = \"a\"\npin = { \"page_cleaner\" = \"0\" }\n",
        )
        .unwrap_err();
        assert!(bad.to_string().contains("pin 'page_cleaner=0'"), "{bad}");
    }
}
