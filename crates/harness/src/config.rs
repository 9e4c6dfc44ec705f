//! What the harness needs to know about one contender: [`ContenderConfig`].
//!
//! The caller (the CLI's orchestration) builds it from a plan, with every placeholder
//! such as `{port}` already substituted; the harness never parses plans. This module
//! also checks the parts that can be wrong before anything is spawned (the CPU list, the
//! probe address and path) and names the log files.

use crate::error::HarnessError;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// Everything needed to set up, start, probe and pin one contender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContenderConfig {
    /// The contender's name, as the plan gives it; used in messages.
    pub name: String,
    /// Unique among the contenders started by one shootout: names the log files (made
    /// file-name safe) and the marker of its processes (see [`ContenderConfig::tag`]).
    /// Two names that clean up to the same file name (`a/b`, `a_b`) need distinct keys.
    pub key: String,
    /// The final shell command line (placeholders substituted); run as `sh -c "exec <command>"`.
    pub command: String,
    /// Working directory of the setup and of the command (default: shootout's own).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables, added to shootout's own environment.
    pub env: Vec<(String, String)>,
    /// A shell command run (to its end) before the contender starts, e.g. a build step.
    pub setup: Option<String>,
    /// The longest the setup may take before its process group is killed.
    pub setup_timeout: Duration,
    /// Host the readiness probe connects to, and that it names in its `Host` header.
    pub ready_host: String,
    /// TCP port the contender listens on.
    pub port: u16,
    /// Path the readiness probe GETs, e.g. `/health`; any status below 500 means ready.
    pub ready_path: String,
    /// The longest the contender may take, from its start, to answer the probe.
    pub ready_timeout: Duration,
    /// The port speaks TLS: the probe is a TCP connect only (it speaks no TLS), and the
    /// verification that follows is the first request.
    pub ready_tls: bool,
    /// CPUs the whole process tree is pinned to (inherited by every descendant), if any.
    pub cpus: Option<Vec<usize>>,
    /// Directory of the logs `<key>.setup.log`, `<key>.stdout.log`, `<key>.stderr.log`
    /// (created if missing; logs are appended to, one header line per start).
    pub log_dir: PathBuf,
    /// Soft limit of open files (RLIMIT_NOFILE) for the contender, capped at the hard limit.
    pub nofile: Option<u64>,
}

impl ContenderConfig {
    /// A configuration with the usual defaults: the key is the name, probe `GET /` on
    /// `127.0.0.1:port` for up to 10 s, setup timeout 10 minutes, no setup, no extra
    /// environment, no pinning.
    pub fn new(
        name: impl Into<String>,
        command: impl Into<String>,
        port: u16,
        log_dir: impl Into<PathBuf>,
    ) -> ContenderConfig {
        let name = name.into();
        ContenderConfig {
            key: file_name_safe(&name),
            name,
            command: command.into(),
            cwd: None,
            env: Vec::new(),
            setup: None,
            setup_timeout: Duration::from_secs(600),
            ready_host: "127.0.0.1".to_string(),
            port,
            ready_path: "/".to_string(),
            ready_timeout: Duration::from_secs(10),
            ready_tls: false,
            cpus: None,
            log_dir: log_dir.into(),
            nofile: None,
        }
    }

    /// Path of one of the contender's logs: `kind` is `setup`, `stdout` or `stderr`.
    pub fn log_path(&self, kind: &str) -> PathBuf {
        self.log_dir
            .join(format!("{}.{kind}.log", file_name_safe(&self.key)))
    }

    /// The marker every process of this contender started by this shootout carries in
    /// its environment (`SHOOTOUT_TAG`; its setup's processes carry `<tag>/setup`):
    /// `<shootout pid>.<its start time>/<key>`, see the `tag` module.
    pub fn tag(&self) -> String {
        process_tag(&self.key)
    }

    /// The error for a configuration that cannot work.
    pub(crate) fn invalid(&self, reason: impl Into<String>) -> HarnessError {
        HarnessError::InvalidConfig {
            name: self.name.clone(),
            reason: reason.into(),
        }
    }

    /// The probe's addresses (`ready_host:port` resolved) and its `Host` header value.
    pub(crate) fn probe_target(&self) -> Result<(Vec<SocketAddr>, String), HarnessError> {
        if self.port == 0 {
            return Err(self.invalid("port 0 is not a port a server can be probed on"));
        }
        let addrs: Vec<SocketAddr> = (self.ready_host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|e| {
                self.invalid(format!(
                    "ready host `{}` does not resolve: {e}",
                    self.ready_host
                ))
            })?
            .collect();
        if addrs.is_empty() {
            return Err(self.invalid(format!(
                "ready host `{}` resolves to no address",
                self.ready_host
            )));
        }
        let host = if self.ready_host.contains(':') {
            format!("[{}]:{}", self.ready_host, self.port)
        } else {
            format!("{}:{}", self.ready_host, self.port)
        };
        Ok((addrs, host))
    }

    /// The probe's request-target: `ready_path` by the plan's rule for paths, percent-encoded
    /// as a workload's path is (`/a b` is requested as `/a%20b`).
    pub(crate) fn probe_path(&self) -> Result<String, HarnessError> {
        shootout_model::spec::path_target(&self.ready_path)
            .map_err(|e| self.invalid(format!("ready.{e}")))
    }

    /// The CPU set to pin to, built before the fork (the child may not allocate).
    pub(crate) fn cpu_set(&self) -> Result<Option<libc::cpu_set_t>, HarnessError> {
        let Some(cpus) = &self.cpus else {
            return Ok(None);
        };
        if cpus.is_empty() {
            return Err(self.invalid("the CPU list is empty"));
        }
        // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let max = usize::try_from(libc::CPU_SETSIZE).unwrap_or(1024);
        for &cpu in cpus {
            if cpu >= max {
                return Err(self.invalid(format!("CPU {cpu} is beyond the last CPU ({max})")));
            }
            // SAFETY: cpu < CPU_SETSIZE, checked above.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        Ok(Some(set))
    }
}

/// The marker of the processes of the contender with `key` started by this shootout
/// (what [`ContenderConfig::tag`] gives for that key), to record before it is started.
pub fn process_tag(key: &str) -> String {
    crate::tag::tag_of(&file_name_safe(key))
}

/// `name` with every character other than letters, digits, `.`, `_` and `-` replaced by `_`.
fn file_name_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.starts_with('.') {
        format!("_{safe}")
    } else {
        safe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_are_safe_file_names() {
        let mut cfg = ContenderConfig::new("go/net http", "x", 1, "/logs");
        assert_eq!(
            cfg.log_path("stderr"),
            PathBuf::from("/logs/go_net_http.stderr.log")
        );
        cfg.key = "2-go/net".into();
        assert_eq!(
            cfg.log_path("stdout"),
            PathBuf::from("/logs/2-go_net.stdout.log")
        );
        assert!(cfg.tag().ends_with("/2-go_net"), "{}", cfg.tag());
        assert_eq!(file_name_safe(""), "_");
        assert_eq!(file_name_safe(".."), "_..");
    }

    /// A `ready.path` with a space passed the plan's reader and was refused here: one rule,
    /// the plan's, and the space percent-encoded as in a workload's path.
    #[test]
    fn probe_path_follows_the_plans_rule() {
        let mut cfg = ContenderConfig::new("a", "x", 1, "/logs");
        cfg.ready_path = "/a b".into();
        assert_eq!(cfg.probe_path().unwrap(), "/a%20b");
        for bad in ["health", "/a\tb", "/a\nb"] {
            cfg.ready_path = bad.into();
            assert!(
                shootout_model::spec::check_path(bad).is_err()
                    && matches!(cfg.probe_path(), Err(HarnessError::InvalidConfig { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn probe_target_names_host_and_port() {
        let cfg = ContenderConfig::new("a", "x", 8080, "/logs");
        let (addrs, host) = cfg.probe_target().unwrap();
        assert_eq!(addrs, vec!["127.0.0.1:8080".parse().unwrap()]);
        assert_eq!(host, "127.0.0.1:8080");
        let mut v6 = cfg.clone();
        v6.ready_host = "::1".into();
        assert_eq!(v6.probe_target().unwrap().1, "[::1]:8080");
        let mut zero = cfg;
        zero.port = 0;
        assert!(zero.probe_target().is_err());
    }

    #[test]
    fn cpu_lists_out_of_range_or_empty_are_refused() {
        let mut cfg = ContenderConfig::new("a", "x", 1, "/logs");
        assert!(cfg.cpu_set().unwrap().is_none());
        cfg.cpus = Some(vec![]);
        assert!(cfg.cpu_set().is_err());
        cfg.cpus = Some(vec![100_000]);
        assert!(cfg.cpu_set().is_err());
        cfg.cpus = Some(vec![0, 3]);
        let set = cfg.cpu_set().unwrap().unwrap();
        // SAFETY: indexes below CPU_SETSIZE.
        unsafe {
            assert!(libc::CPU_ISSET(0, &set));
            assert!(!libc::CPU_ISSET(1, &set));
            assert!(libc::CPU_ISSET(3, &set));
        }
    }
}
