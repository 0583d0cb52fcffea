//! Inputs the fuzz targets found, kept as plain tests named after what they guard.

use crate::auth::{AuthFlow, Step};
use crate::packet::PacketIo;
use crate::rows::{binary_row, Column};
use crate::stream::Stream;
use qpslab_core::Secret;
use qpslab_fuzzkit::measure;
use std::io::Write;

#[test]
fn binary_time_with_a_huge_day_count_is_not_an_overflow() {
    // Found by wire_binary_row: days * 24 overflowed u32.
    let col = Column {
        name: "t".into(),
        kind: 11,
        unsigned: false,
        binary: false,
    };
    let p = [0, 0, 8, 0, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3];
    let row = binary_row(&p, &[col]).unwrap();
    assert_eq!(row, [Some("103079215081:02:03".to_string())]);
}

#[test]
fn caching_sha2_key_request_after_an_empty_scramble_is_an_error() {
    // Found by wire_auth_exchange: a switch to caching_sha2_password without a scramble, then
    // full authentication over TCP, divided by the scramble's length.
    let pw = Secret::new("pw");
    let mut f = AuthFlow::new("caching_sha2_password", &[], &pw, false);
    assert_eq!(f.step(&[1, 4]).unwrap(), Step::Send(vec![2]));
    let mut key = vec![1];
    key.extend_from_slice(super::handshake::pem());
    let e = f.step(&key).unwrap_err();
    assert!(e.to_string().contains("scramble"), "{e}");
}

#[test]
fn a_packet_length_claimed_is_not_allocated_before_it_arrives() {
    // Found by wire_framing_random: a header claiming 16 MiB made the reader allocate it all
    // for the 4 bytes that came.
    let (mut w, r) = std::os::unix::net::UnixStream::pair().unwrap();
    w.write_all(&[0xFE, 0xFF, 0xFF, 0, 1, 2, 3]).unwrap();
    drop(w);
    let mut io = PacketIo::new(Stream::Unix(r), None);
    let (res, m) = measure(|| io.read());
    assert!(res.is_err());
    assert!(m.largest <= 128 * 1024, "{m:?}");
}
