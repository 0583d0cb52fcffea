//! The dataset, in one home: made present before a run or a study's cell is measured
//! ([`check`]: built on a sandbox of ours when the filesystem has room, only checked on the
//! user's server), with the sandbox it is on held while it changes, and built, dropped or
//! checked on command: `qpslab prepare`, `cleanup`, `check tpcc` ([`ready`]); how many
//! connections load it ([`loaders`]); the commands a user runs to build or drop it on their own
//! server ([`commands`]).

pub mod check;
pub mod commands;
pub mod loaders;
pub mod ready;
