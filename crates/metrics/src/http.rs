//! The endpoint: one thread accepting on a `TcpListener`, answering `GET /metrics` (and
//! `HEAD`) with the registry's text, one connection at a time. Every read and write has a
//! timeout and a request's head is capped, so a slow or silent scraper costs the thread a few
//! seconds, never the run. Dropping the [`Exporter`] stops the thread and closes the port.

use crate::{Format, MetricsError, Registry};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a scraper may take to send its request or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How often the accepting thread looks at its stop flag when nobody connects.
const POLL: Duration = Duration::from_millis(50);
/// The largest request head read; a longer one is answered 431.
const MAX_HEAD: usize = 16 << 10;

/// A running endpoint, serving its [`Registry`] until dropped.
pub struct Exporter {
    addr: SocketAddr,
    registry: Registry,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Listens on `addr` (`HOST:PORT`; port 0 picks a free one) and serves `GET /metrics`
    /// from a new thread. A port in use is [`MetricsError::Bind`], before anything runs.
    pub fn start(addr: &str) -> Result<Exporter, MetricsError> {
        let bad = |reason: String| MetricsError::Address {
            addr: addr.to_string(),
            reason,
        };
        let resolved = addr
            .to_socket_addrs()
            .map_err(|e| bad(e.to_string()))?
            .next()
            .ok_or_else(|| bad("it resolves to no address".into()))?;
        let listener = TcpListener::bind(resolved).map_err(|source| MetricsError::Bind {
            addr: addr.to_string(),
            source,
        })?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let registry = Registry::new();
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (registry, stop) = (registry.clone(), stop.clone());
            std::thread::Builder::new()
                .name("metrics".into())
                .spawn(move || serve(&listener, &registry, &stop))?
        };
        Ok(Exporter {
            addr: local,
            registry,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the port chosen, when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The registry it serves, for the run to report into.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: &TcpListener, registry: &Registry, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            // A failed exchange concerns that scraper only.
            Ok((stream, _)) => {
                let _ = answer(stream, registry);
            }
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Reads one request and answers it, then closes the connection.
fn answer(mut stream: TcpStream, registry: &Registry) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let Some(head) = read_head(&mut stream)? else {
        return respond(
            &mut stream,
            "431 Request Header Fields Too Large",
            "text/plain",
            "",
            true,
        );
    };
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let accept = lines.find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim().eq_ignore_ascii_case("accept").then(|| v.trim())
    });
    let head_only = method == "HEAD";
    match (method, path) {
        ("GET" | "HEAD", "/metrics") => {
            let format = Format::from_accept(accept);
            let body = registry.render(format);
            respond(
                &mut stream,
                "200 OK",
                format.content_type(),
                &body,
                head_only,
            )
        }
        ("GET" | "HEAD", _) => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            "qpslab serves GET /metrics only\n",
            head_only,
        ),
        _ => respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            "",
            false,
        ),
    }
}

/// The request's head up to its blank line; `None` when it is longer than [`MAX_HEAD`]. A
/// scraper that trickles bytes still has [`IO_TIMEOUT`] in all.
fn read_head(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let started = Instant::now();
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() > MAX_HEAD {
            return Ok(None);
        }
        if started.elapsed() > IO_TIMEOUT {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(Some(String::from_utf8_lossy(&head).into_owned()))
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &str,
    head_only: bool,
) -> std::io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    if !head_only {
        out.push_str(body);
    }
    stream.write_all(out.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(addr: SocketAddr, request: &str) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_metrics_in_the_format_asked_for() {
        let e = Exporter::start("127.0.0.1:0").unwrap();
        let labels = crate::Labels {
            run: "1".into(),
            threads: 2,
            cell: None,
        };
        let s = qpslab_core::Sample {
            interval_s: 1.0,
            events: 5,
            ..Default::default()
        };
        e.registry().record(&labels, &s, &[]);
        let plain = get(e.local_addr(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(plain.starts_with("HTTP/1.1 200 OK\r\n"), "{plain}");
        assert!(plain.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
        assert!(plain.contains("qpslab_events_total{run=\"1\",threads=\"2\"} 5\n"));
        let om = get(
            e.local_addr(),
            "GET /metrics HTTP/1.1\r\nAccept: application/openmetrics-text;version=1.0.0\r\n\r\n",
        );
        assert!(om.contains(
            "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n"
        ));
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert!(get(e.local_addr(), "GET / HTTP/1.0\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(e.local_addr(), "POST /metrics HTTP/1.0\r\n\r\n").starts_with("HTTP/1.1 405"));
    }

    #[test]
    fn a_silent_scraper_does_not_block_the_next() {
        let e = Exporter::start("127.0.0.1:0").unwrap();
        let _silent = TcpStream::connect(e.local_addr()).unwrap();
        // Served after the silent one's timeout at the latest.
        let out = get(e.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n");
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
    }

    #[test]
    fn a_port_in_use_is_the_users_error_and_drop_frees_the_port() {
        let e = Exporter::start("127.0.0.1:0").unwrap();
        let addr = e.local_addr().to_string();
        let err = Exporter::start(&addr).err().unwrap();
        assert!(err.is_user_error(), "{err}");
        assert!(err.to_string().contains("in use"), "{err}");
        drop(e);
        assert!(Exporter::start(&addr).is_ok());
        let err = Exporter::start("no-port").err().unwrap();
        assert!(err.is_user_error(), "{err}");
    }
}
