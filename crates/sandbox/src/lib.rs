//! Private MariaDB/MySQL server instances ("sandboxes") for the lab.
//!
//! A sandbox has its own datadir, socket, free TCP port, error log and pid file under a lab
//! directory (`~/.qpslab` by default), runs the installed `mariadbd`/`mysqld` or one from an
//! unpacked tarball, and never touches the system instance. Datadirs are copied from a
//! template initialised once per server version. The server's configuration is its stock one
//! plus the lab's needs (paths, 127.0.0.1, limits for thousands of sessions), then a my.cnf fragment,
//! then `--set` overrides.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): private server
//! instances: find binaries, template datadirs, render my.cnf, `SandboxSpec::build` (settings,
//! CPUs, allocator), start under CPU affinity / an allocator, wait until ready, stop by pid,
//! registry of what this process started, who uses a sandbox (`lock.rs`: shared or alone, by
//! `flock`); the directory of sandboxes is a `SandboxHome` (`--lab`).
//!
//! ```no_run
//! use qpslab_sandbox::{start, SandboxHome, SandboxSpec};
//! let lab = SandboxHome::default_location();
//! let mut spec = SandboxSpec::new("bench");
//! spec.settings.push(("innodb_buffer_pool_size".into(), "1G".into()));
//! spec.cpus = Some(vec![0]);
//! let sandbox = start(&lab, &spec)?;
//! println!("{} up on {}", sandbox.version(), sandbox.socket().display());
//! sandbox.stop()?; // or drop it; or `keep()` to leave it running
//! # Ok::<(), qpslab_sandbox::Error>(())
//! ```

mod binary;
pub mod config;
pub mod error;
mod failure;
mod lock;
mod notes;
mod process;
pub mod registry;
mod runas;
mod sandbox;
mod secure;
pub mod spec;
pub mod state;
mod template;
#[cfg(feature = "testing")]
pub mod testing;

pub use binary::{find_server, malloc_library, ServerBinary};
pub use error::Error;
pub use lock::{Hold, SandboxUse};
pub use notes::set_note_sink;
pub use process::log_tail_of;
pub use runas::mount_dir;
pub use sandbox::{start, Sandbox, StartTimings};
pub use secure::CLIENT_FILE;
pub use spec::{validate_name, Malloc, MyCnf, Role, SandboxHome, SandboxSpec};
pub use state::{find, list, log_tail, remove, stop_by_name, SandboxInfo};
