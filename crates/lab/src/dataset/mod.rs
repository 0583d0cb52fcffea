//! The dataset, in one home: the commands a user runs to build or drop it on their own server
//! ([`commands`]).

pub mod check;
pub mod commands;
pub mod loaders;
pub mod ready;
