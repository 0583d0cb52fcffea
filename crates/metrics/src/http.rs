//! The endpoint: one thread accepting on a `TcpListener` and answering `GET /metrics` (and
//! `HEAD`) with the registry's text. Connections are served side by side by a small poll loop
//! over non-blocking sockets: a scraper that connects and sends nothing holds no one else up.
//!
//! Scrapes come first under a flood of connections. A new connection is read at once (under a
//! flood the accept comes late, so a scraper's request is already there and is answered
//! before anything is closed); a connection that has sent nothing is idle and closed after
//! [`IDLE_TIMEOUT`], one that has begun its request has [`IO_TIMEOUT`] in all; a request's head
//! is capped. At most [`PER_CLIENT`] connections per client address and [`MAX_CONNECTIONS`] in
//! all are open: room is made by closing an idle connection of the client with the most
//! (its oldest), else the new one is refused, so one flooding client fills its own share, not
//! the scrapers'. Dropping the [`Exporter`] stops the thread and closes the port.

use crate::{Format, MetricsError, Registry};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a scraper may take to send its request and read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the thread sleeps when no connection moved: how late a new request is seen, and
/// how often an idle endpoint looks at its stop flag.
const POLL: Duration = Duration::from_millis(10);
/// How long a connection may stay open without sending a byte: long enough for a scraper
/// across a slow link, short enough that idle ones cannot hold the slots.
const IDLE_TIMEOUT: Duration = Duration::from_millis(500);
/// The most connections open at once.
const MAX_CONNECTIONS: usize = 64;
/// The most connections open at once from one client address.
const PER_CLIENT: usize = 8;
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
    let mut clients: Vec<Client> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let mut moved = false;
        // Bounded, so a flood of connections cannot keep the loop from serving.
        for _ in 0..MAX_CONNECTIONS {
            let Ok((stream, peer)) = listener.accept() else {
                break;
            };
            moved = true;
            // A socket that cannot be made non-blocking could stall the loop: drop it.
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let mut c = Client::new(stream, peer.ip());
            // Read at once: a request already there is answered before any room is made.
            match c.step(registry) {
                Ok(Step::Done) | Err(_) => continue,
                Ok(_) => {}
            }
            if make_room(&mut clients, &c) {
                clients.push(c);
            }
        }
        // A failed exchange concerns that scraper only: its connection is closed. A scraper
        // that trickles its bytes still has IO_TIMEOUT in all.
        clients.retain_mut(|c| match c.step(registry) {
            Ok(Step::Done) | Err(_) => false,
            Ok(step) => {
                moved |= matches!(step, Step::Moved);
                c.since.elapsed() < c.timeout()
            }
        });
        if !moved {
            std::thread::sleep(POLL);
        }
    }
}

/// Makes room for `new` among `clients` within [`PER_CLIENT`] and [`MAX_CONNECTIONS`] by
/// closing the oldest idle connection of its own address (at its share) or of the address
/// with the most connections (all full); false when there is no idle one to close: `new` is
/// refused then, unless it has begun a request and an idle one of its own address can go.
fn make_room(clients: &mut Vec<Client>, new: &Client) -> bool {
    let of = |ip: IpAddr, clients: &[Client]| clients.iter().filter(|c| c.peer == ip).count();
    let victim_ip = if of(new.peer, clients) >= PER_CLIENT {
        new.peer
    } else if clients.len() >= MAX_CONNECTIONS {
        let mut ips: Vec<IpAddr> = clients.iter().map(|c| c.peer).collect();
        ips.sort();
        ips.dedup();
        match ips.into_iter().max_by_key(|&ip| of(ip, clients)) {
            Some(ip) => ip,
            None => return true,
        }
    } else {
        return true;
    };
    // Clients are in the order they came: the first idle one of that address is its oldest.
    match clients.iter().position(|c| c.peer == victim_ip && c.idle()) {
        Some(i) => {
            clients.remove(i);
            true
        }
        None => false,
    }
}

/// One scraper's connection: its request as read so far, then the answer as written so far.
struct Client {
    stream: TcpStream,
    peer: IpAddr,
    since: Instant,
    head: Vec<u8>,
    /// The whole answer, once the request is read.
    out: Option<Vec<u8>>,
    sent: usize,
}

/// What one look at a connection found.
enum Step {
    /// Bytes were read or written.
    Moved,
    /// Nothing to do until the scraper sends or reads.
    Waiting,
    /// Answered (or gone): close it.
    Done,
}

impl Client {
    fn new(stream: TcpStream, peer: IpAddr) -> Client {
        Client {
            stream,
            peer,
            since: Instant::now(),
            head: Vec::new(),
            out: None,
            sent: 0,
        }
    }

    /// Nothing received yet.
    fn idle(&self) -> bool {
        self.head.is_empty() && self.out.is_none()
    }

    /// How long the connection may stay open: [`IDLE_TIMEOUT`] while idle, else [`IO_TIMEOUT`].
    fn timeout(&self) -> Duration {
        if self.idle() {
            IDLE_TIMEOUT
        } else {
            IO_TIMEOUT
        }
    }

    /// Reads what has arrived, or writes what the socket takes, without blocking.
    fn step(&mut self, registry: &Registry) -> std::io::Result<Step> {
        let Some(out) = &self.out else {
            let mut buf = [0u8; 2048];
            let n = match self.stream.read(&mut buf) {
                Ok(n) => n,
                Err(e) if would_block(&e) => return Ok(Step::Waiting),
                Err(e) => return Err(e),
            };
            if n == 0 && self.head.is_empty() {
                return Ok(Step::Done);
            }
            self.head.extend_from_slice(&buf[..n]);
            // The end of the stream ends the head too (as before: answered as it is).
            if n == 0 || head_complete(&self.head) || self.head.len() > MAX_HEAD {
                self.out = Some(answer(&self.head, registry));
            }
            return Ok(Step::Moved);
        };
        match self.stream.write(&out[self.sent..]) {
            Ok(0) => Ok(Step::Done),
            Ok(n) => {
                self.sent += n;
                Ok(if self.sent == out.len() {
                    Step::Done
                } else {
                    Step::Moved
                })
            }
            Err(e) if would_block(&e) => Ok(Step::Waiting),
            Err(e) => Err(e),
        }
    }
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
    )
}

/// True once the head ends with its blank line.
fn head_complete(head: &[u8]) -> bool {
    head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n")
}

/// The answer to a request whose head is `head` (431 when it is longer than [`MAX_HEAD`]).
fn answer(head: &[u8], registry: &Registry) -> Vec<u8> {
    if head.len() > MAX_HEAD {
        return respond(
            "431 Request Header Fields Too Large",
            "text/plain",
            "",
            true,
        );
    }
    let head = String::from_utf8_lossy(head);
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
            respond("200 OK", format.content_type(), &body, head_only)
        }
        ("GET" | "HEAD", _) => respond(
            "404 Not Found",
            "text/plain",
            "qpslab serves GET /metrics only\n",
            head_only,
        ),
        _ => respond("405 Method Not Allowed", "text/plain", "", false),
    }
}

fn respond(status: &str, content_type: &str, body: &str, head_only: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    if !head_only {
        out.push_str(body);
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

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
    fn idle_connections_do_not_hold_up_a_scrape() {
        // 200 connections that send nothing: each one held the thread for its timeout.
        let e = Exporter::start("127.0.0.1:0").unwrap();
        let idle: Vec<TcpStream> = (0..200)
            .map(|_| TcpStream::connect(e.local_addr()).unwrap())
            .collect();
        std::thread::sleep(Duration::from_millis(100)); // all accepted before the scrape
        let started = Instant::now();
        let out = get(e.local_addr(), "GET /metrics HTTP/1.1\r\n\r\n");
        let took = started.elapsed();
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        // Well under one idle connection's timeout, with room for a busy machine.
        assert!(took < IO_TIMEOUT, "{took:?}");
        drop(idle);
    }

    /// A connection to `addr` (IPv4) from the address `from` (any of 127/8 on Linux), so one
    /// host can be several clients; `None` when the connect fails or takes over a second.
    fn connect_from(from: std::net::Ipv4Addr, addr: SocketAddr) -> Option<TcpStream> {
        use std::os::fd::FromRawFd;
        let SocketAddr::V4(to) = addr else {
            return None;
        };
        let sin = |ip: std::net::Ipv4Addr, port: u16| libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(ip).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        // SAFETY: a new socket; the addresses and the timeout are valid values of their types
        // and sizes; the descriptor is owned by the TcpStream (or closed) afterwards.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            assert!(fd >= 0, "socket");
            let stream = TcpStream::from_raw_fd(fd);
            let second = libc::timeval {
                tv_sec: 1,
                tv_usec: 0,
            };
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_SNDTIMEO,
                (&second as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
            let src = sin(from, 0);
            if libc::bind(fd, (&src as *const libc::sockaddr_in).cast(), len) != 0 {
                return None;
            }
            let dst = sin(*to.ip(), to.port());
            if libc::connect(fd, (&dst as *const libc::sockaddr_in).cast(), len) != 0 {
                return None;
            }
            Some(stream)
        }
    }

    /// Opens connections to `addr` from 127.0.0.2 that send nothing, as fast as it can,
    /// keeping at most `open` of them (the oldest closed), until `stop`.
    fn flood(addr: SocketAddr, open: usize, stop: Arc<AtomicBool>) -> JoinHandle<usize> {
        std::thread::spawn(move || {
            let mut held = std::collections::VecDeque::new();
            let mut made = 0;
            while !stop.load(Ordering::SeqCst) {
                if let Some(s) = connect_from([127, 0, 0, 2].into(), addr) {
                    made += 1;
                    held.push_back(s);
                }
                if held.len() > open {
                    held.pop_front();
                }
            }
            made
        })
    }

    #[test]
    fn issue_45_scrapes_are_answered_under_a_flood_of_idle_connections() {
        let e = Exporter::start("127.0.0.1:0").unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let floods: Vec<_> = (0..3)
            .map(|_| flood(e.local_addr(), 300, stop.clone()))
            .collect();
        std::thread::sleep(Duration::from_millis(300));
        let mut failed = Vec::new();
        let mut served = 0;
        for i in 0..10 {
            let Some(mut s) = connect_from([127, 0, 0, 1].into(), e.local_addr()) else {
                failed.push((i, "no connection".to_string()));
                continue;
            };
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            // A scraper across a slow link: its request comes a while after its connection,
            // while the flood goes on.
            std::thread::sleep(Duration::from_millis(150));
            s.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
            let mut out = Vec::new();
            let _ = s.read_to_end(&mut out);
            if out.starts_with(b"HTTP/1.1 200 OK") {
                served += 1;
            } else {
                failed.push((i, String::from_utf8_lossy(&out).into_owned()));
            }
        }
        // One from the flood's own address, its request sent at once, is answered too.
        let mut own = connect_from([127, 0, 0, 2].into(), e.local_addr()).expect("connect");
        own.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        own.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        let mut out = Vec::new();
        let _ = own.read_to_end(&mut out);
        stop.store(true, Ordering::SeqCst);
        let made: usize = floods.into_iter().map(|f| f.join().unwrap()).sum();
        assert!(
            failed.is_empty(),
            "{} of 10 scrapes failed ({served} served; flood of {made}): {failed:?}",
            failed.len()
        );
        assert!(
            made > 2 * MAX_CONNECTIONS,
            "a flood of {made} connections only"
        );
        assert!(
            out.starts_with(b"HTTP/1.1 200 OK"),
            "{}",
            String::from_utf8_lossy(&out)
        );
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
