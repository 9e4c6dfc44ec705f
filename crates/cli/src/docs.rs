//! `shootout completions SHELL` and `shootout man`: shell completions and a man page,
//! generated from the same clap definitions that parse the command line (clap_complete,
//! clap_mangen), so they never fall behind a flag.
//!
//! Seams: reads `Cli::command()` only; the text goes out through [`crate::output::emit`] under the
//! output policy of every command.

use crate::output::{emit, Failure};
use crate::Cli;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Flags of `shootout completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell. Install, e.g. for bash:
    /// shootout completions bash > ~/.local/share/bash-completion/completions/shootout
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Prints the completion script for `a.shell`.
pub fn completions(a: CompletionsArgs) -> Result<i32, Failure> {
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "shootout", &mut out);
    emit(&String::from_utf8_lossy(&out))?;
    Ok(0)
}

/// Flags of `shootout man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (shootout-load(1), …); shootout(1) when left
    /// out. Install, e.g.: shootout man load > ~/.local/share/man/man1/shootout-load.1
    #[arg(value_name = "SUBCOMMAND")]
    pub subcommand: Option<String>,
}

/// Prints the man page (roff) of shootout or of one of its subcommands.
pub fn man(a: ManArgs) -> Result<i32, Failure> {
    let cmd = Cli::command();
    let page = match &a.subcommand {
        None => cmd,
        Some(name) => {
            let names: Vec<&str> = cmd.get_subcommands().map(|c| c.get_name()).collect();
            let sub = cmd.find_subcommand(name).ok_or_else(|| {
                Failure::usage(anyhow::anyhow!(
                    "'{name}' is not a subcommand of shootout: choose one of {}",
                    names.join(", ")
                ))
            })?;
            sub.clone()
                .display_name(format!("shootout-{name}"))
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .map_err(Failure::output)?;
    emit(&String::from_utf8_lossy(&out))?;
    Ok(0)
}
