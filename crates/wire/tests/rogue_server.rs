//! A rogue (or man-in-the-middle) server cannot exhaust the blocking session: a server on a
//! Unix socket, driven by this test, completes a real handshake and then answers the first
//! command with a hostile reply that stays open. The client must give up at once with a
//! protocol error, having allocated no more than its `max_allowed_packet` (issue 34, item 6).

use qpslab_core::{ConnectOptions, Dsn};
use qpslab_fuzzkit::measure;
use qpslab_wire::Conn;
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

/// One physical packet: 3-byte length, sequence, payload.
fn frame(payload: &[u8], seq: u8) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    out.push(seq);
    out.extend_from_slice(payload);
    out
}

/// A MariaDB greeting offering mysql_native_password, DEPRECATE_EOF off.
fn greeting() -> Vec<u8> {
    // PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION, MULTI_RESULTS, PS_MULTI_RESULTS,
    // PLUGIN_AUTH, PLUGIN_AUTH_LENENC_CLIENT_DATA.
    let caps: u32 =
        (1 << 9) | (1 << 13) | (1 << 15) | (1 << 17) | (1 << 18) | (1 << 19) | (1 << 21);
    let mut p = vec![10];
    p.extend_from_slice(b"10.11.19-MariaDB-rogue\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
    p
}

/// Reads one packet from the client; false at the end of the stream.
fn read_packet(s: &mut UnixStream) -> bool {
    let mut h = [0u8; 4];
    if s.read_exact(&mut h).is_err() {
        return false;
    }
    let mut body = vec![0u8; u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize];
    s.read_exact(&mut body).is_ok()
}

/// Serves one session on a fresh socket: the handshake, then `reply` writes its answer to the
/// first command; the connection then stays open and silent until the client leaves. Returns
/// the options to connect with (read timeout 30 s: a client that waits is seen waiting).
fn rogue(
    reply: impl FnOnce(&mut UnixStream) + Send + 'static,
) -> (ConnectOptions, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rogue.sock");
    let listener = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        let _ = s.write_all(&frame(&greeting(), 0));
        if !read_packet(&mut s) {
            return;
        }
        let _ = s.write_all(&frame(&[0, 0, 0, 2, 0, 0, 0], 2));
        if !read_packet(&mut s) {
            return;
        }
        reply(&mut s);
        let mut sink = [0u8; 4096];
        while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    });
    let dsn: Dsn = format!("mysql://rogue@localhost/?socket={}", path.display())
        .parse()
        .unwrap();
    let mut o = dsn.options().clone();
    o.timeouts.read = Some(Duration::from_secs(30));
    (o, dir)
}

#[test]
fn continuation_packets_stop_at_max_allowed_packet() {
    // 300 x 16 MiB continuations were reassembled into 4.9 GB.
    let (mut o, _dir) = rogue(|s| {
        let mut chunk = vec![b'x'; 4 + 0xFF_FFFF];
        chunk[..3].copy_from_slice(&[0xFF, 0xFF, 0xFF]);
        for i in 0..300u32 {
            chunk[3] = (1 + i) as u8;
            if s.write_all(&chunk).is_err() {
                return; // the client gave up and closed
            }
        }
    });
    o.max_allowed_packet = 64 << 20;
    let started = Instant::now();
    let (res, m) = measure(|| Conn::connect(&o).and_then(|mut c| c.query("SELECT 1")));
    let e = res.unwrap_err().to_string();
    assert!(e.contains("max_allowed_packet (67108864 bytes)"), "{e}");
    // The reassembly buffer and the read buffer, never what the server announced.
    assert!(m.largest <= 2 * (64 << 20), "{m:?}");
    assert!(m.total <= 8 * (64 << 20), "{m:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_column_count_of_a_billion_is_refused_at_once() {
    // It was accepted, and the client waited for the first of 10^9 column definitions.
    let (o, _dir) = rogue(|s| {
        let mut count = vec![0xFE];
        count.extend_from_slice(&1_000_000_000u64.to_le_bytes());
        let _ = s.write_all(&frame(&count, 1));
    });
    let started = Instant::now();
    let (res, m) = measure(|| Conn::connect(&o).and_then(|mut c| c.query("SELECT 1")));
    let e = res.unwrap_err().to_string();
    assert!(e.contains("1000000000 columns"), "{e}");
    assert!(m.largest <= 256 * 1024, "{m:?}");
    // No wait for the server: the count alone is the error (the read timeout is 30 s).
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
