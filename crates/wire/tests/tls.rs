//! TLS against a real MariaDB started with a certificate this test generates (openssl CLI):
//! every ssl-mode, certificate and host-name checks, and a non-blocking TLS stream.

use qpslab_core::{ConnectOptions, Endpoint, SslMode};
use qpslab_sandbox::{Sandbox, SandboxHome, SandboxSpec};
use qpslab_wire::codec::{write_com_query, Reply, ReplyReader};
use qpslab_wire::{Conn, Error};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA, a server certificate it signs for IP 127.0.0.1 only, and an unrelated CA.
fn make_certs(dir: &Path) {
    for ca in ["ca", "other-ca"] {
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                &format!("/CN=qpslab test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.pem"),
            ],
        );
    }
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=qpslab test server",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    );
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
            "-out",
            "server.pem",
        ],
    );
}

fn start_tls_server(dir: &Path) -> Sandbox {
    make_certs(dir);
    // Started by root, the server runs as the unprivileged mysql account: it must be able to
    // read these throwaway test files.
    use std::os::unix::fs::PermissionsExt;
    let readable = |p: &Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    readable(dir, 0o755);
    for f in ["server.pem", "server.key", "ca.pem"] {
        readable(&dir.join(f), 0o644);
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let templates = std::env::temp_dir()
        .join(format!("qpslab-test-{uid}"))
        .join("templates");
    let home = SandboxHome::new(dir.join("lab")).with_templates(templates);
    let mut spec = SandboxSpec::new("wire-tls");
    for (k, f) in [
        ("ssl_cert", "server.pem"),
        ("ssl_key", "server.key"),
        ("ssl_ca", "ca.pem"),
    ] {
        spec.settings
            .push((k.into(), dir.join(f).display().to_string()));
    }
    qpslab_sandbox::start(&home, &spec).unwrap()
}

fn opts(s: &Sandbox, host: &str, mode: SslMode, ca: Option<&Path>) -> ConnectOptions {
    let mut o = s.tcp_options();
    o.endpoint = Endpoint::Tcp {
        host: host.into(),
        port: s.port(),
    };
    o.ssl_mode = mode;
    o.ssl_ca = ca.map(Path::to_path_buf);
    o
}

fn cipher(c: &mut Conn) -> String {
    let r = c.query("SHOW SESSION STATUS LIKE 'Ssl_cipher'").unwrap();
    r.rows[0][1].clone().unwrap_or_default()
}

#[test]
fn tls_modes_and_nonblocking_stream() {
    let tmp = tempfile::tempdir().unwrap();
    let server = start_tls_server(tmp.path());
    let ca = tmp.path().join("ca.pem");
    let other = tmp.path().join("other-ca.pem");

    let mut plain = Conn::connect(&opts(&server, "127.0.0.1", SslMode::Disabled, None)).unwrap();
    assert!(!plain.capabilities().ssl());
    assert_eq!(cipher(&mut plain), "");

    for mode in [SslMode::Preferred, SslMode::Required] {
        let mut c = Conn::connect(&opts(&server, "127.0.0.1", mode, None)).unwrap();
        assert!(c.capabilities().ssl(), "{mode:?}");
        assert_ne!(cipher(&mut c), "", "{mode:?}");
    }
    // The certificate names 127.0.0.1 only: VERIFY_CA ignores the name, VERIFY_IDENTITY not.
    Conn::connect(&opts(
        &server,
        "127.0.0.1",
        SslMode::VerifyIdentity,
        Some(&ca),
    ))
    .unwrap();
    Conn::connect(&opts(&server, "localhost", SslMode::VerifyCa, Some(&ca))).unwrap();
    let e = Conn::connect(&opts(
        &server,
        "localhost",
        SslMode::VerifyIdentity,
        Some(&ca),
    ))
    .unwrap_err();
    assert!(matches!(e, Error::Tls(_)), "{e:?}");
    let e =
        Conn::connect(&opts(&server, "127.0.0.1", SslMode::VerifyCa, Some(&other))).unwrap_err();
    assert!(matches!(e, Error::Tls(_)), "{e:?}");
    let e = Conn::connect(&opts(&server, "127.0.0.1", SslMode::VerifyCa, None)).unwrap_err();
    assert!(e.to_string().contains("ssl-ca"), "{e}");
    // The CA file's PEM: other sections (a key bundled with the certificate) are skipped, a
    // file without a certificate or with a damaged one is refused with its path.
    let read = |f: &str| std::fs::read_to_string(tmp.path().join(f)).unwrap();
    let pem = |name: &str, body: String| {
        let path = tmp.path().join(name);
        std::fs::write(&path, body).unwrap();
        path
    };
    let bundle = pem("bundle.pem", read("ca.key") + &read("ca.pem"));
    Conn::connect(&opts(
        &server,
        "127.0.0.1",
        SslMode::VerifyCa,
        Some(&bundle),
    ))
    .unwrap();
    let key_only = pem("key-only.pem", read("ca.key"));
    let e = Conn::connect(&opts(
        &server,
        "127.0.0.1",
        SslMode::VerifyCa,
        Some(&key_only),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("holds no certificate"), "{e}");
    let damaged = pem(
        "damaged.pem",
        "-----BEGIN CERTIFICATE-----\n!!!not base64!!!\n-----END CERTIFICATE-----\n".into(),
    );
    let e = Conn::connect(&opts(
        &server,
        "127.0.0.1",
        SslMode::VerifyCa,
        Some(&damaged),
    ))
    .unwrap_err();
    assert!(e.to_string().contains("bad PEM in ssl-ca"), "{e}");

    // Hand the TLS session to a non-blocking loop: a 300 kB reply arrives in many records and
    // must come through complete by draining reads until WouldBlock after each poll wake-up.
    let c = Conn::connect(&opts(&server, "127.0.0.1", SslMode::Required, None)).unwrap();
    let (mut s, info) = c.into_stream();
    assert!(s.is_tls());
    s.set_nonblocking(true).unwrap();
    // Nothing was asked yet: a read on a really non-blocking stream must say so at once.
    let mut probe = [0u8; 16];
    let idle = s.read(&mut probe).map(|_| ()).unwrap_err();
    assert_eq!(
        idle.kind(),
        ErrorKind::WouldBlock,
        "the idle stream must not block"
    );
    let mut q = Vec::new();
    write_com_query(&mut q, b"SELECT REPEAT('x', 100000) UNION ALL SELECT REPEAT('y', 100000) UNION ALL SELECT REPEAT('z', 100000)");
    let mut written = 0;
    while written < q.len() {
        match s.write(&q[written..]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait(&s, libc::POLLOUT),
            Err(e) => panic!("{e}"),
        }
    }
    while s.wants_write() {
        match s.flush() {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait(&s, libc::POLLOUT),
            Err(e) => panic!("{e}"),
        }
    }
    let mut reader = ReplyReader::new(info.caps, false);
    let mut buf = vec![0u8; 8192];
    let (mut have, mut total) = (0, 0);
    let reply = loop {
        let (used, r) = reader.feed(&buf[..have]).unwrap();
        buf.copy_within(used..have, 0);
        have -= used;
        if r.is_some() {
            break r;
        }
        match s.read(&mut buf[have..]) {
            Ok(0) => panic!("server closed"),
            Ok(n) => {
                have += n;
                total += n;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait(&s, libc::POLLIN),
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(reply, Some(Reply::Rows { rows: 3 }));
    assert!(total > 300_000, "{total}");
    server.stop().unwrap();
    // Run as root the server's files live outside the temporary lab: remove them too.
    qpslab_sandbox::remove(&SandboxHome::new(tmp.path().join("lab")), "wire-tls").unwrap();
}

fn wait(s: &qpslab_wire::Stream, events: i16) {
    let mut p = libc::pollfd {
        fd: s.as_raw_fd(),
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, 10_000) };
    assert!(r > 0, "poll timed out");
}
