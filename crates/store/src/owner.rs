//! The process that writes a run, so a run left `running` by a process that is gone can be
//! told from one still being measured.

/// The process that writes a run, as `/proc` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    pub pid: u32,
    pub boot_id: Option<String>,
    /// Start time since boot in clock ticks (field 22 of `/proc/PID/stat`): tells a reused pid.
    pub started: Option<u64>,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            boot_id: boot_id(),
            started: start_ticks(pid),
        }
    }

    /// Whether the process that wrote a run still exists. Only a positive proof of death (another
    /// boot, no such pid, a pid reused by a later process, a zombie) says no.
    pub fn alive(&self) -> bool {
        if let (Some(then), Some(now)) = (&self.boot_id, boot_id()) {
            if *then != now {
                return false;
            }
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else {
            return false;
        };
        let fields = stat_fields(&stat);
        if fields.first() == Some(&"Z") {
            return false;
        }
        match (
            self.started,
            fields.get(19).and_then(|s| s.parse::<u64>().ok()),
        ) {
            (Some(then), Some(now)) => then == now,
            _ => true,
        }
    }
}

impl Owner {
    /// Whether the owner runs on this machine (the same boot; an owner recorded without a
    /// boot id counts as here, as stores before boot ids were kept were files).
    pub fn on_this_host(&self) -> bool {
        self.boot_id.is_none() || self.boot_id == boot_id()
    }

    /// Whether the owner is this process (the same pid on this machine).
    pub fn is_me(&self) -> bool {
        self.pid == std::process::id() && self.on_this_host()
    }
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces and parens).
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rfind(')')
        .map_or(Vec::new(), |i| stat[i + 1..].split_whitespace().collect())
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat).get(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_or_another_boot_is_not() {
        let me = Owner::me();
        assert!(me.boot_id.is_some() && me.started.is_some(), "{me:?}");
        assert!(me.alive());
        let reused = Owner {
            started: me.started.map(|t| t + 1),
            ..me.clone()
        };
        assert!(!reused.alive());
        let other_boot = Owner {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        assert!(!other_boot.alive());
        // A child that has exited and been waited for no longer exists.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = Owner {
            pid,
            boot_id: me.boot_id.clone(),
            started: None,
        };
        assert!(!gone.alive());
    }

    #[test]
    fn stat_fields_survive_spaces_and_parens_in_the_name() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 777 0";
        let f = stat_fields(stat);
        assert_eq!(f[0], "S");
        assert_eq!(f[19], "777");
    }
}
