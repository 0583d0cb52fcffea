//! The commands about qpslab itself: shell completions and man pages, both generated from the
//! one clap definition ([`Cli`]) so that they can never disagree with the options they describe.

mod complete;
mod man_sections;

use super::Cli;
use clap::{Args, CommandFactory, ValueEnum};
use std::path::{Path, PathBuf};

/// `--quiet` and `--verbose`, accepted by every subcommand.
#[derive(Args, Debug, Clone, Copy)]
pub struct Verbosity {
    /// Print only results and errors: no progress, live lines, notes or warnings.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Print more detail on standard error (the version, the resolved plan, the target).
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// `qpslab completions SHELL`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for (on standard output).
    #[arg(value_enum, required_unless_present = "sandbox_names")]
    pub shell: Option<Shell>,
    /// Print the lab's sandbox names, one a line (what the scripts call to complete a
    /// sandbox's name).
    #[arg(long, hide = true)]
    pub sandbox_names: bool,
}

/// Shells `qpslab completions` writes scripts for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// Bash (with the bash-completion package).
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
    /// Elvish.
    Elvish,
    /// PowerShell.
    Powershell,
}

/// `qpslab man [CMD] [--dir DIR]`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print, e.g. `run` or `server start` written `server-start`
    /// (default: the page of qpslab itself).
    #[arg(value_name = "CMD")]
    pub command: Option<String>,
    /// Write every page into DIR/man1/ (qpslab.1, qpslab-run.1, ...) instead, where `man`
    /// finds them with MANPATH=DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    pub dir: Option<PathBuf>,
}

/// `qpslab doctor`.
#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Check this server installation (unpacked tarball) instead of the installed server.
    #[arg(long, value_name = "DIR")]
    pub basedir: Option<PathBuf>,
    /// Output: table (one line per part) or json (`{"ready": .., "parts": [..]}`).
    #[command(flatten)]
    pub output: super::OutputArgs<super::TableJson>,
}

/// Writes the completion script for `shell` to `out`.
pub fn write_completions(shell: Shell, out: &mut dyn std::io::Write) {
    let mut cmd = complete::for_completion(Cli::command());
    let mut script = Vec::new();
    clap_complete::generate(shell_of(shell), &mut cmd, "qpslab", &mut script);
    let script = complete::dynamic(shell, &String::from_utf8_lossy(&script), &cmd);
    // A closed pipe (`qpslab completions bash | head`) is not worth an error.
    let _ = out.write_all(script.as_bytes());
}

fn shell_of(shell: Shell) -> clap_complete::Shell {
    use clap_complete::Shell as S;
    match shell {
        Shell::Bash => S::Bash,
        Shell::Zsh => S::Zsh,
        Shell::Fish => S::Fish,
        Shell::Elvish => S::Elvish,
        Shell::Powershell => S::PowerShell,
    }
}

/// Every page's name (`qpslab`, `qpslab-run`, `qpslab-server-start`, ...) with its command,
/// parents before their subcommands.
fn pages() -> Vec<(String, clap::Command)> {
    fn walk(prefix: &str, cmd: clap::Command, into: &mut Vec<(String, clap::Command)>) {
        let subs: Vec<clap::Command> = cmd.get_subcommands().cloned().collect();
        into.push((prefix.to_string(), cmd));
        // clap's own `help` subcommand has no options of its own to document.
        for sub in subs.into_iter().filter(|s| s.get_name() != "help") {
            let name = format!("{prefix}-{}", sub.get_name());
            // The page's title line names the full command, `qpslab-server-start`.
            let sub = sub.name(name.clone());
            walk(&name, sub, into);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut into = Vec::new();
    walk("qpslab", cmd, &mut into);
    into
}

/// The names of every subcommand with a page, as `qpslab man` accepts them (`run`,
/// `server-start`, ...).
pub fn page_names() -> Vec<String> {
    pages()
        .into_iter()
        .filter_map(|(name, _)| name.strip_prefix("qpslab-").map(String::from))
        .collect()
}

/// Writes the man page of `command` (none: qpslab's own) to `out`; `Ok(false)` when there is
/// no such subcommand.
pub fn write_man_page(
    command: Option<&str>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<bool> {
    let wanted = match command {
        None => "qpslab".to_string(),
        Some(c) => format!("qpslab-{}", c.trim().replace(' ', "-")),
    };
    match pages().into_iter().find(|(name, _)| *name == wanted) {
        Some((name, cmd)) => render_page(&name, cmd, out).map(|()| true),
        None => Ok(false),
    }
}

/// clap's sections of one page, then EXAMPLES, ENVIRONMENT, FILES and EXIT STATUS.
fn render_page(
    name: &str,
    cmd: clap::Command,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    clap_mangen::Man::new(cmd).render(out)?;
    out.write_all(man_sections::extra_sections(name).as_bytes())
}

/// Writes every page into `dir/man1/` as NAME.1 (the layout `man` searches under each MANPATH
/// entry) and returns the files written.
pub fn write_man_pages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let dir = dir.join("man1");
    std::fs::create_dir_all(&dir)?;
    let mut written = Vec::new();
    for (name, cmd) in pages() {
        let path = dir.join(format!("{name}.1"));
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        render_page(&name, cmd, &mut file)?;
        std::io::Write::flush(&mut file)?;
        written.push(path);
    }
    Ok(written)
}
