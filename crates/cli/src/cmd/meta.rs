//! `qpslab completions` and `qpslab man`: the generated texts about qpslab itself, printed or
//! written to files.

use crate::args::{CompletionsArgs, ManArgs};
use crate::error::user;
use anyhow::Context;

/// `qpslab completions SHELL`: the script on standard output.
pub fn completions(a: CompletionsArgs) -> anyhow::Result<()> {
    let Some(shell) = a.shell else {
        // `--sandbox-names`: called by the scripts at each TAB, in the lab of QPSLAB_LAB or
        // the default one; a lab that cannot be read has no names to offer.
        let home = crate::target::sandbox_home(&crate::args::SandboxHomeArgs { home: None });
        for info in qpslab_sandbox::list(&home).unwrap_or_default() {
            println!("{}", info.name);
        }
        return Ok(());
    };
    let mut script = Vec::new();
    crate::args::write_completions(shell, &mut script);
    print!("{}", String::from_utf8_lossy(&script));
    Ok(())
}

/// `qpslab man [CMD] [--dir DIR]`.
pub fn man(a: ManArgs) -> anyhow::Result<()> {
    if let Some(dir) = &a.dir {
        let written = crate::args::write_man_pages(dir)
            .with_context(|| format!("writing man pages into {}", dir.display()))?;
        for path in &written {
            println!("{}", path.display());
        }
        // man looks for DIR/man1/NAME.1 under each MANPATH entry: say how to read them.
        eprintln!(
            "wrote {} man pages into {}; read them with: MANPATH={} man qpslab-run",
            written.len(),
            dir.join("man1").display(),
            dir.display()
        );
        return Ok(());
    }
    let mut page = Vec::new();
    let found = crate::args::write_man_page(a.command.as_deref(), &mut page)
        .context("rendering the man page")?;
    if !found {
        return Err(user(format!(
            "no subcommand {:?}: one of {}",
            a.command.unwrap_or_default(),
            crate::args::page_names().join(", ")
        )));
    }
    print!("{}", String::from_utf8_lossy(&page));
    Ok(())
}
