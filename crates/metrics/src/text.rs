//! The exposition text: Prometheus' text format 0.0.4 and OpenMetrics 1.0, from one list of
//! metric families so the two cannot drift. Names follow Prometheus' conventions: the
//! `qpslab_` prefix, base units (seconds, bytes), `_total` on counters.

use crate::phase::Phase;
use std::fmt::Write;

/// Which text the scraper gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `text/plain; version=0.0.4`, what any scraper reads.
    Prometheus,
    /// `application/openmetrics-text; version=1.0.0`, ended by `# EOF`.
    OpenMetrics,
}

impl Format {
    /// The format a request's `Accept` header asks for: OpenMetrics when it names it.
    pub fn from_accept(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Prometheus,
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }
}

/// One sample of a family: its suffix (`_total`, `_sum`...), its labels beyond the phase's,
/// and its value.
type Point = (&'static str, Vec<(&'static str, String)>, f64);

/// A metric family's kind.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Gauge,
    Counter,
    Summary,
}

/// One metric family: its name (a counter's without `_total`), kind, unit and help, and its
/// samples as (suffix, extra labels, value).
struct Family {
    name: &'static str,
    kind: Kind,
    unit: Option<&'static str>,
    help: &'static str,
    samples: Vec<Point>,
}

impl Family {
    fn new(
        name: &'static str,
        kind: Kind,
        unit: Option<&'static str>,
        help: &'static str,
    ) -> Family {
        Family {
            name,
            kind,
            unit,
            help,
            samples: Vec::new(),
        }
    }

    /// A family of one sample without extra labels.
    fn one(mut self, value: f64) -> Family {
        let suffix = if self.kind == Kind::Counter {
            "_total"
        } else {
            ""
        };
        self.samples.push((suffix, Vec::new(), value));
        self
    }

    /// One sample per `(label value, value)`, under the extra label `label`.
    fn by(
        mut self,
        label: &'static str,
        values: impl IntoIterator<Item = (String, f64)>,
    ) -> Family {
        let suffix = if self.kind == Kind::Counter {
            "_total"
        } else {
            ""
        };
        for (v, x) in values {
            self.samples.push((suffix, vec![(label, v)], x));
        }
        self
    }
}

/// Every family of the phase, in the order they are written.
fn families(p: &Phase) -> Vec<Family> {
    use Kind::{Counter, Gauge, Summary};
    let s = &p.last;
    let per_s = |n: u64| {
        if s.interval_s > 0.0 {
            n as f64 / s.interval_s
        } else {
            0.0
        }
    };
    let modes = |v: [f64; 2]| [("user".to_string(), v[0]), ("system".to_string(), v[1])];
    let mut latency = Family::new(
        "qpslab_latency_seconds",
        Summary,
        Some("seconds"),
        "Event latency: quantiles over the last report interval; count and sum over the phase.",
    );
    for q in &s.latency.percentiles {
        // 99.9 / 100 is 0.9990000000000001 in binary: round to the percentile's own digits.
        let quantile = format!("{}", (q.p * 1000.0).round() / 100_000.0);
        latency
            .samples
            .push(("", vec![("quantile", quantile)], q.ms / 1e3));
    }
    latency.samples.push(("_sum", Vec::new(), p.latency_sum_s));
    latency
        .samples
        .push(("_count", Vec::new(), p.latency_count as f64));
    let mut v = vec![
        Family::new(
            "qpslab_transactions_per_second",
            Gauge,
            None,
            "Events (transactions) per second over the last report interval.",
        )
        .one(per_s(s.events)),
        Family::new(
            "qpslab_queries_per_second",
            Gauge,
            None,
            "Queries per second over the last report interval.",
        )
        .one(per_s(s.queries.total())),
        latency,
        Family::new(
            "qpslab_latency_max_seconds",
            Gauge,
            Some("seconds"),
            "The slowest event of the last report interval.",
        )
        .one(s.latency.max_ms / 1e3),
        Family::new(
            "qpslab_events",
            Counter,
            None,
            "Events (transactions) completed in the phase.",
        )
        .one(p.events as f64),
        Family::new(
            "qpslab_queries",
            Counter,
            None,
            "Queries completed in the phase, by class.",
        )
        .by(
            "class",
            ["read", "write", "other"]
                .iter()
                .zip(p.queries)
                .map(|(c, n)| (c.to_string(), n as f64)),
        ),
        Family::new(
            "qpslab_errors",
            Counter,
            None,
            "Errors retried or ignored in the phase (deadlocks, lock wait timeouts...).",
        )
        .one(p.errors as f64),
        Family::new(
            "qpslab_reconnects",
            Counter,
            None,
            "Connections re-established in the phase.",
        )
        .one(p.reconnects as f64),
        Family::new(
            "qpslab_late_events",
            Counter,
            None,
            "Events started behind their schedule (--rate) in the phase.",
        )
        .one(p.late_events as f64),
        Family::new(
            "qpslab_client_cpu_seconds",
            Counter,
            Some("seconds"),
            "CPU time of the qpslab client in the phase.",
        )
        .by("mode", modes(p.client_cpu)),
        Family::new(
            "qpslab_phase_elapsed_seconds",
            Gauge,
            Some("seconds"),
            "Seconds since the measured phase began.",
        )
        .one(s.elapsed_s),
    ];
    if p.server_rss_bytes.is_some() {
        v.push(
            Family::new(
                "qpslab_server_cpu_seconds",
                Counter,
                Some("seconds"),
                "CPU time of the server process in the phase.",
            )
            .by("mode", modes(p.server_cpu)),
        );
    }
    if let Some(rss) = p.server_rss_bytes {
        v.push(
            Family::new(
                "qpslab_server_resident_memory_bytes",
                Gauge,
                Some("bytes"),
                "Resident memory of the server process at the last tick.",
            )
            .one(rss as f64),
        );
    }
    v.push(
        Family::new(
            "qpslab_server_status",
            Counter,
            None,
            "The server's status counters (SHOW GLOBAL STATUS), summed over the phase's ticks.",
        )
        .by(
            "variable",
            p.status_counters
                .iter()
                .map(|(k, n)| (k.clone(), *n as f64)),
        ),
    );
    v.push(
        Family::new(
            "qpslab_server_status_level",
            Gauge,
            None,
            "The server's status gauges (Threads_running...) at the last tick.",
        )
        .by(
            "variable",
            p.status_gauges.iter().map(|(k, n)| (k.clone(), *n as f64)),
        ),
    );
    v
}

/// The exposition of `phase` (none yet: no series) in `format`.
pub(crate) fn render(phase: Option<&Phase>, format: Format) -> String {
    let mut out = String::new();
    if let Some(p) = phase {
        let labels = p.labels.pairs();
        for f in families(p).iter().filter(|f| !f.samples.is_empty()) {
            write_family(&mut out, f, &labels, format);
        }
    }
    if format == Format::OpenMetrics {
        out.push_str("# EOF\n");
    }
    out
}

fn write_family(out: &mut String, f: &Family, labels: &[(&str, String)], format: Format) {
    let kind = match f.kind {
        Kind::Gauge => "gauge",
        Kind::Counter => "counter",
        Kind::Summary => "summary",
    };
    // In the 0.0.4 format a counter's family is named with its `_total`.
    let family = match (format, f.kind) {
        (Format::Prometheus, Kind::Counter) => format!("{}_total", f.name),
        _ => f.name.to_string(),
    };
    let _ = writeln!(out, "# HELP {family} {}", f.help);
    let _ = writeln!(out, "# TYPE {family} {kind}");
    if let (Format::OpenMetrics, Some(unit)) = (format, f.unit) {
        let _ = writeln!(out, "# UNIT {family} {unit}");
    }
    for (suffix, extra, value) in &f.samples {
        let _ = write!(out, "{}{suffix}{{", f.name);
        for (i, (k, v)) in labels.iter().chain(extra.iter()).enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{sep}{k}=\"{}\"", escape(v));
        }
        let _ = writeln!(out, "}} {}", number(*value));
    }
}

/// A label value with `\`, `"` and newlines escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A sample value: integers without a fraction, `NaN` and `+Inf`/`-Inf` as both formats
/// spell them.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::Labels;
    use qpslab_core::result::Percentile;

    fn phase() -> Phase {
        let mut p = Phase {
            labels: Labels {
                run: "3".into(),
                threads: 8,
                cell: Some("a \"b\"\\c".into()),
            },
            events: 10,
            ..Phase::default()
        };
        p.last.interval_s = 0.5;
        p.last.events = 10;
        p.last.latency.percentiles = vec![Percentile { p: 99.0, ms: 2.5 }];
        p.status_counters.insert("Com_select".into(), 7);
        p
    }

    #[test]
    fn prometheus_text_names_counters_with_total_and_escapes_labels() {
        let t = render(Some(&phase()), Format::Prometheus);
        assert!(t.contains("# TYPE qpslab_events_total counter\n"), "{t}");
        let labels = r#"run="3",threads="8",cell="a \"b\"\\c""#;
        assert!(
            t.contains(&format!("qpslab_events_total{{{labels}}} 10\n")),
            "{t}"
        );
        assert!(t.contains(&format!("qpslab_transactions_per_second{{{labels}}} 20\n")));
        assert!(t.contains(&format!(
            "qpslab_latency_seconds{{{labels},quantile=\"0.99\"}} 0.0025\n"
        )));
        assert!(t.contains(&format!(
            "qpslab_server_status_total{{{labels},variable=\"Com_select\"}} 7\n"
        )));
        assert!(!t.contains("# EOF") && !t.contains("# UNIT"));
    }

    #[test]
    fn openmetrics_names_the_family_without_total_and_ends_with_eof() {
        let t = render(Some(&phase()), Format::OpenMetrics);
        assert!(t.contains("# TYPE qpslab_events counter\n"), "{t}");
        assert!(t.contains("# UNIT qpslab_latency_seconds seconds\n"), "{t}");
        assert!(t.ends_with("# EOF\n"));
        assert_eq!(render(None, Format::OpenMetrics), "# EOF\n");
        assert_eq!(render(None, Format::Prometheus), "");
    }

    /// Every `qpslab_*` name the example dashboard and the docs use is one the endpoint serves.
    #[test]
    fn the_dashboard_and_the_docs_name_served_metrics() {
        let mut p = phase();
        p.server_rss_bytes = Some(1 << 20);
        p.status_gauges.insert("Threads_running".into(), 1);
        let text = render(Some(&p), Format::Prometheus);
        let served: std::collections::BTreeSet<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split('{').next())
            .collect();
        for (what, doc) in [
            (
                "grafana",
                include_str!("../../../examples/grafana-qpslab.json"),
            ),
            ("docs", include_str!("../../../docs/metrics.md")),
        ] {
            let mut named = 0;
            for (i, _) in doc.match_indices("qpslab_") {
                let name: String = doc[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                // The crate's own name, not a metric.
                if name != "qpslab_" {
                    assert!(
                        served.contains(name.as_str()),
                        "{what}: {name} is not served"
                    );
                    named += 1;
                }
            }
            assert!(named > 10, "{what}");
        }
    }

    #[test]
    fn accept_header_chooses_the_format() {
        let prom = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                    version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(Format::from_accept(Some(prom)), Format::OpenMetrics);
        assert_eq!(Format::from_accept(Some("text/plain")), Format::Prometheus);
        assert_eq!(Format::from_accept(None), Format::Prometheus);
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(3.0), "3");
    }
}
