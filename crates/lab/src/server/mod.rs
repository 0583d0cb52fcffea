//! A server's state around what qpslab does to it: [`restore`] records its settings before a
//! command changes them, so that what a killed process left changed is found and put back;
//! [`control`] is the control connection of commands that change settings; [`placement`] pins
//! its threads to CPUs; [`replica`] sets up replication between two sandboxes; [`lone`]
//! starts (placed, attached as a replica) and stops a lone sandbox for `qpslab server
//! start|stop`.

pub mod control;
pub mod lone;
pub mod placement;
pub mod replica;
pub mod restore;

pub use lone::{start_server, stop_server, ServerError, StartRequest, Started, Stopped};
