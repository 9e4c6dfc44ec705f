//! One bounded `python3 -c SCRIPT ARGS…` run for `init`'s inspections of an app: it
//! imports the app from the current directory and prints marked lines. Its output is read
//! up to [`OUTPUT_MAX`], and the run is killed past [`INSPECT_TIMEOUT`].

use anyhow::{anyhow, Context};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest an inspection may take, app import included.
pub const INSPECT_TIMEOUT: Duration = Duration::from_secs(15);

/// The most of an inspection's output read (an app may print while imported).
const OUTPUT_MAX: u64 = 1 << 20;

/// Runs `script` with `python` (a command that runs python3, where it runs) and `args`;
/// its standard output, or why not: it could not start, took too long, or failed (the
/// app `app`, `MODULE:APP`, did not import).
pub fn run(mut python: Command, script: &str, app: &str, args: &[&str]) -> anyhow::Result<String> {
    let name = python.get_program().to_string_lossy().into_owned();
    let mut child = python
        .arg("-c")
        .arg(script)
        .arg(app)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("could not run {name}"))?;
    let stdout = child.stdout.take().context("no pipe from python3")?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut stdout = stdout;
        let _ = (&mut stdout).take(OUTPUT_MAX).read_to_end(&mut out);
        let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        out
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > INSPECT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
            return Err(anyhow!("it took more than {} s", INSPECT_TIMEOUT.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = reader
        .join()
        .map_err(|_| anyhow!("could not read its output"))?;
    if !status.success() {
        return Err(anyhow!(
            "importing it with {name} failed ({status}): try `{name} -c 'import {}'`",
            app.split(':').next().unwrap_or(app)
        ));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
