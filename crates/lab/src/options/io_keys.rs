//! sysbench fileio's options (`qpslab io`, and a study's keys with `workload = "fileio"`), by
//! sysbench's names and with its defaults. Setting any of them makes the plan a fileio one.

use super::builder::Builder;
use super::def::{choices, def, on_off, OptionDef, Scope, ON_OFF, U32};
use super::value::{float, int, list, switch, text};
use qpslab_core::fileio::{ExtraFlag, FileIoMode, FileIoOptions, FileTestMode, FsyncMode};
use qpslab_core::units::size_text;
use serde_json::Value;

/// The fileio options being set (created with sysbench's defaults by the first one).
fn io(b: &mut Builder) -> &mut FileIoOptions {
    b.io.get_or_insert_with(FileIoOptions::default)
}

/// The fileio options as they stand, for the defaults shown in help.
fn shown(b: &Builder) -> FileIoOptions {
    b.io.clone().unwrap_or_default()
}

/// Bytes as sysbench writes them: a number with an optional K, M, G or T (powers of 1024), as
/// [`qpslab_core::units::sysbench_size`] reads them.
pub(crate) fn size(v: &Value) -> Result<u64, String> {
    qpslab_core::units::sysbench_size(&text(v)?)
        .map_err(|_| format!("expects a size like 16384, 16K, 64M or 2G, not {v}"))
}

/// One fileio option: `$apply` sets it on the options, `$show` shows it.
macro_rules! io_opt {
    ($name:literal, $vn:literal, $ex:literal, $help:literal, |$o:ident, $v:ident| $apply:expr, |$s:ident| $show:expr) => {
        def(
            $name,
            Scope::FileIo,
            $vn,
            $help,
            $ex,
            |b, $v| {
                let $o = io(b);
                $apply;
                Ok(())
            },
            |b| {
                let $s = shown(b);
                $show
            },
        )
    };
}

fn extra_flags(v: &Value) -> Result<Vec<ExtraFlag>, String> {
    let mut out = Vec::new();
    for f in list(v)? {
        let t = text(&f)?;
        if !t.is_empty() {
            out.push(t.parse::<ExtraFlag>().map_err(|e| e.to_string())?);
        }
    }
    Ok(out)
}

fn ratio(v: &Value) -> Result<f64, String> {
    float(v)
        .ok()
        .filter(|r| *r > 0.0)
        .ok_or_else(|| format!("must be a number above 0 (reads per write), not {v}"))
}

/// The fileio options, in the order `io --help` lists them.
pub(crate) static FILEIO: &[OptionDef] = &[
    choices(
        io_opt!(
            "file_test_mode",
            "MODE",
            "seqwr",
            "Test mode",
            |o, v| o.mode = text(v)?
                .parse::<FileTestMode>()
                .map_err(|e| e.to_string())?,
            |s| s.mode.to_string()
        ),
        FileTestMode::NAMES,
    ),
    io_opt!(
        "file_num",
        "N",
        "4",
        "Number of files",
        |o, v| o.num = int(v, 1, 1 << 20)? as u32,
        |s| s.num.to_string()
    ),
    io_opt!(
        "file_total_size",
        "SIZE",
        "64M",
        "Total size of the files (K, M, G, T)",
        |o, v| o.total_size = size(v)?,
        |s| size_text(s.total_size)
    ),
    io_opt!(
        "file_block_size",
        "SIZE",
        "4096",
        "Block size of every request",
        |o, v| o.block_size = nonzero(size(v)?)?,
        |s| s.block_size.to_string()
    ),
    choices(
        io_opt!(
            "file_io_mode",
            "MODE",
            "async",
            "How requests are issued",
            |o, v| o.io_mode = text(v)?.parse::<FileIoMode>().map_err(|e| e.to_string())?,
            |s| s.io_mode.to_string()
        ),
        FileIoMode::NAMES,
    ),
    io_opt!(
        "file_async_backlog",
        "N",
        "32",
        "Requests in flight per thread in async mode",
        |o, v| o.async_backlog = int(v, 1, 65_536)? as u32,
        |s| s.async_backlog.to_string()
    ),
    io_opt!(
        "file_fsync_freq",
        "N",
        "0",
        "Flush after this many writes (0: never)",
        |o, v| o.fsync_freq = int(v, 0, U32)? as u32,
        |s| s.fsync_freq.to_string()
    ),
    choices(
        io_opt!(
            "file_fsync_all",
            "on|off",
            "on",
            "Flush after every write",
            |o, v| o.fsync_all = switch(v)?,
            |s| on_off(s.fsync_all)
        ),
        ON_OFF,
    ),
    choices(
        io_opt!(
            "file_fsync_end",
            "on|off",
            "off",
            "Flush at the end of the test",
            |o, v| o.fsync_end = switch(v)?,
            |s| on_off(s.fsync_end)
        ),
        ON_OFF,
    ),
    choices(
        io_opt!(
            "file_fsync_mode",
            "MODE",
            "fdatasync",
            "Flush call",
            |o, v| o.fsync_mode = text(v)?.parse::<FsyncMode>().map_err(|e| e.to_string())?,
            |s| s.fsync_mode.to_string()
        ),
        FsyncMode::NAMES,
    ),
    io_opt!(
        "file_extra_flags",
        "FLAGS",
        "direct",
        "Extra open flags, comma-separated: direct, sync, dsync",
        |o, v| o.extra_flags = extra_flags(v)?,
        |s| s
            .extra_flags
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(",")
    ),
    io_opt!(
        "file_rw_ratio",
        "R",
        "2",
        "Reads per write in rndrw",
        |o, v| o.rw_ratio = ratio(v)?,
        |s| s.rw_ratio.to_string()
    ),
];

fn nonzero(n: u64) -> Result<u64, String> {
    if n == 0 {
        Err("must be at least 1 byte".into())
    } else {
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_as_sysbench_writes_them() {
        for (v, n) in [
            (json!("16384"), 16384),
            (json!(4096), 4096),
            (json!("16K"), 16384),
            (json!("64M"), 64 << 20),
            (json!("2G"), 2 << 30),
            (json!("1t"), 1 << 40),
            (json!("8kb"), 8192),
        ] {
            assert_eq!(size(&v).unwrap(), n, "{v}");
        }
        for bad in [
            json!("2X"),
            json!("-1"),
            json!("M"),
            json!("99999999999T"),
            json!([1]),
        ] {
            assert!(size(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn combinations_are_checked() {
        let mut o = FileIoOptions {
            num: 4,
            total_size: 8192,
            ..Default::default()
        };
        assert!(o
            .check()
            .unwrap_err()
            .to_string()
            .contains("less than one block"));
        o.total_size = 64 << 20;
        assert!(o.check().is_ok());
        o.block_size = 1000;
        o.extra_flags = vec![ExtraFlag::Direct];
        assert!(o
            .check()
            .unwrap_err()
            .to_string()
            .contains("multiple of 512"));
        assert_eq!(
            extra_flags(&json!("direct,dsync")).unwrap(),
            vec![ExtraFlag::Direct, ExtraFlag::Dsync]
        );
        assert!(extra_flags(&json!("odirect")).is_err());
        assert!(ratio(&json!(0)).is_err());
    }

    #[test]
    fn a_spec_names_the_fileio_workload_and_sweeps_its_keys() {
        use crate::options::{RunOptions, SweepOptions};
        #[derive(serde::Deserialize)]
        struct Doc {
            defaults: RunOptions,
            sweep: SweepOptions,
        }
        let d: Doc = toml::from_str(
            "[defaults]\nworkload = \"fileio\"\nfile_total_size = \"64M\"\nfile_num = 4\n\
             [sweep]\nfile_test_mode = [\"rndrd\", \"seqwr\"]\nfile_block_size = [\"4K\", 16384]\n",
        )
        .unwrap();
        let io = d.defaults.to_plan().unwrap().fileio.unwrap();
        assert_eq!(
            (io.num, io.total_size, io.mode),
            (4, 64 << 20, FileTestMode::RndRd)
        );
        assert_eq!(d.sweep.axes()[0].1, vec![json!("rndrd"), json!("seqwr")]);
        let mut oltp = d.defaults.clone();
        oltp.set("workload", json!("oltp_read_only")).unwrap();
        let e = oltp.to_plan().unwrap_err().to_string();
        assert!(e.contains("workload = \"fileio\""), "{e}");
        let plain = RunOptions::default().to_plan().unwrap();
        assert!(plain.fileio.is_none());
        // A study's default auto warm-up does not apply to fio; a warm-up asked for is refused.
        let plan = d.defaults.to_plan().unwrap();
        assert!(plan.warmup_auto.is_none() && plan.warmup_s == 0.0);
        let mut warm = d.defaults.clone();
        warm.set("warmup", json!("10s")).unwrap();
        let e = warm.to_plan().unwrap_err().to_string();
        assert!(e.contains("no warm-up"), "{e}");
        for bad in [
            "[defaults]\nfile_test_mode = \"rnd\"\n[sweep]\n",
            "[defaults]\n[sweep]\nfile_block_size = [0]\n",
            "[defaults]\nfile_num = 0\n[sweep]\n",
        ] {
            assert!(toml::from_str::<Doc>(bad).is_err(), "{bad}");
        }
        assert!(toml::from_str::<Doc>("[defaults]\n[sweep]\nfile_block_size = [512]\n").is_ok());
    }
}
