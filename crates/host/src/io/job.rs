//! sysbench fileio's options as a fio job: the one place where the mapping lives (docs/io.md
//! documents it).

use qpslab_core::fileio::{ExtraFlag, FileIoMode, FileIoOptions, FileTestMode, FsyncMode};
use std::path::Path;

/// fio's job name (its reports name the job).
const JOB: &str = "qpslab";
/// The latency percentiles fio computes from its histograms for every run.
pub const PERCENTILES: [f64; 4] = [50.0, 95.0, 99.0, 99.9];

/// How the measured phase runs besides the fileio options.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// Threads (`numjobs`).
    pub threads: u32,
    /// Seconds of the measured phase (`runtime`, time based).
    pub time_s: f64,
    /// Seconds between status reports (`--status-interval`, at least 1).
    pub interval_s: f64,
}

/// The report interval fio can keep: whole seconds, at least 1 (the plan stores this one).
pub fn status_interval(asked_s: f64) -> f64 {
    asked_s.round().max(1.0)
}

/// The name of test file `i`, sysbench's `test_file.N`.
pub fn file_name(i: u32) -> String {
    format!("test_file.{i}")
}

/// What every fio invocation shares: the files, their layout and the block size.
fn files(o: &FileIoOptions, dir: &Path) -> Vec<String> {
    vec![
        format!("--name={JOB}"),
        format!("--directory={}", escape_colons(dir)),
        "--filename_format=test_file.$filenum".into(),
        format!("--nrfiles={}", o.num),
        format!("--filesize={}", o.file_size()),
        format!("--size={}", o.file_size() * u64::from(o.num)),
        format!("--bs={}", o.block_size),
    ]
}

/// fio reads `:` in a directory as a list separator.
fn escape_colons(dir: &Path) -> String {
    dir.display().to_string().replace(':', "\\:")
}

/// The fio arguments that lay the files out (sysbench's `prepare`): one thread writes them.
/// `overwrite` makes fio write every block; without it a write job's files are only allocated
/// (unwritten extents), and reads of them return zeros without touching the disk.
pub fn layout_args(o: &FileIoOptions, dir: &Path) -> Vec<String> {
    let mut a = files(o, dir);
    let layout = [
        "--rw=write",
        "--overwrite=1",
        "--create_only=1",
        "--output-format=json",
    ];
    a.extend(layout.map(String::from));
    a
}

/// fio's `rw` for a sysbench mode (seqrewr is seqwr over the laid-out files, as in sysbench).
fn rw(mode: FileTestMode) -> &'static str {
    match mode {
        FileTestMode::SeqWr | FileTestMode::SeqRewr => "write",
        FileTestMode::SeqRd => "read",
        FileTestMode::RndRd => "randread",
        FileTestMode::RndWr => "randwrite",
        FileTestMode::RndRw => "randrw",
    }
}

/// fio's `rwmixread` for sysbench's reads per write: 1.5 → 60.
pub fn rwmixread(ratio: f64) -> u32 {
    (100.0 * ratio / (1.0 + ratio)).round().clamp(0.0, 100.0) as u32
}

fn engine(o: &FileIoOptions) -> Vec<String> {
    match o.io_mode {
        FileIoMode::Sync => vec!["--ioengine=psync".into()],
        FileIoMode::Async => vec![
            "--ioengine=libaio".into(),
            format!("--iodepth={}", o.async_backlog),
        ],
        FileIoMode::Mmap => vec!["--ioengine=mmap".into()],
    }
}

fn flushes(o: &FileIoOptions) -> Vec<String> {
    let mut a = Vec::new();
    if !o.mode.writes() {
        return a;
    }
    let every = if o.fsync_all { 1 } else { o.fsync_freq };
    if every > 0 {
        let call = match o.fsync_mode {
            FsyncMode::Fsync => "fsync",
            FsyncMode::Fdatasync => "fdatasync",
        };
        a.push(format!("--{call}={every}"));
    }
    if o.fsync_end {
        a.push("--end_fsync=1".into());
    }
    a
}

fn open_flags(o: &FileIoOptions) -> Vec<String> {
    o.extra_flags
        .iter()
        .map(|f| match f {
            ExtraFlag::Direct => "--direct=1",
            ExtraFlag::Sync => "--sync=sync",
            ExtraFlag::Dsync => "--sync=dsync",
        })
        .map(String::from)
        .collect()
}

/// The fio arguments of the measured phase: cumulative `json+` reports every interval (full
/// completion-latency histograms) and the percentiles of [`PERCENTILES`].
pub fn run_args(o: &FileIoOptions, t: &Timing, dir: &Path) -> Vec<String> {
    let mut a = files(o, dir);
    a.push(format!("--rw={}", rw(o.mode)));
    if o.mode == FileTestMode::RndRw {
        a.push(format!("--rwmixread={}", rwmixread(o.rw_ratio)));
    }
    let service = if matches!(
        o.mode,
        FileTestMode::RndRd | FileTestMode::RndWr | FileTestMode::RndRw
    ) {
        "random"
    } else {
        "sequential"
    };
    a.push(format!("--file_service_type={service}"));
    a.extend(engine(o));
    a.extend(flushes(o));
    a.extend(open_flags(o));
    let list: Vec<String> = PERCENTILES.iter().map(f64::to_string).collect();
    a.extend([
        format!("--numjobs={}", t.threads),
        "--thread".into(),
        "--group_reporting=1".into(),
        "--invalidate=0".into(),
        "--time_based=1".into(),
        format!("--runtime={}ms", (t.time_s * 1000.0).round().max(1.0)),
        "--unified_rw_reporting=both".into(),
        format!("--percentile_list={}", list.join(":")),
        format!("--status-interval={}", status_interval(t.interval_s)),
        "--output-format=json+".into(),
    ]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Timing {
        Timing {
            threads: 4,
            time_s: 2.5,
            interval_s: 1.0,
        }
    }

    fn has(a: &[String], arg: &str) -> bool {
        a.iter().any(|x| x == arg)
    }

    #[test]
    fn sysbench_defaults_map_to_psync_with_fsync_every_100() {
        let o = FileIoOptions {
            mode: FileTestMode::RndRw,
            ..Default::default()
        };
        let a = run_args(&o, &timing(), Path::new("/d:x"));
        for want in [
            "--directory=/d\\:x",
            "--nrfiles=128",
            "--filesize=16777216",
            "--bs=16384",
            "--rw=randrw",
            "--rwmixread=60",
            "--file_service_type=random",
            "--ioengine=psync",
            "--fsync=100",
            "--end_fsync=1",
            "--numjobs=4",
            "--runtime=2500ms",
            "--percentile_list=50:95:99:99.9",
            "--output-format=json+",
        ] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
        assert!(!has(&a, "--direct=1"));
    }

    #[test]
    fn modes_flags_and_flushes() {
        let o = FileIoOptions {
            mode: FileTestMode::SeqRd,
            io_mode: FileIoMode::Async,
            async_backlog: 32,
            extra_flags: vec![ExtraFlag::Direct, ExtraFlag::Dsync],
            ..Default::default()
        };
        let a = run_args(&o, &timing(), Path::new("/d"));
        for want in [
            "--rw=read",
            "--ioengine=libaio",
            "--iodepth=32",
            "--direct=1",
            "--sync=dsync",
            "--file_service_type=sequential",
        ] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
        // A read-only mode never flushes.
        assert!(!a.iter().any(|x| x.contains("fsync")), "{a:?}");
        let w = FileIoOptions {
            mode: FileTestMode::SeqRewr,
            fsync_all: true,
            fsync_end: false,
            fsync_mode: FsyncMode::Fdatasync,
            io_mode: FileIoMode::Mmap,
            ..Default::default()
        };
        let a = run_args(&w, &timing(), Path::new("/d"));
        for want in ["--rw=write", "--fdatasync=1", "--ioengine=mmap"] {
            assert!(has(&a, want), "{want} missing from {a:?}");
        }
        assert!(!has(&a, "--end_fsync=1"));
        assert_eq!(rwmixread(1.0), 50);
        assert_eq!(rwmixread(3.0), 75);
        let l = layout_args(&w, Path::new("/d"));
        assert!(has(&l, "--create_only=1") && !l.iter().any(|x| x.starts_with("--numjobs")));
        assert!(
            has(&l, "--overwrite=1"),
            "files written, not only allocated: {l:?}"
        );
        assert_eq!(file_name(3), "test_file.3");
        assert_eq!((status_interval(0.4), status_interval(2.4)), (1.0, 2.0));
    }
}
