//! The sections a man page has beyond what clap describes: EXAMPLES, ENVIRONMENT, FILES and
//! EXIT STATUS, written as roff after clap_mangen's own sections.
//!
//! The examples are not written twice: they are the command lines of the `sh` blocks of the
//! docs pages (compiled in), each with the comment lines just above it, so a page shows what
//! the docs show and an example changed there changes here.

/// The docs pages whose `sh` blocks hold the examples, in the order their examples are shown.
const DOCS: &[&str] = &[
    include_str!("../../../../../docs/running.md"),
    include_str!("../../../../../docs/connecting.md"),
    include_str!("../../../../../docs/output.md"),
    include_str!("../../../../../docs/logs.md"),
    include_str!("../../../../../docs/studies.md"),
    include_str!("../../../../../docs/reports.md"),
    include_str!("../../../../../docs/tpcc.md"),
    include_str!("../../../../../docs/threads.md"),
    include_str!("../../../../../docs/replication.md"),
    include_str!("../../../../../docs/tuning.md"),
    include_str!("../../../../../docs/diff.md"),
    include_str!("../../../../../docs/io.md"),
    include_str!("../../../../../docs/cli.md"),
    include_str!("../../../../../docs/store.md"),
];

/// At most this many examples on one page: the docs hold the rest.
const MAX_EXAMPLES: usize = 8;

/// One example: what it does (the comment above it, maybe empty) and the command line.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Example {
    pub what: String,
    pub line: String,
}

/// Every example of `docs` (the text of one page): the lines of its `sh` blocks that start with
/// `qpslab `, continuation lines (`\` at the end) joined, with the `#` comment lines right above.
pub(crate) fn examples_in(docs: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let (mut in_block, mut comment, mut pending): (bool, Vec<&str>, Option<String>) =
        (false, Vec::new(), None);
    for raw in docs.lines() {
        let line = raw.trim_end();
        if line.trim_start().starts_with("```") {
            in_block = !in_block && line.trim_start() == "```sh";
            comment.clear();
            continue;
        }
        if !in_block {
            continue;
        }
        let text = line.trim_start();
        // A command begins with `qpslab ` or continues the one before; it ends without a `\`.
        let cmd = match pending.take() {
            Some(mut cmd) => {
                cmd.push(' ');
                cmd.push_str(text.trim_end_matches('\\').trim_end());
                cmd
            }
            None if text.starts_with("qpslab ") => {
                text.trim_end_matches('\\').trim_end().to_string()
            }
            None => {
                match text.strip_prefix('#') {
                    Some(c) => comment.push(c.trim()),
                    None => comment.clear(),
                }
                continue;
            }
        };
        if line.ends_with('\\') {
            pending = Some(cmd);
        } else {
            out.push(Example {
                what: comment.join(" "),
                line: cmd,
            });
            comment.clear();
        }
    }
    out
}

/// The examples of the page `page` (`qpslab-server-start`; `qpslab`: one per subcommand, the
/// first the docs give).
pub(crate) fn examples(page: &str) -> Vec<Example> {
    let all = DOCS.iter().flat_map(|d| examples_in(d));
    let mut chosen: Vec<Example> = Vec::new();
    if page == "qpslab" {
        let mut seen = std::collections::BTreeSet::new();
        for e in all {
            let sub = e.line.split_whitespace().nth(1).unwrap_or("").to_string();
            if seen.insert(sub) {
                chosen.push(e);
            }
        }
    } else {
        let words: Vec<&str> = page.split('-').collect();
        for e in all {
            let line: Vec<&str> = e.line.split_whitespace().collect();
            // `qpslab server start ...` belongs to qpslab-server-start, not to qpslab-server.
            let is_page = line.len() >= words.len()
                && line[..words.len()] == words[..]
                && !(line.len() > words.len() && is_subcommand_of(&words, line[words.len()]));
            if is_page && !chosen.iter().any(|c| c.line == e.line) {
                chosen.push(e);
            }
        }
    }
    chosen.truncate(MAX_EXAMPLES);
    chosen
}

/// Whether `word` names a subcommand of the command `words` (`qpslab server` + `start`).
fn is_subcommand_of(words: &[&str], word: &str) -> bool {
    use clap::CommandFactory;
    let mut cmd = super::Cli::command();
    for w in &words[1..] {
        match cmd.find_subcommand(w) {
            Some(sub) => cmd = sub.clone(),
            None => return false,
        }
    }
    cmd.find_subcommand(word).is_some()
}

/// Text for roff: backslashes escaped, a leading `.` or `'` kept literal, `-` as a hyphen-minus
/// (so that copied command lines work).
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The EXAMPLES section of `page`, empty when the docs give none.
fn examples_section(page: &str) -> String {
    let examples = examples(page);
    if examples.is_empty() {
        return String::new();
    }
    let mut s = String::from(".SH EXAMPLES\n");
    for e in examples {
        if !e.what.is_empty() {
            s += &format!(".PP\n{}\n", roff(&e.what));
        } else {
            s += ".PP\n";
        }
        s += &format!(".RS 4\n.nf\n{}\n.fi\n.RE\n", roff(&e.line));
    }
    s
}

/// The environment variables qpslab reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("QPSLAB_DB", "The results database (SQLite), as --db; default qpslab.db in the current directory."),
    ("QPSLAB_LAB", "The lab directory, as --lab: sandboxes, their data, locks and the restore ledger; default ~/.qpslab, or /tmp/qpslab-UID without a home."),
    ("QPSLAB_TEMPLATES", "A directory of initialised datadir templates shared between labs (each lab keeps its own otherwise)."),
    ("QPSLAB_SERVER_USER", "The unprivileged user a sandbox server runs as when qpslab runs as root (default: mysql)."),
    ("MYSQL_PWD", "The password, when neither -p, --password-file, the URL nor an option file gives one (visible to other local users: prefer an option file)."),
    ("HOME", "Where ~/.my.cnf and the default lab directory ~/.qpslab are."),
    ("MYSQL_HOME, MARIADB_HOME", "A directory whose my.cnf is read as an option file, as the mysql client reads it."),
];

/// The files qpslab reads and writes.
const FILES: &[(&str, &str)] = &[
    ("/etc/my.cnf, /etc/mysql/my.cnf, ~/.my.cnf", "Option files: their [client] section (user, password, host, port, socket, database, ssl-*) is read once a command names a server, as the mysql client reads it; --defaults-file, --defaults-extra-file and --no-defaults change which."),
    ("qpslab.db", "The results store (SQLite): every run, phase and study; see --db and QPSLAB_DB."),
    ("~/.qpslab/", "The lab directory: sandboxes/NAME (each sandbox's datadir, my.cnf, socket and logs), locks/, the restore ledger of settings to put back, datadir templates; see --lab and QPSLAB_LAB."),
];

/// The EXIT STATUS section, as `main` maps outcomes to codes.
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    ("1", "A runtime failure: the server, the network, a file or a check failed."),
    ("2", "The user's mistake: a bad option or value, a server that is not there, a name that does not exist."),
    ("128 + N", "Stopped by signal N after storing what was measured and stopping the servers qpslab started: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for SIGHUP."),
];

fn tagged(title: &str, items: &[(&str, &str)]) -> String {
    let mut s = format!(".SH {title}\n");
    for (tag, text) in items {
        s += &format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(text));
    }
    s
}

/// The sections after clap's: EXAMPLES (when the docs have some), ENVIRONMENT, FILES and
/// EXIT STATUS.
pub(crate) fn extra_sections(page: &str) -> String {
    let mut s = examples_section(page);
    s += &tagged("ENVIRONMENT", ENVIRONMENT);
    s += &tagged("FILES", FILES);
    s += &tagged("EXIT STATUS", EXIT_STATUS);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_come_from_sh_blocks_with_their_comment_and_continuations() {
        let docs = "text\n```sh\n# First line\n# of the comment.\nqpslab run a --x \\\n    --y 1\n\nqpslab show 3   # one run\n```\n```toml\nqpslab not = 1\n```\n";
        assert_eq!(
            examples_in(docs),
            vec![
                Example {
                    what: "First line of the comment.".into(),
                    line: "qpslab run a --x --y 1".into()
                },
                Example {
                    what: String::new(),
                    line: "qpslab show 3   # one run".into()
                },
            ]
        );
    }

    #[test]
    fn a_page_has_only_its_own_commands_examples() {
        let run = examples("qpslab-run");
        assert!(!run.is_empty());
        assert!(
            run.iter().all(|e| e.line.starts_with("qpslab run ")),
            "{run:?}"
        );
        let start = examples("qpslab-server-start");
        assert!(start
            .iter()
            .all(|e| e.line.starts_with("qpslab server start ")));
        let server = examples("qpslab-server");
        assert!(
            server
                .iter()
                .all(|e| !e.line.starts_with("qpslab server start")),
            "{server:?}"
        );
        assert!(examples("qpslab").len() > 5);
    }

    #[test]
    fn roff_keeps_command_lines_literal() {
        assert_eq!(roff("--a\\b"), "\\-\\-a\\eb");
        assert_eq!(roff(".x"), "\\&.x");
    }
}
