//! Where a measurement's progress goes: the [`Observer`] the CLI implements to print (and to
//! feed its live metrics endpoint), and [`Interval`], one report tick as the store keeps it.

use qpslab_core::telemetry::{ProfileFiles, ReplicaLag};
use qpslab_core::{Sample, TelemetrySample, WorkloadOptions};
use qpslab_engine::prepare::{PrepareProgress, PrepareReport};

/// One report tick of a measured phase, with what identifies it: the run (its store id, or
/// what names a measurement that has none, such as a tune trial), the study cell, the
/// sessions, the engine's sample and the telemetry read on the same tick.
#[derive(Clone, Copy, Debug)]
pub struct Interval<'a> {
    /// The run's id in the store (`42`), or the name of a measurement stored otherwise.
    pub run: &'a str,
    /// The study cell's label (`bp1g/threads=8/r2`), when the run is one.
    pub cell: Option<&'a str>,
    /// Sessions of the phase.
    pub threads: u32,
    /// The engine's figures of the interval.
    pub sample: &'a Sample,
    /// The telemetry read on the same tick (server status changes, CPU of both sides).
    pub telemetry: &'a [TelemetrySample],
}

/// Where progress goes: the CLI prints it, tests ignore it. Every method has a silent default.
pub trait Observer {
    /// A line worth showing (dataset prepared or rebuilt...).
    fn message(&mut self, _line: &str) {}
    /// Loading progress, a few times per second.
    fn prepare_progress(&mut self, _p: &PrepareProgress) {}
    /// Loading finished.
    fn prepared(&mut self, _w: &WorkloadOptions, _r: &PrepareReport, _loaders: u32) {}
    /// A replica's lag over the report tick that [`Observer::sample`] reports next
    /// (`run --replica`).
    fn replica_lag(&mut self, _threads: u32, _lag: &ReplicaLag) {}
    /// One report tick of the measured phase.
    fn sample(&mut self, _threads: u32, _s: &Sample) {}
    /// The same tick with its run, cell and telemetry (after [`Observer::sample`]).
    fn interval(&mut self, _i: &Interval<'_>) {}
    /// The server's profile of the phase of `threads` sessions was folded (the sampler was
    /// asked for profiles) and its flame graph drawn at `files.svg` (or `files.not_drawn` says
    /// why not): the observer says where they are.
    fn profiled(&mut self, _threads: u32, _files: &ProfileFiles) {}
    /// A live action (`--at`) finished.
    fn action(&mut self, _threads: u32, _r: &qpslab_core::live::ActionRecord) {}
    /// Where the client's event loops will run the phase of `threads` sessions
    /// (`4 event loops on CPUs 12-15 (not the server's)`).
    fn placed(&mut self, _threads: u32, _placement: &str) {}
    /// The auto warm-up before the phase of `threads` sessions ended after `took_s` seconds.
    fn warmed_up(&mut self, _threads: u32, _took_s: f64) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl Observer for Quiet {}
