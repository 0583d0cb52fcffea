//! `--metrics-addr`: a real Prometheus (Debian's `prometheus`) scrapes a 20 s `qpslab run`, and
//! its query API returns the run's throughput series; the text served parses (promtool for
//! the 0.0.4 format, the OpenMetrics grammar's line shapes here); a port in use is one line,
//! exit 2, on every command that takes the flag.

mod common;
use common::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free TCP port on the loopback (bound, then released for the caller to take).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A plain HTTP/1.0 GET: the status line and headers, and the body.
fn get(port: u16, path: &str, accept: Option<&str>) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    let accept = accept.map_or(String::new(), |a| format!("Accept: {a}\r\n"));
    let req = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{accept}\r\n");
    s.write_all(req.as_bytes()).ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    Some((head.to_string(), body.to_string()))
}

/// The Prometheus server of a test, killed by pid when dropped (also when the test fails).
struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    /// Starts Prometheus scraping `127.0.0.1:target` every second, with its storage in `dir`.
    fn start(dir: &Path, target: u16) -> Prometheus {
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  \
                 - job_name: qpslab\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("tsdb").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("the prometheus binary (Debian's prometheus package)");
        let p = Prometheus { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !get(port, "/-/ready", None).is_some_and(|(h, _)| h.contains(" 200 ")) {
            assert!(Instant::now() < deadline, "prometheus not ready in 60 s");
            std::thread::sleep(Duration::from_millis(200));
        }
        p
    }

    /// The values of `query` over the last `secs` seconds, one per second.
    fn range(&self, query: &str, secs: u64) -> serde_json::Value {
        let end = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let q: String = query
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let path = format!(
            "/api/v1/query_range?query={q}&start={}&end={end}&step=1",
            end - secs
        );
        let (head, body) = get(self.port, &path, None).expect("prometheus answers");
        assert!(head.contains(" 200 "), "{head}\n{body}");
        serde_json::from_str(&body).unwrap()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Checks the shape of every line of an OpenMetrics exposition: metadata, samples
/// `name{label="value",...} number`, and the closing `# EOF`.
fn check_openmetrics(text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"# EOF"), "{text}");
    let mut families = std::collections::BTreeSet::new();
    for line in &lines[..lines.len() - 1] {
        if let Some(meta) = line.strip_prefix("# ") {
            let mut f = meta.splitn(3, ' ');
            let (kind, name) = (f.next().unwrap(), f.next().unwrap());
            assert!(["HELP", "TYPE", "UNIT"].contains(&kind), "{line}");
            if kind == "TYPE" {
                assert!(families.insert(name.to_string()), "family twice: {line}");
                let t = f.next().unwrap();
                assert!(["gauge", "counter", "summary"].contains(&t), "{line}");
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap();
        assert!(
            value.parse::<f64>().is_ok() || ["NaN", "+Inf", "-Inf"].contains(&value),
            "{line}"
        );
        let (name, labels) = series.split_once('{').unwrap();
        assert!(
            name.starts_with("qpslab_")
                && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "{line}"
        );
        assert!(
            families.iter().any(|f| name.starts_with(f.as_str())),
            "sample before its family: {line}"
        );
        assert!(labels.ends_with('}') && labels.contains("run=\""), "{line}");
    }
}

#[test]
fn prometheus_scrapes_a_run_and_its_query_api_returns_the_throughput() {
    let s = Scratch::new();
    let sock = socket();
    let options = ["--tables", "1", "--table-size", "2000"];
    common::prepare_shared(&s, "oltp_point_select", "metricstest", &options);
    let target = free_port();
    let prometheus = Prometheus::start(s.path(), target);
    let addr = format!("127.0.0.1:{target}");
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        "metricstest",
        "--threads",
        "2",
        "--time",
        "20",
        "--warmup",
        "1",
        "--rate",
        "500",
        "--metrics-addr",
        &addr,
    ];
    args.extend_from_slice(&options);
    let child = s
        .cmd(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While it runs, the text itself: promtool's checks for the 0.0.4 format, the line shapes
    // for OpenMetrics.
    let deadline = Instant::now() + Duration::from_secs(60);
    let plain = loop {
        if let Some((head, body)) = get(target, "/metrics", None) {
            if body.contains("qpslab_transactions_per_second") {
                assert!(head.contains("text/plain; version=0.0.4"), "{head}");
                break body;
            }
        }
        assert!(Instant::now() < deadline, "no interval served in 60 s");
        std::thread::sleep(Duration::from_millis(300));
    };
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package)");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(plain.as_bytes())
        .unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool: {}{}\n{plain}",
        stdout(&checked),
        stderr(&checked)
    );
    let om = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5";
    let (head, body) = get(target, "/metrics", Some(om)).unwrap();
    assert!(
        head.contains("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        "{head}"
    );
    check_openmetrics(&body);

    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    let run = stored_run_id(&out);
    // The endpoint is gone with the command.
    assert!(get(target, "/metrics", None).is_none());
    let v = prometheus.range(
        &format!("qpslab_transactions_per_second{{run=\"{run}\",threads=\"2\"}}"),
        90,
    );
    assert_eq!(v["status"], "success", "{v}");
    let series = v["data"]["result"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{v}");
    let nonzero = series[0]["values"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p[1].as_str()?.parse::<f64>().ok())
        .filter(|&tps| tps > 0.0)
        .count();
    assert!(nonzero >= 5, "{nonzero} non-zero samples: {v}");
}

/// Each command that takes `--metrics-addr`, up to the flag, with what it needs to get there.
fn commands(s: &Scratch) -> Vec<Vec<String>> {
    let spec = s.path().join("spec.toml");
    std::fs::write(
        &spec,
        "name = \"m\"\n[defaults]\nworkload = \"oltp_point_select\"\ntime = 1\n\
         [[variant]]\nname = \"a\"\n",
    )
    .unwrap();
    let log = s.path().join("slow.log");
    std::fs::write(&log, "").unwrap();
    let owned = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    vec![
        owned(&["run", "oltp_point_select", "--time", "1"]),
        owned(&["lab", "run", spec.to_str().unwrap()]),
        owned(&[
            "replay",
            log.to_str().unwrap(),
            "--socket",
            "/nonexistent.sock",
        ]),
        owned(&["tune", "oltp_point_select", "--budget", "10m"]),
    ]
}

#[test]
fn a_port_in_use_is_one_line_and_exit_2_before_anything_starts() {
    let s = Scratch::new();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    for mut args in commands(&s) {
        args.extend(["--metrics-addr".to_string(), addr.clone()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let started = Instant::now();
        let o = s.run(&args);
        assert_user_error(&o, "in use");
        assert!(stderr(&o).contains(&addr), "{args:?}: {}", stderr(&o));
        // Refused before any sandbox was started.
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
    let o = s.run(&["run", "oltp_point_select", "--metrics-addr", "no-port-here"]);
    assert_user_error(&o, "--metrics-addr no-port-here");
}
