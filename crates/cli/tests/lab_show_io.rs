//! `lab show` of a fileio study (issue 47): each cell's MiB/s, IOPS and latency (average and
//! p99, in ms to the microsecond as `qpslab io` prints them), in the table, the JSON and the
//! CSV, from a real study run through the real fio.

mod common;

use common::{stderr, stdout, Scratch};
use serde_json::Value;

#[test]
fn issue_47_lab_show_of_a_fileio_study_gives_mib_s_iops_and_latency() {
    let s = Scratch::new();
    let spec = s.path().join("io.toml");
    std::fs::write(
        &spec,
        "name = \"io-show\"\n[defaults]\nworkload = \"fileio\"\nfile_total_size = \"16M\"\n\
         file_num = 2\ntime = 1\n[sweep]\nfile_test_mode = [\"rndrd\", \"seqwr\"]\n",
    )
    .unwrap();
    let o = s.run(&["lab", "run", &spec.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));

    // The table: MiB/s and IOPS instead of tps and qps, latency not rounded away to 0.00.
    let o = s.run(&["lab", "show", "io-show"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let header = text
        .lines()
        .find(|l| l.starts_with("seq"))
        .unwrap_or_else(|| panic!("{text}"));
    for column in ["MiB/s", "IOPS", "avg ms", "p99 ms"] {
        assert!(header.contains(column), "{text}");
    }
    assert!(!header.contains("tps"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("/r1")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    for row in rows {
        // From the right: run, p99, avg, IOPS, MiB/s (a status may hold spaces).
        let cols: Vec<&str> = row.split_whitespace().rev().take(5).collect();
        let figure = |i: usize| cols[i].parse::<f64>().unwrap_or_else(|_| panic!("{row}"));
        assert!(figure(4) > 0.0 && figure(3) > 0.0, "MiB/s, IOPS: {row}");
        assert!(
            figure(2) > 0.0 && figure(1) >= figure(2) * 0.5,
            "latency: {row}"
        );
        // To the microsecond, as `qpslab io` prints its latency.
        assert_eq!(cols[2].split('.').nth(1).map(str::len), Some(3), "{row}");
    }

    // The JSON: each cell's `io`.
    let o = s.run(&["lab", "show", "io-show", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{doc}");
    for c in cells {
        let io = &c["io"];
        for key in ["mib_s", "iops", "lat_avg_ms", "p99_ms"] {
            assert!(io[key].as_f64().is_some_and(|v| v > 0.0), "{key}: {io}");
        }
    }
    let write = cells
        .iter()
        .find(|c| c["label"].as_str().unwrap().contains("seqwr"))
        .unwrap();
    assert!(
        write["io"]["write_mib_s"].as_f64().unwrap() > 0.0,
        "{write}"
    );

    // The CSV: its own header, the figures under it.
    let o = s.run(&["lab", "show", "io-show", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 2, "{csv}");
    for r in &rows {
        for key in ["mib_s", "iops", "lat_avg_ms", "p99_ms"] {
            let v: f64 = r[at(key)]
                .parse()
                .unwrap_or_else(|_| panic!("{key}: {csv}"));
            assert!(v > 0.0, "{key}: {csv}");
        }
    }

    // compare of two fileio runs names their events IOPS, in the table and Markdown, and
    // leaves out the queries (the same operations counted again).
    let dir = s.path().join("io");
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.display().to_string();
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let o = s.run(&[
                "io",
                "rndrd",
                "--dir",
                &dir,
                "--file-num",
                "2",
                "--file-total-size",
                "16M",
                "--time",
                "1",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            common::stored_run_id(&stdout(&o))
        })
        .collect();
    for format in ["table", "md"] {
        let o = s.run(&["compare", &ids[0], &ids[1], "--format", format]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains("IOPS"), "{format}: {out}");
        assert!(
            !out.contains("tps (") && !out.contains("qps ("),
            "{format}: {out}"
        );
    }
}
