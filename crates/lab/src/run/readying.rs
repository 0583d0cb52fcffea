//! What readying a server works on and how it fails: the request ([`Readying`]), the server a
//! run measures ([`Server`]: a sandbox of ours or the user's), and [`ReadyError`]. Both the
//! run's readying ([`crate::run::ready`]) and the dataset's ([`crate::dataset::ready`]) take
//! them.

use crate::run::ExecError;
use crate::server::placement::PlacementError;
use crate::server::restore::RestoreError;
use qpslab_core::placement::Policy;
use qpslab_core::ConnectOptions;
use qpslab_sandbox::SandboxHome;
use std::path::PathBuf;

/// What a run readies, and on what server.
pub struct Readying<'a> {
    /// The server.
    pub server: Server<'a>,
    /// The lab directory: its sandboxes (`--replica NAME`).
    pub lab: &'a SandboxHome,
    /// The restore trail, where commands record what they change on the server (the lab
    /// directory's, or a server store's: `Ledger::for_store`).
    pub ledger: &'a crate::server::restore::Ledger,
    /// Loader connections for a dataset built now (`None`: [`crate::dataset::loaders::default_loaders`]).
    pub loaders: Option<u32>,
    /// `--replica`: a sandbox of this lab or a DSN whose lag is watched while the run loads.
    pub replica: Option<&'a str>,
    /// The run's own thread placement (`--pin`).
    pub pin: &'a Policy,
    /// Where the phases' flame graphs go (`--profile`).
    pub profile: Option<PathBuf>,
    /// Makes the run's dataset present: `crate::dataset::ready::shard_dataset`, handed in by
    /// the caller because the dataset's layer sits above the run's.
    pub dataset: DatasetReadier,
}

/// Makes a run's dataset present on its server (with `loaders` connections when it is built),
/// holding the sandbox of ours it is on while the run reads it.
pub type DatasetReadier = fn(
    &Server<'_>,
    &qpslab_core::RunPlan,
    Option<u32>,
    &mut dyn crate::run::exec::Observer,
) -> Result<Option<qpslab_sandbox::SandboxUse>, ReadyError>;

/// The server a run measures.
#[derive(Clone, Copy, Debug)]
pub struct Server<'a> {
    /// How to reach it (database set).
    pub target: &'a ConnectOptions,
    /// The sandbox of ours it is; `None`: the user's server, never changed.
    pub sandbox: Option<OurSandbox<'a>>,
    /// Its process on this machine when known: a sandbox of ours, or the user's server found
    /// as the peer of its Unix socket (`run --profile`). Telemetry reads its CPU and threads,
    /// and the client's loops are placed away from them.
    pub pid: Option<u32>,
    /// The target options as typed (no password), for the `qpslab prepare` command a missing
    /// dataset on the user's server names.
    pub target_args: &'a [String],
}

/// A sandbox of ours, which a run may build datasets on and place threads of.
#[derive(Clone, Copy, Debug)]
pub struct OurSandbox<'a> {
    /// The lab directory it lives in.
    pub home: &'a SandboxHome,
    /// Its name.
    pub name: &'a str,
    /// Its server's pid.
    pub pid: Option<u32>,
    /// Started before this command (`--sandbox NAME`): its own `--pin` policy applies.
    pub named: bool,
}

/// Why a server could not be readied.
#[derive(Debug, thiserror::Error)]
pub enum ReadyError {
    /// The control connection failed.
    #[error("connecting to {target}: {source}")]
    Connect {
        /// The redacted target.
        target: String,
        /// The client's error.
        source: qpslab_wire::Error,
    },
    /// The server's variables could not be read.
    #[error("reading server variables: {0}")]
    ServerInfo(qpslab_probe::Error),
    /// A killed process left settings changed, or another is changing them now.
    #[error(transparent)]
    Restore(RestoreError),
    /// The plan needs more than the server allows (the user's to fix).
    #[error("{0}")]
    Limits(String),
    /// The sandbox could not be found or held.
    #[error(transparent)]
    Sandbox(#[from] qpslab_sandbox::Error),
    /// The dataset could not be checked or built.
    #[error(transparent)]
    Dataset(ExecError),
    /// The tables qpslab created could not be dropped (`qpslab cleanup`), or checked
    /// (`qpslab check`).
    #[error(transparent)]
    Cleanup(qpslab_engine::prepare::PrepareError),
    /// The replica's lag monitor could not start.
    #[error("{source}")]
    Replica {
        /// The replica as named.
        replica: String,
        /// Why.
        source: MonitorError,
    },
    /// Placement was asked of a server that is not a sandbox of ours.
    #[error("only a sandbox of ours has its threads placed")]
    NotOurs,
    /// The placement could not start.
    #[error(transparent)]
    Placement(PlacementError),
}

/// Why the lag monitor of a replica could not start.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The DSN does not parse.
    #[error(transparent)]
    Dsn(qpslab_core::dsn::DsnError),
    /// No such sandbox (or a bad name).
    #[error(transparent)]
    Sandbox(qpslab_sandbox::Error),
    /// The replica is the server the run loads.
    #[error("the replica is the server the run loads")]
    SameServer,
    /// The monitor could not reach or read the replica or the primary.
    #[error(transparent)]
    Start(qpslab_probe::Error),
}
