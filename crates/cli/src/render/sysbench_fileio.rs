//! sysbench fileio's lines, for `sysbench fileio ...` run through qpslab (fio underneath):
//! prepare's file list, run's options (`file_print_mode`), interval lines and summary
//! (`file_report_cumulative`), cleanup's line. The formats follow `sb_fileio.c` (1.0.20).

use super::sysbench::{general, version_line};
use qpslab_core::fileio::{ExtraFlag, FileIoMode, FileIoOptions, FileTestMode, MIB};
use qpslab_core::result::{PhaseResult, Sample};
use std::fmt::Write;

/// `sb_print_value_size`: `2MiB`, `16KiB`, `1.5GiB` (without the `B`), `%.5g` of the value.
fn size(bytes: f64) -> String {
    let (mut v, mut unit) = (bytes, None);
    for u in ['K', 'M', 'G', 'T'] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = Some(u);
    }
    // `%.5g`: five significant digits, trailing zeros dropped.
    let digits = if v >= 1.0 {
        v.log10().floor() as i32 + 1
    } else {
        1
    };
    let text = format!("{v:.prec$}", prec = (5 - digits).max(0) as usize);
    let text = match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    };
    match unit {
        Some(u) => format!("{text}{u}i"),
        None => text,
    }
}

/// `Extra file open flags: (none)`.
fn extra_flags(o: &FileIoOptions) -> String {
    let has = |f| o.extra_flags.contains(&f);
    format!(
        "Extra file open flags: {}{}{}{}\n",
        if o.extra_flags.is_empty() {
            "(none)"
        } else {
            ""
        },
        if has(ExtraFlag::Sync) { "sync " } else { "" },
        if has(ExtraFlag::Dsync) { "dsync " } else { "" },
        if has(ExtraFlag::Direct) {
            "directio"
        } else {
            ""
        },
    )
}

/// What `sysbench fileio prepare` prints, given the bytes each file had before.
pub fn prepare_text(o: &FileIoOptions, before: &[u64], seconds: f64) -> String {
    let each = o.file_size();
    let mut out = format!("{}\n\n", version_line());
    let _ = writeln!(
        out,
        "{} files, {}Kb each, {}Mb total",
        o.num,
        each / 1024,
        each * u64::from(o.num) / (1024 * 1024)
    );
    out.push_str("Creating files for the test...\n");
    out.push_str(&extra_flags(o));
    let mut written = 0;
    for (i, had) in before.iter().enumerate() {
        let verb = match *had {
            h if h >= each => "Reusing existing file",
            0 => "Creating file",
            _ => "Extending existing file",
        };
        let _ = writeln!(out, "{verb} test_file.{i}");
        written += each.saturating_sub(*had);
    }
    if written > 0 {
        let _ = writeln!(
            out,
            "{written} bytes written in {seconds:.2} seconds ({:.2} MiB/sec).",
            (written as f64 / MIB).floor() / seconds.max(1e-9)
        );
    } else {
        out.push_str("No bytes written.\n");
    }
    out
}

/// What `sysbench fileio cleanup` prints.
pub fn cleanup_text() -> String {
    format!("{}\n\nRemoving test files...\n", version_line())
}

/// `file_print_mode`'s lines, before the workers start.
pub fn mode_lines(o: &FileIoOptions) -> String {
    let each = o.file_size();
    let mut out = extra_flags(o);
    let _ = writeln!(out, "{} files, {}B each", o.num, size(each as f64));
    let total = size((each * u64::from(o.num)) as f64);
    let _ = writeln!(out, "{total}B total file size");
    let _ = writeln!(out, "Block size {}B", size(o.block_size as f64));
    if matches!(
        o.mode,
        FileTestMode::RndRd | FileTestMode::RndWr | FileTestMode::RndRw
    ) {
        out.push_str("Number of IO requests: 0\n");
        let _ = writeln!(
            out,
            "Read/Write ratio for combined random IO test: {:.2}",
            o.rw_ratio
        );
    }
    if o.fsync_freq > 0 {
        let _ = writeln!(
            out,
            "Periodic FSYNC enabled, calling fsync() each {} requests.",
            o.fsync_freq
        );
    }
    if o.fsync_end {
        out.push_str("Calling fsync() at the end of test, Enabled.\n");
    }
    if o.fsync_all {
        out.push_str("Calling fsync() after each write operation.\n");
    }
    let io = match o.io_mode {
        FileIoMode::Sync => "synchronous",
        FileIoMode::Async => "asynchronous",
        FileIoMode::Mmap => "fast mmaped",
    };
    let _ = writeln!(out, "Using {io} I/O mode");
    let test = match o.mode {
        FileTestMode::SeqWr => "sequential write (creation)",
        FileTestMode::SeqRewr => "sequential rewrite",
        FileTestMode::SeqRd => "sequential read",
        FileTestMode::RndRd => "random read",
        FileTestMode::RndWr => "random write",
        FileTestMode::RndRw => "random r/w",
    };
    let _ = writeln!(out, "Doing {test} test");
    out
}

/// `file_report_intermediate`'s line.
pub fn interval_line(s: &Sample, block_size: u64) -> String {
    let per_s = |n: f64| {
        if s.interval_s > 0.0 {
            n / s.interval_s
        } else {
            0.0
        }
    };
    let mib = |ops: u64| per_s(ops as f64 * block_size as f64 / MIB);
    let (p, ms) = s
        .latency
        .percentiles
        .iter()
        .find(|p| p.p == 95.0)
        .or(s.latency.percentiles.first())
        .map_or((95.0, 0.0), |p| (p.p, p.ms));
    format!(
        "[ {:.0}s ] reads: {:.2} MiB/s writes: {:.2} MiB/s fsyncs: {:.2}/s latency (ms,{}%): {ms:.3}",
        s.elapsed_s,
        mib(s.queries.read),
        mib(s.queries.write),
        per_s(s.queries.other as f64),
        super::pct_label(p),
    )
}

/// `file_report_cumulative`'s lines, then the general statistics, latency and fairness.
pub fn summary(p: &PhaseResult, histogram: bool) -> String {
    let d = p.duration_s;
    let per_s = |n: f64| if d > 0.0 { n / d } else { 0.0 };
    let io = p.io.clone().unwrap_or_default();
    let mut o = super::sysbench::histogram_block(p, histogram);
    o.push_str("\nFile operations:\n");
    let _ = writeln!(
        o,
        "    reads/s:                      {:.2}",
        per_s(io.read_ops as f64)
    );
    let _ = writeln!(
        o,
        "    writes/s:                     {:.2}",
        per_s(io.write_ops as f64)
    );
    let _ = writeln!(
        o,
        "    fsyncs/s:                     {:.2}",
        per_s(io.fsyncs as f64)
    );
    o.push_str("\nThroughput:\n");
    let _ = writeln!(o, "    read, MiB/s:                  {:.2}", io.read_mib_s);
    let _ = writeln!(o, "    written, MiB/s:               {:.2}", io.write_mib_s);
    // sysbench's --percentile is 95 here: fileio takes no other.
    let p95 = p.latency.percentiles.iter().find(|x| x.p == 95.0);
    o.push_str(&general(p, p95));
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysbench_prints_them() {
        assert_eq!(size(2.0 * MIB), "2Mi");
        assert_eq!(size(16384.0), "16Ki");
        assert_eq!(size(1.5 * 1024.0 * MIB), "1.5Gi");
        assert_eq!(size(512.0), "512");
    }

    #[test]
    fn fileio_run_lines_are_sysbenchs() {
        let o = FileIoOptions {
            mode: FileTestMode::RndRw,
            num: 4,
            total_size: 8 << 20,
            ..Default::default()
        };
        assert_eq!(
            mode_lines(&o),
            "Extra file open flags: (none)\n4 files, 2MiB each\n8MiB total file size\n\
             Block size 16KiB\nNumber of IO requests: 0\n\
             Read/Write ratio for combined random IO test: 1.50\n\
             Periodic FSYNC enabled, calling fsync() each 100 requests.\n\
             Calling fsync() at the end of test, Enabled.\nUsing synchronous I/O mode\n\
             Doing random r/w test\n"
        );
        let text = prepare_text(&o, &[0, 0, 0, 0], 0.01);
        assert!(text.contains("4 files, 2048Kb each, 8Mb total\nCreating files for the test...\n"));
        assert!(text.contains("Creating file test_file.3\n8388608 bytes written in 0.01 seconds"));
    }
}
