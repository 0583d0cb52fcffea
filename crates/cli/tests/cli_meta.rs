//! The commands about qpslab itself, driven through the real tools that consume them: bash
//! completion through bash-completion, man pages through man.

mod common;
use common::*;

const BASH_COMPLETION: &str = "/usr/share/bash-completion/bash_completion";

/// A shell whose completion of qpslab the tests drive.
#[derive(Clone, Copy, Debug)]
enum Sh {
    Bash,
    Zsh,
    Fish,
}

/// PATH with the qpslab under test first: the scripts call `qpslab` for sandbox names.
fn path_with_qpslab() -> String {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_qpslab"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    format!("{bin}:{}", std::env::var("PATH").unwrap_or_default())
}

/// What `shell` offers for the words typed so far (the last one is being completed: `""` for
/// a new word), with qpslab's generated script sourced the way a user's shell sources it and
/// the lab `lab` (for sandbox names).
fn complete_in(shell: Sh, lab: &std::path::Path, words: &[&str]) -> Vec<String> {
    let mut cmd = match shell {
        Sh::Bash => {
            assert!(
                std::path::Path::new(BASH_COMPLETION).exists(),
                "{BASH_COMPLETION} is missing: install the bash-completion package (make deps-test)"
            );
            let script = r#"
                source "$BASH_COMPLETION"
                source <("$QPSLAB" completions bash)
                fn=$(complete -p qpslab | sed -E 's/.*-F ([^ ]+).*/\1/')
                COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
                COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                "$fn" qpslab "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                printf '%s\n' "${COMPREPLY[@]}"
            "#;
            let mut c = std::process::Command::new("bash");
            c.args(["-c", script, "complete"]).args(words);
            c
        }
        Sh::Zsh => {
            let script = lab.with_extension("zsh-completion");
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_qpslab"))
                .args(["completions", "zsh"])
                .output()
                .unwrap();
            std::fs::write(&script, out.stdout).unwrap();
            let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/zsh_complete.zsh");
            // The driver gives up after 30 s of its own; `timeout` guards a zsh that hangs.
            let mut c = std::process::Command::new("timeout");
            c.args(["60", "zsh", "-f", driver]).arg(&script).args(words);
            c
        }
        Sh::Fish => {
            let mut c = std::process::Command::new("fish");
            c.args([
                "--no-config",
                "-c",
                "\"$QPSLAB\" completions fish | source; complete -C \"$LINE\"",
            ])
            .env("LINE", words.join(" "));
            c
        }
    };
    let out = cmd
        .env("BASH_COMPLETION", BASH_COMPLETION)
        .env("QPSLAB", env!("CARGO_BIN_EXE_qpslab"))
        .env("QPSLAB_LAB", lab)
        .env("PATH", path_with_qpslab())
        .output()
        .unwrap_or_else(|e| panic!("{shell:?} ({e}): install it (make deps-test)"));
    assert!(out.status.success(), "{shell:?}: {out:?}");
    let mut offered: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        // fish prints `value<TAB>description`.
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    offered.sort();
    offered.dedup();
    offered
}

/// What bash-completion offers, in a lab with no sandboxes.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let s = Scratch::new();
    complete_in(Sh::Bash, &s.lab(), words)
}

/// Sorted words, as [`complete_in`] returns them.
fn sorted(words: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    v.sort();
    v
}

/// Issue 38, item 4: workload names, each enum option's values and each command's own
/// formats, in bash, zsh and fish; no file names where no file is meant.
#[test]
fn every_shell_offers_workloads_and_enum_values() {
    let s = Scratch::new();
    for shell in [Sh::Bash, Sh::Zsh, Sh::Fish] {
        let c = |words: &[&str]| complete_in(shell, &s.lab(), words);
        let workloads = c(&["qpslab", "run", "oltp_"]);
        assert!(
            workloads.contains(&"oltp_point_select".to_string())
                && workloads.contains(&"oltp_read_write".to_string())
                && workloads.iter().all(|w| w.starts_with("oltp_")),
            "{shell:?}: {workloads:?}"
        );
        assert_eq!(
            c(&["qpslab", "run", "--rand-type", ""]),
            sorted(&["uniform", "gaussian", "special", "pareto", "zipfian"]),
            "{shell:?}"
        );
        assert_eq!(
            c(&["qpslab", "run", "--ps", ""]),
            sorted(&["on", "off"]),
            "{shell:?}"
        );
        // `run` writes table, json and csv only: md and html are not offered.
        assert_eq!(
            c(&["qpslab", "run", "--format", ""]),
            sorted(&["table", "json", "csv"]),
            "{shell:?}"
        );
        assert_eq!(
            c(&["qpslab", "report", "--format", ""]),
            sorted(&["html", "md", "json"]),
            "{shell:?}"
        );
        // A number is no file: nothing of the current directory is offered.
        let threads = c(&["qpslab", "run", "--threads", ""]);
        assert!(threads.is_empty(), "{shell:?}: {threads:?}");
    }
}

/// Issue 38, item 4: the lab's sandbox names, looked up when the user presses TAB.
#[test]
fn every_shell_offers_the_labs_sandbox_names() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "tabbed"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for shell in [Sh::Bash, Sh::Zsh, Sh::Fish] {
        let c = |words: &[&str]| complete_in(shell, &s.lab(), words);
        assert_eq!(
            c(&["qpslab", "run", "--sandbox", ""]),
            ["tabbed"],
            "{shell:?}"
        );
        // bash lists the options beside a positional's values.
        let names: Vec<String> = c(&["qpslab", "server", "stop", ""])
            .into_iter()
            .filter(|w| !w.starts_with('-'))
            .collect();
        assert_eq!(names, ["tabbed"], "{shell:?}");
    }
    let o = s.run(&["server", "stop", "tabbed", "--rm"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn bash_completes_a_subcommand() {
    assert_eq!(bash_complete(&["qpslab", "ru"]), ["run"]);
}

#[test]
fn bash_completes_a_run_option() {
    assert_eq!(
        bash_complete(&["qpslab", "run", "--rand-t"]),
        ["--rand-type"]
    );
}

#[test]
fn every_shell_gets_a_script_naming_the_subcommands() {
    let s = Scratch::new();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = s.run(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("rand-type") && text.contains("server"),
            "{shell}"
        );
    }
}

#[test]
fn an_unknown_shell_is_a_user_error() {
    let out = Scratch::new().run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("tcsh"));
    assert!(out.stdout.is_empty());
}

#[test]
fn man_renders_the_run_page_written_by_man_dir() {
    let s = Scratch::new();
    let dir = s.path().join("man");
    let out = s.run(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    for page in [
        "qpslab.1",
        "qpslab-run.1",
        "qpslab-server-start.1",
        "qpslab-man.1",
    ] {
        assert!(dir.join("man1").join(page).is_file(), "{page} not written");
    }
    assert!(stderr(&out).contains("MANPATH="), "{}", stderr(&out));
    // Issue 38, item 3: found by man itself, as a user reads it once installed.
    let rendered = std::process::Command::new("man")
        .arg("qpslab-run")
        .env("MANPATH", &dir)
        .env("MANWIDTH", "100")
        .env("LC_ALL", "C")
        .env("MANPAGER", "cat")
        .output()
        .expect("man (the man-db package)");
    assert!(rendered.status.success(), "{rendered:?}");
    let text = String::from_utf8(rendered.stdout).unwrap();
    // Justified text: compare words, not spaces.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("NAME qpslab-run - Run a sysbench-compatible"),
        "{text}"
    );
    // The option's own entry, value name and help, not just the synopsis.
    let entry = text
        .lines()
        .position(|l| l.trim() == "--threads <LIST>")
        .unwrap_or_else(|| panic!("no --threads entry in:\n{text}"));
    // Justified: the words, not the spaces between them.
    let next = text.lines().nth(entry + 1).unwrap_or_default();
    let next = next.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        next.contains("Client sessions"),
        "after --threads: {next:?}\n{text}"
    );
    // The sections beyond the options, the examples taken from the docs' command lines.
    for section in ["EXAMPLES", "ENVIRONMENT", "FILES", "EXIT STATUS"] {
        assert!(
            text.lines().any(|l| l == section),
            "no {section} in:\n{text}"
        );
    }
    assert!(
        words.contains("qpslab run oltp_point_select --tables 8"),
        "{text}"
    );
    assert!(
        words.contains("QPSLAB_LAB") && words.contains("130"),
        "{text}"
    );
}

#[test]
fn man_prints_one_page_and_rejects_an_unknown_one() {
    let s = Scratch::new();
    let out = s.run(&["man", "server-start"]);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8(out.stdout).unwrap().starts_with(".ie"));
    let out = s.run(&["man", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("frobnicate") && err.contains("server-start"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn help_cmd_is_the_commands_own_help() {
    let s = Scratch::new();
    for cmd in [
        &["run"][..],
        &["server", "start"],
        &["lab", "run"],
        &["man"],
    ] {
        let mut help = vec!["help"];
        help.extend_from_slice(cmd);
        let via_help = s.run(&help);
        let mut flag = cmd.to_vec();
        flag.push("--help");
        let via_flag = s.run(&flag);
        assert!(via_help.status.success(), "{cmd:?}: {via_help:?}");
        assert!(stdout(&via_help).contains("Usage: qpslab"), "{cmd:?}");
        assert_eq!(stdout(&via_help), stdout(&via_flag), "{cmd:?}");
    }
    let out = s.run(&["help", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("frobnicate"));
}

#[test]
fn version_names_the_commit_and_the_build_date() {
    let out = Scratch::new().run(&["--version"]);
    assert!(out.status.success(), "{out:?}");
    let line = stdout(&out);
    let rest = line
        .trim_end()
        .strip_prefix(&format!("qpslab {} (", env!("CARGO_PKG_VERSION")))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"));
    let (commit, date) = rest.split_once(' ').unwrap_or_else(|| panic!("{line}"));
    // Built from a git checkout (CI's clone too): the commit the binary was built from.
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success());
    match head {
        Some(h) => assert_eq!(commit, stdout(&h).trim(), "{line}"),
        None => assert_eq!(commit, "unknown", "{line}"),
    }
    let d: Vec<&str> = date.split('-').collect();
    assert!(
        d.len() == 3
            && [4, 2, 2] == [d[0].len(), d[1].len(), d[2].len()]
            && d.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit())),
        "{line}"
    );
}

#[test]
fn quiet_keeps_errors_and_drops_notes_verbose_adds_detail() {
    let s = Scratch::new();
    // A password in --target is warned about (a note), then the connection fails (an error).
    let args = [
        "run",
        "oltp_point_select",
        "--target",
        "mysql://root:pw@127.0.0.1:1/db",
        "--connect-timeout",
        "1",
    ];
    let normal = s.run(&args);
    assert_eq!(normal.status.code(), Some(2), "{normal:?}");
    assert!(stderr(&normal).contains("warning: a password in --target"));
    assert!(!stderr(&normal).contains(env!("CARGO_PKG_VERSION")));
    let quiet = s.run(&[&args[..], &["-q"]].concat());
    assert_eq!(quiet.status.code(), Some(2), "{quiet:?}");
    let err = stderr(&quiet);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("qpslab: error: "), "{err}");
    let verbose = s.run(&[&["--verbose"][..], &args].concat());
    assert_eq!(verbose.status.code(), Some(2), "{verbose:?}");
    let version = format!("qpslab {} (", env!("CARGO_PKG_VERSION"));
    assert!(stderr(&verbose).starts_with(&version), "{verbose:?}");
    let both = s.run(&[&args[..], &["-q", "-v"]].concat());
    assert_eq!(both.status.code(), Some(2), "{both:?}");
    assert!(stderr(&both).contains("cannot be used with"));
}

#[test]
fn quiet_run_prints_its_results_without_live_lines() {
    let s = Scratch::new();
    let out = s.run(&[
        "run",
        "oltp_point_select",
        "--tables",
        "1",
        "--table-size",
        "100",
        "--time",
        "1",
        "--threads",
        "1",
        "--quiet",
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let stdout = stdout(&out);
    assert!(
        stdout.contains("transactions:") && stdout.contains("stored as run 1"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("thds:") && !stdout.contains("== oltp_point_select"),
        "{stdout}"
    );
}
