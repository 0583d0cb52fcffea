use super::*;

/// A temporary directory with option files written into it.
struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

fn pairs(lines: &[OptionLine]) -> Vec<(&str, &str)> {
    lines
        .iter()
        .map(|l| (l.name.as_str(), l.value.as_str()))
        .collect()
}

#[test]
fn reads_client_groups_with_precedence() {
    let text = "# comment\n[mysqld]\nport=1\n[mysql]\nuser=fromMysql\n[client]\nuser = bench\npassword=\"s3 cr#t\"\nssl_ca=/ca.pem # trailing\nport=3307\n";
    let o = parse_client_options(text).unwrap();
    assert_eq!(o["user"], "fromMysql", "[mysql] overrides [client]");
    assert_eq!(o["password"], "s3 cr#t");
    assert_eq!(o["ssl-ca"], "/ca.pem");
    assert_eq!(o["port"], "3307");
}

#[test]
fn rejects_garbage() {
    let e = parse_client_options("user=x\n").unwrap_err();
    assert_eq!(e.line, Some(1), "{e}");
    assert!(e.to_string().contains("outside of any [group]"), "{e}");
    let e = parse_client_options("\n[client\nuser=x\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "<option file>:2: unclosed group header '[client'"
    );
}

#[test]
fn quotes_escapes_and_comments_as_the_servers_read_them() {
    let text = "[mysqld] # trailing text after the header\n\
                a = 'x # y' # gone\n\
                b=v#w\n\
                c = \"say \\\"hi\\\"\"\n\
                d = C:\\\\tmp\\new\\q\n\
                e = 'it\\'s'\n\
                f = ;not a comment\n\
                skip-log-bin\n\
                g =\n\
                h = \"\n";
    let o = parse(text, Path::new("p.cnf"), Groups::SERVER).unwrap();
    assert_eq!(
        pairs(&o),
        vec![
            ("a", "x # y"),
            ("b", "v"),
            ("c", "say \"hi\""),
            ("d", "C:\\tmp\new\\q"),
            ("e", "it's"),
            ("f", ";not a comment"),
            ("skip-log-bin", ""),
            ("g", ""),
            ("h", "\""),
        ]
    );
    assert_eq!((o[2].line, o[2].group.as_str()), (4, "mysqld"));
}

#[test]
fn headerless_lines_count_only_where_asked_and_only_in_the_first_file() {
    let d = Dir::new();
    let inc = d.write("inc.cnf", "bare=1\n");
    let top = d.write(
        "top.cnf",
        &format!("max_connections=9\n!include {}\n", inc.display()),
    );
    let e = read(&top, Groups::SERVER).unwrap_err();
    assert_eq!((e.file.as_path(), e.line), (inc.as_path(), Some(1)), "{e}");
    d.write("inc.cnf", "[client]\nuser=u\n[server]\nbare=1\n");
    let o = read(&top, Groups::SERVER).unwrap();
    assert_eq!(pairs(&o), vec![("max_connections", "9"), ("bare", "1")]);
    assert_eq!(o[0].group, "");
    assert!(read(&top, Groups::CLIENT).is_err());
}

#[test]
fn include_reads_in_place_and_the_includer_keeps_its_group() {
    let d = Dir::new();
    let inc = d.write("sub/inc.cnf", "[mysqld]\nb=2\n[client]\nuser=x\n");
    let top = d.write(
        "my.cnf",
        &format!("[mariadb]\na=1\n!include {}\nc=3\n", inc.display()),
    );
    let o = read(&top, Groups::SERVER).unwrap();
    assert_eq!(pairs(&o), vec![("a", "1"), ("b", "2"), ("c", "3")]);
    assert_eq!((o[1].file.as_path(), o[1].line), (inc.as_path(), 2));
    assert_eq!(o[2].group, "mariadb");
    let c = read_client_options(&top).unwrap();
    assert_eq!(c.get("user").map(String::as_str), Some("x"));
}

#[test]
fn includedir_reads_cnf_files_in_name_order() {
    let d = Dir::new();
    d.write("conf.d/20-b.cnf", "[mysqld]\nx=b\n");
    d.write("conf.d/10-a.cnf", "[mysqld]\nx=a\n");
    d.write("conf.d/30-c.ini", "[mysqld]\nx=ini\n");
    d.write("conf.d/README", "not an option file\n");
    d.write("conf.d/40-d.cnf.bak", "[mysqld]\nx=bak\n");
    std::fs::create_dir_all(d.path("conf.d/50-dir.cnf")).unwrap();
    let top = d.write(
        "my.cnf",
        &format!(
            "[mysqld]\n!includedir   {}/  \n",
            d.path("conf.d").display()
        ),
    );
    let o = read(&top, Groups::SERVER).unwrap();
    assert_eq!(pairs(&o), vec![("x", "a"), ("x", "b")]);
}

#[test]
fn a_missing_include_is_an_error_naming_it_and_the_directive() {
    let d = Dir::new();
    let missing = d.path("nope.cnf");
    let top = d.write(
        "my.cnf",
        &format!("[client]\n\n!include {}\n", missing.display()),
    );
    let e = read_client_options(&top).unwrap_err();
    assert_eq!((e.file.as_path(), e.line), (top.as_path(), Some(3)));
    assert!(e.reason.contains(&missing.display().to_string()), "{e}");
    let top = d.write(
        "dir.cnf",
        &format!("[client]\n!includedir {}\n", missing.display()),
    );
    let e = read_client_options(&top).unwrap_err();
    assert!(e.reason.contains("cannot read directory"), "{e}");
    let e = read_client_options(&d.path("absent.cnf")).unwrap_err();
    assert_eq!((e.file, e.line), (d.path("absent.cnf"), None));
    for empty in ["!include", "!includedir   "] {
        let e = parse_client_options(&format!("[client]\n{empty}\n")).unwrap_err();
        assert!(e.to_string().ends_with("names no path"), "{e}");
    }
}

#[test]
fn cycles_and_depth_are_refused() {
    let d = Dir::new();
    let a = d.path("a.cnf");
    let b = d.write("b.cnf", &format!("[client]\n!include {}\n", a.display()));
    d.write(
        "a.cnf",
        &format!("[client]\nuser=a\n!include {}\n", b.display()),
    );
    let e = read_client_options(&a).unwrap_err();
    assert_eq!((e.file.as_path(), e.line), (b.as_path(), Some(2)));
    assert!(e.reason.contains("!include cycle"), "{e}");
    let own = Dir::new();
    let text = format!("[client]\n!includedir {}\n", own.0.path().display());
    let e = read_client_options(&own.write("self.cnf", &text)).unwrap_err();
    assert!(e.reason.contains("!include cycle"), "{e}");

    // A chain of MAX_DEPTH includes below the top file is read; one more is refused.
    let chain = |len: usize| {
        d.write(&format!("l{len}.cnf"), "[client]\nuser=deep\n");
        for i in (0..len).rev() {
            let next = d.path(&format!("l{}.cnf", i + 1));
            d.write(
                &format!("l{i}.cnf"),
                &format!("!include {}\n", next.display()),
            );
        }
        read_client_options(&d.path("l0.cnf"))
    };
    assert_eq!(chain(MAX_DEPTH).unwrap()["user"], "deep");
    let e = chain(MAX_DEPTH + 1).unwrap_err();
    assert!(e.reason.contains("nested more than 10"), "{e}");
}

#[test]
fn unknown_directives_are_ignored_as_the_servers_do() {
    let o = parse_client_options("[client]\n!includes x\n!foo\nuser=u\n").unwrap();
    assert_eq!(o["user"], "u");
}

#[test]
fn a_diamond_is_not_a_cycle() {
    let d = Dir::new();
    let leaf = d.write("leaf.cnf", "[client]\nport=1\n");
    let mid = d.write("mid.cnf", &format!("!include {}\n", leaf.display()));
    let top = d.write(
        "top.cnf",
        &format!("!include {}\n!include {}\n", mid.display(), leaf.display()),
    );
    assert_eq!(read(&top, Groups::CLIENT).unwrap().len(), 2);
}

#[test]
fn default_files_in_the_clients_order_a_later_one_winning() {
    let d = Dir::new();
    let files = default_client_files(
        Some(&d.path("home")),
        Some(&d.path("mh")),
        Some(&d.path("extra.cnf")),
    );
    let names: Vec<(String, bool)> = files
        .iter()
        .map(|(p, r)| (p.display().to_string(), *r))
        .collect();
    let at = |n: &str| d.path(n).display().to_string();
    assert_eq!(
        names,
        [
            ("/etc/my.cnf".into(), false),
            ("/etc/mysql/my.cnf".into(), false),
            (at("mh/my.cnf"), false),
            (at("extra.cnf"), true),
            (at("home/.my.cnf"), false),
        ]
    );

    // An absent optional file is skipped, an absent required one is an error; later files win,
    // and MariaDB's client groups count.
    let sys = d.write(
        "sys.cnf",
        "[client-server]\nsocket=/s\n[client]\nuser=a\nport=1\n",
    );
    let user = d.write("user.cnf", "[mariadb-client]\nuser=b\n");
    let o =
        read_client_files(&[(sys, false), (d.path("absent.cnf"), false), (user, true)]).unwrap();
    assert_eq!(
        (o["user"].as_str(), o["port"].as_str(), o["socket"].as_str()),
        ("b", "1", "/s")
    );
    let e = read_client_files(&[(d.path("absent.cnf"), true)]).unwrap_err();
    assert!(e.to_string().contains("absent.cnf"), "{e}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_and_devices_are_refused_without_waiting() {
    let d = Dir::new();
    let fifo = d.path(".my.cnf");
    mkfifo(&fifo);
    let started = std::time::Instant::now();
    let e = read_client_files(&[(fifo.clone(), false)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: is a FIFO (named pipe), not a regular file",
            fifo.display()
        )
    );
    let top = d.write("top.cnf", "[client]\nuser=a\n!include /dev/zero\n");
    let e = read_client_options(&top).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:3: /dev/zero is a character device, not a regular file",
            top.display()
        )
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn an_includedir_entry_that_is_not_a_file_is_refused_by_name() {
    let d = Dir::new();
    std::fs::create_dir(d.path("conf.d")).unwrap();
    mkfifo(&d.path("conf.d/a.cnf"));
    let top = d.write(
        "top.cnf",
        &format!("[client]\n!includedir {}\n", d.path("conf.d").display()),
    );
    let e = read_client_options(&top).unwrap_err();
    assert!(e.to_string().contains("a.cnf is a FIFO"), "{e}");
    // Other entries of the directory are still skipped by name, as the servers skip them.
    std::fs::remove_file(d.path("conf.d/a.cnf")).unwrap();
    mkfifo(&d.path("conf.d/a.txt"));
    assert!(read_client_options(&top).is_ok());
}

#[test]
fn sizes_are_bounded_per_file_and_in_total() {
    let d = Dir::new();
    let line = format!("# {}\n", "x".repeat(1021));
    let big = d.write("big.cnf", &line.repeat(1025));
    let e = read_client_options(&big).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: is larger than 1 MiB, the limit for an option file",
            big.display()
        )
    );
    // 17 files of 1 MiB less a little: each within the limit, together over it.
    let part = line.repeat(1023);
    for i in 0..17 {
        d.write(&format!("conf.d/{i:02}.cnf"), &part);
    }
    let dir = d.path("conf.d").display().to_string();
    let top = d.write("top.cnf", &format!("[client]\n!includedir {dir}\n"));
    let e = read_client_options(&top).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2: {dir}/16.cnf brings the option files read to more than 16 MiB, the limit in total",
            top.display()
        )
    );
}

#[test]
fn issue_45_an_error_quotes_a_line_cut_short_and_never_a_password() {
    // What `--defaults-file /proc/self/environ` reads: one line of NUL-separated variables.
    let environ = "MYSQL_PWD=hunter2\0HOME=/root\0DB_PASSWORD=s3cr3t\0api_token=tok\0PATH=/usr/bin:/bin\0TERM=xterm-256color\0LANG=C.UTF-8\0";
    let e = parse_client_options(environ).unwrap_err().to_string();
    for secret in ["hunter2", "s3cr3t", "tok\\0", "xterm-256color"] {
        assert!(!e.contains(secret), "{secret}: {e}");
    }
    assert!(
        e.contains("'MYSQL_PWD=***\\u{0}HOME=/root\\u{0}DB_PASSWORD=***"),
        "{e}"
    );
    assert!(e.contains("…'"), "{e}");
    assert!(!e.contains('\0'), "{e}");
    assert!(e.chars().count() < 200, "{e}");
    // A header left open is quoted the same way.
    let e = parse_client_options("[client password=abc def")
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("unclosed group header '[client password=***'"),
        "{e}"
    );
    let e = parse_client_options("password = two words")
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("option 'password =***' outside of any [group]"),
        "{e}"
    );
    // Short, harmless lines are quoted whole.
    assert_eq!(quoted("user=bench"), "'user=bench'");
    assert_eq!(quoted("ünïcode=ok é"), "'ünïcode=ok é'");
    assert_eq!(quoted(&"x".repeat(100)), format!("'{}…'", "x".repeat(60)));
}
