//! `qpslab advise`'s arguments.

use super::{OutputArgs, SandboxHomeArgs, TableJsonMd, TargetArgs};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Whether durability may be traded for speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DurabilityArg {
    /// Keep full crash safety: durability settings are listed with their trade-off only.
    Strict,
    /// Recommend relaxed durability (innodb_flush_log_at_trx_commit=2, sync_binlog=0).
    Relaxed,
}

/// `qpslab advise`: what to change on a server, with the figures behind each finding.
#[derive(Args, Debug)]
#[command(after_help = "\
Reads the server's version, variables and status, the InnoDB data size and, for a server on \
this host (--socket, --sandbox, a localhost target), the machine: memory, THP, swappiness, CPU \
governor, the datadir's storage and I/O scheduler. A finding never names a variable the server \
lacks; whether it needs a restart comes from the server (MariaDB's \
information_schema.SYSTEM_VARIABLES) or, for MySQL, from a small table. Counter-based findings \
need the server to have run its workload for a while (10 minutes); before that they say so. \
Nothing is changed on the server.")]
pub struct AdviseArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (then each finding's reason), json (the facts' summary and every
    /// finding) or md.
    #[command(flatten)]
    pub output: OutputArgs<TableJsonMd>,
    /// strict: durability settings are only described; relaxed: recommended.
    #[arg(long, value_enum, default_value = "strict")]
    pub durability: DurabilityArg,
    /// Write the recommended server settings to FILE as a my.cnf [mysqld] section, one comment
    /// per setting (replaced whole or not at all).
    #[arg(long, value_name = "FILE")]
    pub cnf: Option<PathBuf>,
}
