//! Fuzzing of the blocking session's reply parsing (`Conn::query`, `prepare`, `exec`): a
//! server on a Unix socket, driven by this test, answers the handshake and then sends the
//! replies a case generates. Valid result sets must come back as the rows they encode;
//! mutated and random replies must give an error or a result, never a panic, a hang or an
//! allocation out of proportion. See `qpslab-fuzzkit` for the long mode.

use qpslab_core::{ConnectOptions, Dsn};
use qpslab_fuzzkit::bytes::{lenenc, lenenc_str};
use qpslab_fuzzkit::{measure, FuzzRng, Target};
use qpslab_wire::caps::{CLIENT_DEPRECATE_EOF, MARIADB_CLIENT_CACHE_METADATA};
use qpslab_wire::{Conn, QueryResult, Value};
use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::mpsc;
use std::sync::Mutex;

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

/// What the server sends: its capability flags, then one reply per client command.
type Script = (u64, Vec<Vec<u8>>);

/// A server thread serving one connection per script, and where to reach it.
struct ScriptedServer {
    scripts: Mutex<mpsc::Sender<Script>>,
    options: ConnectOptions,
}

fn frame(out: &mut Vec<u8>, payload: &[u8], seq: u8) {
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes()[..3]);
    out.push(seq);
    out.extend_from_slice(payload);
}

fn greeting(caps: u64) -> Vec<u8> {
    let mut p = vec![10];
    p.extend_from_slice(b"10.11.0-MariaDB-fuzz\0");
    p.extend_from_slice(&7u32.to_le_bytes());
    p.extend_from_slice(b"abcdefgh\0");
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 6]);
    p.extend_from_slice(&((caps >> 32) as u32).to_le_bytes());
    p.extend_from_slice(b"ijklmnopqrst\0mysql_native_password\0");
    p
}

fn serve(mut s: UnixStream, (caps, replies): Script) {
    // Everything is sent at once, then the end of the stream: a client that waits for more
    // than a reply holds sees the end instead of a silent server (a blocking client with no
    // read timeout would wait for a real one forever).
    let mut all = Vec::new();
    frame(&mut all, &greeting(caps), 0);
    frame(&mut all, &[0, 0, 0, 2, 0, 0, 0], 2);
    for r in replies {
        all.extend_from_slice(&r);
    }
    let writer = s.try_clone().map(|mut w| {
        std::thread::spawn(move || {
            let _ = w.write_all(&all);
            let _ = w.shutdown(std::net::Shutdown::Write);
        })
    });
    let mut sink = [0u8; 4096];
    while matches!(s.read(&mut sink), Ok(n) if n > 0) {}
    if let Ok(w) = writer {
        let _ = w.join();
    }
}

fn socket_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("qpslab-fuzz-conn-{}", std::process::id()))
}

/// Removes the socket's directory when the test process exits (statics are never dropped).
extern "C" fn remove_socket_dir() {
    let _ = std::fs::remove_dir_all(socket_dir());
}

fn server() -> &'static ScriptedServer {
    static SERVER: std::sync::OnceLock<ScriptedServer> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        let dir = socket_dir();
        let _ = std::fs::create_dir_all(&dir);
        // SAFETY: registers a plain function that touches only the file system.
        unsafe { libc::atexit(remove_socket_dir) };
        let path = dir.join("s.sock");
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).expect("a socket to listen on");
        let (tx, rx) = mpsc::channel::<Script>();
        std::thread::spawn(move || {
            for script in rx {
                match listener.accept() {
                    Ok((s, _)) => serve(s, script),
                    Err(_) => return,
                }
            }
        });
        let dsn = format!("mysql://fuzz@localhost/?socket={}", path.display());
        let dsn: Dsn = dsn.parse().expect("a DSN for the socket");
        ScriptedServer {
            scripts: Mutex::new(tx),
            options: dsn.options().clone(),
        }
    })
}

/// Capabilities a MariaDB server offers, with or without DEPRECATE_EOF and metadata caching.
fn server_caps(r: &mut FuzzRng) -> u64 {
    // PROTOCOL_41, TRANSACTIONS, SECURE_CONNECTION, MULTI_RESULTS, PS_MULTI_RESULTS,
    // PLUGIN_AUTH, PLUGIN_AUTH_LENENC_CLIENT_DATA; bit 0 clear (MariaDB's extended flags).
    let mut c = (1 << 9) | (1 << 13) | (1 << 15) | (1 << 17) | (1 << 18) | (1 << 19) | (1 << 21);
    if r.one_in(2) {
        c |= CLIENT_DEPRECATE_EOF;
    }
    if r.one_in(2) {
        c |= MARIADB_CLIENT_CACHE_METADATA;
    }
    c
}

fn word(r: &mut FuzzRng, max: usize) -> String {
    (0..r.len(max))
        .map(|_| *r.pick(&['a', 'z', '0', '_', ' ', '-', 'é']))
        .collect()
}

fn column_def(name: &str, kind: u8) -> Vec<u8> {
    let mut p = Vec::new();
    for part in ["def", "db", "t", "t"] {
        lenenc_str(&mut p, part.as_bytes());
    }
    lenenc_str(&mut p, name.as_bytes());
    lenenc_str(&mut p, name.as_bytes());
    p.extend_from_slice(&[0x0c, 33, 0, 11, 0, 0, 0, kind, 0, 0, 0, 0, 0]);
    p
}

/// Frames packets from sequence 1 (the reply to a command).
struct Reply {
    bytes: Vec<u8>,
    seq: u8,
    caps: u64,
}

impl Reply {
    fn new(caps: u64) -> Reply {
        Reply {
            bytes: Vec::new(),
            seq: 1,
            caps,
        }
    }
    fn packet(&mut self, p: &[u8]) {
        frame(&mut self.bytes, p, self.seq);
        self.seq = self.seq.wrapping_add(1);
    }
    fn deprecate_eof(&self) -> bool {
        self.caps & CLIENT_DEPRECATE_EOF != 0
    }
    fn eof(&mut self) {
        if !self.deprecate_eof() {
            self.packet(&[0xFE, 0, 0, 2, 0]);
        }
    }
    fn end(&mut self) {
        if self.deprecate_eof() {
            self.packet(&[0xFE, 0, 0, 2, 0, 0, 0]);
        } else {
            self.packet(&[0xFE, 0, 0, 2, 0]);
        }
    }
    fn columns(&mut self, names: &[String], kind: u8) {
        for n in names {
            self.packet(&column_def(n, kind));
        }
        self.eof();
    }
    fn count(&mut self, n: usize, follows: bool) {
        let mut p = Vec::new();
        lenenc(&mut p, n as u64);
        if self.caps & MARIADB_CLIENT_CACHE_METADATA != 0 {
            p.push(follows as u8);
        }
        self.packet(&p);
    }
}

/// A text-protocol reply to COM_QUERY and the result it must give.
fn text_reply(r: &mut FuzzRng, caps: u64) -> (Vec<u8>, QueryResult) {
    let mut out = Reply::new(caps);
    let mut want = QueryResult::default();
    if r.one_in(4) {
        want.affected_rows = r.below(1 << 40);
        want.last_insert_id = r.below(1000);
        let mut p = vec![0];
        lenenc(&mut p, want.affected_rows);
        lenenc(&mut p, want.last_insert_id);
        p.extend_from_slice(&[2, 0, 0, 0]);
        out.packet(&p);
        return (out.bytes, want);
    }
    want.columns = (0..1 + r.below(5)).map(|_| word(r, 10)).collect();
    out.count(want.columns.len(), true);
    out.columns(&want.columns, 253);
    for _ in 0..r.below(6) {
        let row: Vec<Option<String>> = want
            .columns
            .iter()
            .map(|_| (!r.one_in(5)).then(|| word(r, 30)))
            .collect();
        let mut p = Vec::new();
        for v in &row {
            match v {
                Some(v) => lenenc_str(&mut p, v.as_bytes()),
                None => p.push(0xFB),
            }
        }
        out.packet(&p);
        want.rows.push(row);
    }
    out.end();
    (out.bytes, want)
}

/// A prepare reply and an execute reply (binary rows of BIGINTs), with the parameter count
/// and the result the execute must give.
fn exec_replies(r: &mut FuzzRng, caps: u64) -> (Vec<u8>, Vec<u8>, u16, QueryResult) {
    let mut want = QueryResult {
        columns: (0..1 + r.below(4)).map(|_| word(r, 10)).collect(),
        ..QueryResult::default()
    };
    let params = r.below(3) as u16;
    let mut prep = Reply::new(caps);
    let mut p = vec![0];
    p.extend_from_slice(&5u32.to_le_bytes());
    p.extend_from_slice(&(want.columns.len() as u16).to_le_bytes());
    p.extend_from_slice(&params.to_le_bytes());
    p.extend_from_slice(&[0, 0, 0]);
    prep.packet(&p);
    if params > 0 {
        let names: Vec<String> = (0..params).map(|_| "?".to_string()).collect();
        prep.columns(&names, 253);
    }
    prep.columns(&want.columns, 8);
    let mut exec = Reply::new(caps);
    let follows = r.one_in(2);
    exec.count(want.columns.len(), follows);
    if follows || caps & MARIADB_CLIENT_CACHE_METADATA == 0 {
        exec.columns(&want.columns, 8);
    }
    let n = want.columns.len();
    for _ in 0..r.below(5) {
        let mut p = vec![0];
        let mut bitmap = vec![0u8; (n + 9) / 8];
        let mut values = Vec::new();
        let mut row = Vec::new();
        for i in 0..n {
            if r.one_in(5) {
                bitmap[(i + 2) / 8] |= 1 << ((i + 2) % 8);
                row.push(None);
            } else {
                let v = r.u64() as i64 >> r.below(64);
                values.extend_from_slice(&v.to_le_bytes());
                row.push(Some(v.to_string()));
            }
        }
        p.extend_from_slice(&bitmap);
        p.extend_from_slice(&values);
        exec.packet(&p);
        want.rows.push(row);
    }
    exec.end();
    (prep.bytes, exec.bytes, params, want)
}

/// Runs one script: connect, then a query (one reply) or a prepare and an execute (two).
fn run(caps: u64, replies: Vec<Vec<u8>>, params: Option<u16>) -> Result<QueryResult, String> {
    let s = server();
    // One session at a time: scripts are served in the order connections arrive.
    let scripts = s.scripts.lock().unwrap_or_else(|e| e.into_inner());
    scripts.send((caps, replies)).unwrap();
    let mut c = Conn::connect(&s.options).map_err(|e| e.to_string())?;
    let r = match params {
        None => c.query("SELECT fuzz"),
        Some(_) => c.prepare("SELECT fuzz").and_then(|st| {
            let p = vec![Value::Int(1); st.params as usize];
            c.exec(&st, &p)
        }),
    };
    r.map_err(|e| e.to_string())
}

#[test]
fn fuzz_session_replies() {
    Target::weighted("wire_session_replies", 2_000, 0.03).run(
        |r| {
            let caps = server_caps(r);
            if r.one_in(2) {
                let (reply, want) = text_reply(r, caps);
                (caps, vec![reply], None, want)
            } else {
                let (prep, exec, params, want) = exec_replies(r, caps);
                (caps, vec![prep, exec], Some(params), want)
            }
        },
        |(caps, replies, params, want)| {
            let got = run(*caps, replies.clone(), *params);
            let mut got = got.unwrap();
            got.warnings = 0;
            assert_eq!(&got, want);
        },
    );
}

#[test]
fn fuzz_session_replies_mutated() {
    Target::weighted("wire_session_replies_hostile", 2_500, 0.05).run(
        |r| {
            let caps = server_caps(r);
            let (mut replies, params) = if r.one_in(2) {
                (vec![text_reply(r, caps).0], None)
            } else {
                let (prep, exec, params, _) = exec_replies(r, caps);
                (vec![prep, exec], Some(params))
            };
            let i = r.index(replies.len());
            replies[i] = if r.one_in(6) {
                r.bytes(100)
            } else {
                r.mutate(&replies[i])
            };
            (caps, replies, params)
        },
        |(caps, replies, params)| {
            let n: usize = replies.iter().map(|r| r.len()).sum();
            let (_, m) = measure(|| run(*caps, replies.clone(), *params));
            // The reader's buffers, plus a few copies of what arrived.
            assert!(m.largest <= 256 * 1024 + 16 * n, "{m:?} for {n} bytes");
        },
    );
}

#[test]
fn a_column_count_of_2_pow_40_is_not_allocated() {
    // The column count was trusted as a capacity: 2^40 columns asked for 32 TiB.
    let caps = server_caps(&mut FuzzRng::new(1)) | CLIENT_DEPRECATE_EOF;
    let mut reply = Vec::new();
    let mut count = vec![0xFE];
    count.extend_from_slice(&(1u64 << 40).to_le_bytes());
    count.push(1);
    frame(&mut reply, &count, 1);
    let (res, m) = measure(|| run(caps, vec![reply], None));
    assert!(res.is_err());
    assert!(m.largest <= 256 * 1024, "{m:?}");
}

#[test]
fn a_prepare_reply_claiming_65535_columns_allocates_as_they_arrive() {
    // Found by wire_session_replies_hostile: 2 MiB for a 223-byte reply.
    let caps = server_caps(&mut FuzzRng::new(2));
    let mut p = vec![0];
    p.extend_from_slice(&5u32.to_le_bytes());
    p.extend_from_slice(&[0xFF, 0xFF, 0, 0, 0, 0, 0]);
    let mut reply = Vec::new();
    frame(&mut reply, &p, 1);
    let (res, m) = measure(|| run(caps, vec![reply], Some(0)));
    assert!(res.is_err());
    assert!(m.largest <= 256 * 1024, "{m:?}");
}
