//! A lone sandbox's start and stop (`qpslab server start|stop`): the sandbox started, its
//! threads placed by its policy, attached as a replica when asked; stopped (or removed) with
//! the replicas it leaves running.

use crate::server::placement::{self, PlacementError};
use crate::server::replica::{self, ReplicaError};
use qpslab_core::fault::{Blame, Fault};
use qpslab_core::placement::{Applied, Policy};
use qpslab_probe::replica::ReplicaStatus;
use qpslab_sandbox::{Role, SandboxHome, SandboxInfo, SandboxSpec};

/// What `server start` asks for: the sandbox's spec (its `pin` policy included) and its role.
#[derive(Debug, Clone)]
pub struct StartRequest {
    /// The sandbox to start.
    pub spec: SandboxSpec,
    /// Start it as a primary (it writes a binary log).
    pub primary: bool,
    /// Make it replicate from this running sandbox.
    pub replica_of: Option<String>,
}

/// A started sandbox, kept running.
#[derive(Debug, Clone)]
pub struct Started {
    /// The running sandbox.
    pub info: SandboxInfo,
    /// Its replication state once attached, for a replica.
    pub replication: Option<ReplicaStatus>,
}

/// A stopped (or removed) sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    /// Whether its files were removed too.
    pub removed: bool,
    /// The running sandboxes that replicate from it (they keep running).
    pub replicas: Vec<String>,
}

/// Why a sandbox did not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// `--replica-of` names the sandbox itself.
    #[error("sandbox '{0}' cannot replicate from itself: --replica-of names another sandbox")]
    SelfReplica(String),
    /// The primary named by `--replica-of` is not running.
    #[error("--replica-of {of}")]
    Primary {
        /// The primary's name.
        of: String,
        /// Why it was not found.
        #[source]
        source: qpslab_sandbox::Error,
    },
    /// The sandbox did not start.
    #[error(transparent)]
    Sandbox(#[from] qpslab_sandbox::Error),
    /// The connection to apply its policy failed (the sandbox was stopped).
    #[error("connecting to apply --pin")]
    Pin(#[source] qpslab_wire::Error),
    /// Its policy could not be applied (the sandbox was stopped).
    #[error(transparent)]
    Placement(PlacementError),
    /// Replication could not be set up (the sandbox was stopped).
    #[error(transparent)]
    Replica(#[from] ReplicaError),
}

/// A failed connection is said in the words of `server start --pin`.
impl From<PlacementError> for ServerError {
    fn from(e: PlacementError) -> ServerError {
        match e {
            PlacementError::Connect { source, .. } => ServerError::Pin(source),
            e => ServerError::Placement(e),
        }
    }
}

impl Blame for ServerError {
    /// A sandbox replicating from itself is the user's mistake; the rest say it themselves.
    fn fault(&self) -> Fault {
        match self {
            ServerError::SelfReplica(_) => Fault::User,
            ServerError::Primary { source, .. } | ServerError::Sandbox(source) => source.fault(),
            // The client's error decides (nothing listening there is the user's).
            ServerError::Pin(e) => e.fault(),
            ServerError::Placement(e) => e.fault(),
            ServerError::Replica(e) => e.fault(),
        }
    }
}

/// Starts the sandbox of `req` in `home`: checks the primary of a replica first, places the
/// sandbox's threads by its policy (`placed` is told what each rule placed), attaches it to
/// its primary, and keeps it running. On a failure after it started, the sandbox is stopped.
pub fn start_server(
    home: &SandboxHome,
    req: StartRequest,
    placed: &mut dyn FnMut(&Policy, &Applied),
) -> Result<Started, ServerError> {
    let mut spec = req.spec;
    if req.primary {
        spec.role = Role::Primary;
    }
    let primary = match &req.replica_of {
        None => None,
        Some(of) if *of == spec.name => return Err(ServerError::SelfReplica(of.clone())),
        Some(of) => {
            let p = qpslab_sandbox::find(home, of).map_err(|source| ServerError::Primary {
                of: of.clone(),
                source,
            })?;
            replica::check_primary(&p)?;
            spec.role = Role::Replica { of: of.clone() };
            Some(p)
        }
    };
    let sandbox = qpslab_sandbox::start(home, &spec)?;
    if !spec.pin.is_empty() {
        // On failure the sandbox is dropped, which stops it.
        let applied = placement::apply_once(sandbox.pid(), &sandbox.connect_options(), &spec.pin)?;
        placed(&spec.pin, &applied);
    }
    let replication = match &primary {
        Some(p) => Some(replica::attach(
            p,
            sandbox.name(),
            &sandbox.connect_options(),
        )?),
        None => None,
    };
    Ok(Started {
        info: sandbox.keep(),
        replication,
    })
}

/// Stops the sandbox `name` of `home` (and removes its files with `remove`), and names the
/// replicas it leaves running.
pub fn stop_server(
    home: &SandboxHome,
    name: &str,
    remove: bool,
) -> Result<Stopped, qpslab_sandbox::Error> {
    if remove {
        qpslab_sandbox::remove(home, name)?;
    } else {
        qpslab_sandbox::stop_by_name(home, name)?;
    }
    Ok(Stopped {
        removed: remove,
        replicas: replica::replicas_of(home, name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_failed_connection_for_pin_says_so_and_is_judged_by_the_client() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let e = ServerError::from(PlacementError::Connect {
            target: "root@127.0.0.1:1".into(),
            source: qpslab_wire::Error::Io(refused),
        });
        assert_eq!(e.to_string(), "connecting to apply --pin");
        assert!(e.source().is_some_and(|s| s.is::<qpslab_wire::Error>()));
        assert_eq!(e.fault(), Fault::User);
    }
}
