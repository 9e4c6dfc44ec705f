//! `shootout k8s job --shards N --image IMAGE -- load ARGS…`: prints a Kubernetes Indexed
//! Job that runs one load as N shards, one pod each, all starting together, each printing
//! its result between markers for `kubectl logs` (and optionally into a volume); then says
//! the one command that gathers the results and merges them. The pods start on a barrier
//! (`load --barrier`): a headless Service gives shard 0's pod a stable name
//! (`NAME-0.NAME`), the others connect to it, and shard 0 starts them all once all are
//! there, however late the manifest is applied or an image is pulled; the Job's own id
//! (its controller uid, through the downward API) is the run id, so the pods of another
//! Job of the same name never meet these. `--start-in` bakes a start time in instead. The
//! pods' arguments (the load's flags, then the job's) are checked here first by the parser
//! the pods run, as shard 0 of N reads them, so a manifest never carries a load that
//! cannot run.
//!
//! The manifest is written from a template, not by a YAML serializer: it carries comments
//! that explain each choice to the reader, which no serializer writes. Every value from
//! the user is written as an ASCII double-quoted YAML string ([`quote`]) that reads back
//! as exactly that value, whatever characters it holds.

use crate::load::dist::{check_start, INDEX_VAR};
use crate::load::LoadArgs;
use crate::output::Failure;
use anyhow::anyhow;
use clap::{Args, Parser, Subcommand};
use shootout_model::parse_duration;
use std::fmt::Write;
use std::time::{Duration, SystemTime};

/// `shootout k8s …`.
#[derive(Debug, Args)]
pub struct K8sArgs {
    #[command(subcommand)]
    command: K8sCommand,
}

#[derive(Debug, Subcommand)]
enum K8sCommand {
    /// Print an Indexed Job that runs a load as N shards, and the command that merges them.
    Job(JobArgs),
}

/// Flags of `shootout k8s job`.
#[derive(Debug, Args)]
#[command(after_help = "Example:
  shootout k8s job --shards 4 --image registry.example/shootout:0.1 -- \\
      load --rate 40000 -d 60s -c 400 http://web.default.svc:8080/ | kubectl apply -f -")]
pub struct JobArgs {
    /// Pods, each running one shard of the load.
    #[arg(long, value_name = "N")]
    pub shards: u32,

    /// The container image with shootout in it (see the Containerfile).
    #[arg(long, value_name = "IMAGE")]
    pub image: String,

    /// Instead of the barrier: the shards start this long after the manifest is printed (apply it at once; a pod later than that fails).
    #[arg(long, value_name = "DURATION")]
    pub start_in: Option<String>,

    /// The port shard 0's pod listens on for the others (the start barrier).
    #[arg(long, value_name = "PORT", default_value_t = 7878, value_parser = clap::value_parser!(u16).range(1..))]
    pub barrier_port: u16,

    /// The Job's name (and the label that finds its pods).
    #[arg(long, value_name = "NAME", default_value = "shootout-load")]
    pub name: String,

    /// CPU each pod requests and is limited to (a Kubernetes quantity: 1, 2, 500m).
    #[arg(long, value_name = "QUANTITY", default_value = "1")]
    pub cpu: String,

    /// Memory each pod requests and is limited to (a Kubernetes quantity: 256Mi, 1Gi).
    #[arg(long, value_name = "QUANTITY", default_value = "256Mi")]
    pub memory: String,

    /// Also write each result into this PersistentVolumeClaim, mounted at /results.
    #[arg(long, value_name = "CLAIM")]
    pub results_claim: Option<String>,

    /// The load every pod runs its share of: `load` and its flags, after `--`.
    #[arg(last = true, required = true, value_name = "load ARGS")]
    pub load: Vec<String>,
}

/// Runs `shootout k8s`; returns the exit code.
pub fn k8s(a: K8sArgs) -> Result<i32, Failure> {
    match a.command {
        K8sCommand::Job(job) => {
            let start_at = match &job.start_in {
                Some(text) => {
                    let at = SystemTime::now() + start_in(text)?;
                    say!("note: with --start-in, a pod that starts after {} fails (applied late, or a slow image pull); without it the pods start together on a barrier whenever all are there", humantime::format_rfc3339_seconds(at));
                    Some(at)
                }
                None => None,
            };
            let (manifest, gather) = manifest(&job, start_at)?;
            crate::output::emit(&manifest)?;
            say!("when the job is done, gather and merge the results with:\n  {gather}");
            Ok(0)
        }
    }
}

/// The load's flags as clap reads them (the pods run the same binary).
#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct LoadCommand {
    #[command(flatten)]
    load: LoadArgs,
}

/// `--start-in`: more than 0, at most a day.
fn start_in(text: &str) -> Result<Duration, Failure> {
    let d = parse_duration(text).map_err(|e| Failure::usage(anyhow!("--start-in: {e}")))?;
    if d < Duration::from_secs(1) {
        return Err(Failure::usage(anyhow!(
            "--start-in {text}: give the pods time to be scheduled and started, e.g. --start-in 60s"
        )));
    }
    let now = SystemTime::now();
    check_start(now + d, now)
        .map_err(|f| Failure::usage(anyhow!("--start-in {text}: {:#}", f.error)))?;
    Ok(d)
}

/// How the pods start together.
enum Start {
    /// On shard 0's barrier, at this `HOST:PORT`.
    Barrier(String),
    /// At this time (RFC 3339), from `--start-in`.
    At(String),
}

/// The variable that carries the Job's uid into its pods, the barrier's run id.
const RUN_ID_VAR: &str = "SHOOTOUT_RUN_ID";

/// The manifest, and the command that gathers and merges the results.
fn manifest(job: &JobArgs, start_at: Option<SystemTime>) -> Result<(String, String), Failure> {
    check_job(job)?;
    let start = match start_at {
        Some(t) => Start::At(humantime::format_rfc3339_seconds(t).to_string()),
        None => Start::Barrier(format!("{n}-0.{n}:{}", job.barrier_port, n = job.name)),
    };
    let args = pod_args(job, &start);
    let (spec, barrier_wait) = check_load(job, &args, &start)?;
    // The wait, the run (or an hour when bounded by a count), the warm-up's allowance.
    let run = spec.duration.unwrap_or(Duration::from_secs(3600));
    let wait = match start_at {
        Some(t) => t.duration_since(SystemTime::now()).unwrap_or_default(),
        None => barrier_wait + crate::load::barrier::START_LEAD,
    };
    let deadline = wait.as_secs() + run.as_secs() + 300;
    let gather = format!(
        "kubectl wait --for=condition=complete --timeout={deadline}s job/{name}; kubectl logs -l shootout.dev/job={name} --tail=-1 | shootout merge -",
        name = job.name
    );
    let mut o = String::new();
    match &start {
        Start::At(time) => header_at(&mut o, job, time, &gather),
        Start::Barrier(_) => {
            header_barrier(&mut o, job, barrier_wait, &gather);
            service_yaml(&mut o, job);
        }
    }
    job_yaml(&mut o, job, deadline);
    pod_yaml(&mut o, job, &args, &start);
    Ok((o, gather))
}

/// Checks the job's own flags: shards, names, quantities and the image reference.
fn check_job(job: &JobArgs) -> Result<(), Failure> {
    let usage = |e: String| Failure::usage(anyhow!(e));
    shootout_model::Shard::new(0, job.shards)
        .map_err(|e| usage(format!("--shards {}: {e}", job.shards)))?;
    check_name(&job.name).map_err(usage)?;
    for (flag, q) in [("--cpu", &job.cpu), ("--memory", &job.memory)] {
        if !is_quantity(q) {
            return Err(usage(format!(
                "{flag} {q:?} is not a Kubernetes quantity: write e.g. --cpu 2, --cpu 500m or --memory 512Mi"
            )));
        }
    }
    if job.image.is_empty()
        || job
            .image
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(usage(format!(
            "--image {:?} is not an image reference: write e.g. --image registry.example/shootout:0.1",
            job.image
        )));
    }
    if let Some(claim) = &job.results_claim {
        check_name(claim).map_err(|e| usage(e.replace("--name", "--results-claim")))?;
    }
    Ok(())
}

/// The arguments each pod runs `shootout load` with: the load's, then the shards, how
/// they start together (shard 0's barrier with the Job's id as the run, or a common
/// time) and where the result goes (the log, and the claim when there is one).
fn pod_args(job: &JobArgs, start: &Start) -> Vec<String> {
    let mut args: Vec<String> = job.load.clone();
    args.extend(["--shards".into(), job.shards.to_string()]);
    match start {
        Start::Barrier(at) => args.extend([
            "--barrier".into(),
            at.clone(),
            "--run-id".into(),
            format!("$({RUN_ID_VAR})"),
        ]),
        Start::At(time) => args.extend(["--start-at".into(), time.clone()]),
    }
    args.extend(["--save".into(), "-".into()]);
    if job.results_claim.is_some() {
        args.extend(["--save".into(), "/results".into()]);
    }
    args
}

/// The manifest's opening comments with `--start-in`: the pods wait for `start`.
fn header_at(o: &mut String, job: &JobArgs, start: &str, gather: &str) {
    let n = job.shards;
    let _ = writeln!(
        o,
        "# shootout load as {n} shards, one pod each: a Kubernetes Indexed Job."
    );
    let _ = writeln!(
        o,
        "# Each pod reads its shard from {INDEX_VAR}, waits for {start} and"
    );
    let _ = writeln!(
        o,
        "# prints its result between markers. Apply at once:  kubectl apply -f FILE"
    );
    let _ = writeln!(o, "# Gather and merge when done:");
    let _ = writeln!(o, "#   {gather}");
}

/// The manifest's opening comments with the barrier.
fn header_barrier(o: &mut String, job: &JobArgs, wait: Duration, gather: &str) {
    let (n, name, port) = (job.shards, &job.name, job.barrier_port);
    let wait = humantime::format_duration(wait);
    for line in [
        format!("shootout load as {n} shards, one pod each: a Kubernetes Indexed Job, and the"),
        "headless Service that names its pods. Each pod reads its shard from".into(),
        format!("{INDEX_VAR}. Shard 0 (pod {name}-0) listens on port {port}; the others"),
        format!("reach it at {name}-0.{name} and wait, {wait} at most, until all {n} are"),
        "there; then all start together and print their results between markers.".into(),
        "Apply it any time:  kubectl apply -f FILE".into(),
    ] {
        let _ = writeln!(o, "# {line}");
    }
    let _ = writeln!(o, "# Gather and merge when done:");
    let _ = writeln!(o, "#   {gather}");
}

/// The headless Service that gives each pod a DNS name (`NAME-I.NAME`), shard 0's the one
/// the others connect to; then the document separator before the Job.
fn service_yaml(o: &mut String, job: &JobArgs) {
    let name = quote(&job.name);
    let _ = writeln!(o, "apiVersion: v1");
    let _ = writeln!(o, "kind: Service");
    let _ = writeln!(o, "metadata:");
    let _ = writeln!(o, "  name: {name}");
    let _ = writeln!(o, "  labels:");
    let _ = writeln!(o, "    app.kubernetes.io/name: shootout");
    let _ = writeln!(o, "    shootout.dev/job: {name}");
    let _ = writeln!(o, "spec:");
    let _ = writeln!(
        o,
        "  # Headless: a name per pod for the barrier, no load balancing."
    );
    let _ = writeln!(o, "  clusterIP: None");
    let _ = writeln!(
        o,
        "  # Shard 0's name resolves as soon as its pod has an address."
    );
    let _ = writeln!(o, "  publishNotReadyAddresses: true");
    let _ = writeln!(o, "  selector:");
    let _ = writeln!(o, "    shootout.dev/job: {name}");
    let _ = writeln!(o, "  ports:");
    let _ = writeln!(o, "    - name: barrier");
    let _ = writeln!(o, "      port: {}", job.barrier_port);
    let _ = writeln!(o, "---");
}

/// The Job up to its pod template.
fn job_yaml(o: &mut String, job: &JobArgs, deadline: u64) {
    let n = job.shards;
    let name = quote(&job.name);
    let _ = writeln!(o, "apiVersion: batch/v1");
    let _ = writeln!(o, "kind: Job");
    let _ = writeln!(o, "metadata:");
    let _ = writeln!(o, "  name: {name}");
    let _ = writeln!(o, "  labels:");
    let _ = writeln!(o, "    app.kubernetes.io/name: shootout");
    let _ = writeln!(o, "    shootout.dev/job: {name}");
    let _ = writeln!(o, "spec:");
    let _ = writeln!(o, "  completionMode: Indexed");
    let _ = writeln!(o, "  completions: {n}");
    let _ = writeln!(o, "  # All shards at once: the load is theirs together.");
    let _ = writeln!(o, "  parallelism: {n}");
    let _ = writeln!(
        o,
        "  # A failed shard is not run again: it would start after the others"
    );
    let _ = writeln!(o, "  # (Kubernetes 1.29+; the merge names it).");
    let _ = writeln!(o, "  backoffLimitPerIndex: 0");
    let _ = writeln!(
        o,
        "  # The wait, the run and a margin: no pod outlives the load."
    );
    let _ = writeln!(o, "  activeDeadlineSeconds: {deadline}");
}

/// The Job's pod template: spread over nodes, named by the Service (with the barrier), the
/// container with its arguments, the Job's id (with the barrier) and a guaranteed share of
/// CPU and memory, and the results claim when there is one.
fn pod_yaml(o: &mut String, job: &JobArgs, args: &[String], start: &Start) {
    let q = quote;
    let name = q(&job.name);
    let barrier = matches!(start, Start::Barrier(_));
    let _ = writeln!(o, "  template:");
    let _ = writeln!(o, "    metadata:");
    let _ = writeln!(o, "      labels:");
    let _ = writeln!(o, "        app.kubernetes.io/name: shootout");
    let _ = writeln!(o, "        shootout.dev/job: {name}");
    let _ = writeln!(o, "    spec:");
    let _ = writeln!(o, "      restartPolicy: Never");
    if barrier {
        let _ = writeln!(
            o,
            "      # Pod I is {}-I.{} in DNS: the Service above gives the names.",
            job.name, job.name
        );
        let _ = writeln!(o, "      subdomain: {name}");
    }
    let _ = writeln!(
        o,
        "      # One pod per node where the cluster allows: shards sharing a node"
    );
    let _ = writeln!(o, "      # share its CPUs and its network.");
    let _ = writeln!(o, "      topologySpreadConstraints:");
    let _ = writeln!(o, "        - maxSkew: 1");
    let _ = writeln!(o, "          topologyKey: kubernetes.io/hostname");
    let _ = writeln!(o, "          whenUnsatisfiable: ScheduleAnyway");
    let _ = writeln!(o, "          labelSelector:");
    let _ = writeln!(o, "            matchLabels:");
    let _ = writeln!(o, "              shootout.dev/job: {name}");
    let _ = writeln!(o, "      containers:");
    let _ = writeln!(o, "        - name: shootout");
    let _ = writeln!(o, "          image: {}", q(&job.image));
    // The load's own arguments are the user's: every `$` in them is written `$$`, which
    // Kubernetes turns back into `$` (it expands `$(NAME)` in a container's arguments).
    // The job's arguments after them are ours, `$(SHOOTOUT_RUN_ID)` meant to expand.
    let users = job.load.len();
    let args: Vec<String> = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i < users {
                q(&escape_dollars(a))
            } else {
                q(a)
            }
        })
        .collect();
    let _ = writeln!(o, "          args: [{}]", args.join(", "));
    if barrier {
        barrier_yaml(o, job);
    }
    let _ = writeln!(
        o,
        "          # Requests equal to limits: a guaranteed share of the node, so the"
    );
    let _ = writeln!(
        o,
        "          # generator's own speed does not vary from pod to pod."
    );
    let _ = writeln!(o, "          resources:");
    for part in ["requests", "limits"] {
        let _ = writeln!(o, "            {part}:");
        let _ = writeln!(o, "              cpu: {}", q(&job.cpu));
        let _ = writeln!(o, "              memory: {}", q(&job.memory));
    }
    if let Some(claim) = &job.results_claim {
        let _ = writeln!(o, "          volumeMounts:");
        let _ = writeln!(o, "            - name: results");
        let _ = writeln!(o, "              mountPath: /results");
        let _ = writeln!(o, "      volumes:");
        let _ = writeln!(o, "        - name: results");
        let _ = writeln!(o, "          persistentVolumeClaim:");
        let _ = writeln!(o, "            claimName: {}", q(claim));
    }
}

/// The container's barrier: the Job's uid as the run id, and shard 0's port.
fn barrier_yaml(o: &mut String, job: &JobArgs) {
    let _ = writeln!(
        o,
        "          # The Job's uid is the run: pods of another Job of this name never meet these."
    );
    let _ = writeln!(o, "          env:");
    let _ = writeln!(o, "            - name: {RUN_ID_VAR}");
    let _ = writeln!(o, "              valueFrom:");
    let _ = writeln!(o, "                fieldRef:");
    let _ = writeln!(
        o,
        "                  fieldPath: \"metadata.labels['batch.kubernetes.io/controller-uid']\""
    );
    let _ = writeln!(o, "          ports:");
    let _ = writeln!(o, "            - name: barrier");
    let _ = writeln!(o, "              containerPort: {}", job.barrier_port);
}

/// Checks the load the pods will run, as shard 0 of N reads it; returns the fleet's spec
/// and the barrier's wait limit. `pod_args` are the arguments each pod gets (the load's,
/// then the job's own), read by the parser the pods run, so a manifest never carries
/// arguments its pods cannot read.
fn check_load(
    job: &JobArgs,
    pod_args: &[String],
    start: &Start,
) -> Result<(shootout_model::LoadSpec, Duration), Failure> {
    let usage = |e: String| Failure::usage(anyhow!(e));
    if job.load.first().map(String::as_str) != Some("load") {
        return Err(usage(
            "give the load after --, starting with the word load: shootout k8s job --shards 4 --image IMAGE -- load --rate 20000 -d 60s URL".into(),
        ));
    }
    let parsed = LoadCommand::try_parse_from(&job.load[1..]).map_err(|e| {
        usage(format!(
            "the load after --: {}",
            crate::output::clap_line(&e.to_string())
        ))
    })?;
    let d = &parsed.load.dist;
    if d.shard.is_some()
        || d.shards.is_some()
        || d.start_at.is_some()
        || d.barrier.is_some()
        || d.barrier_listen.is_some()
        || d.run_id.is_some()
        || !d.save.is_empty()
    {
        return Err(usage(
            "the load after -- must not give --shard, --shards, --start-at, --barrier, --barrier-listen, --run-id or --save: the job sets them for each pod".into(),
        ));
    }
    if parsed.load.unix_socket.is_some() {
        return Err(usage(
            "--unix-socket cannot reach a server from other pods: give the server's URL".into(),
        ));
    }
    let mut load = pod_load(job, pod_args, start)?;
    let wait = parse_duration(&load.dist.barrier_wait).unwrap_or_default();
    load.dist.shards = None;
    load.dist.save.clear();
    load.dist.shard = Some(format!("0/{}", job.shards));
    let fleet = crate::load::check(&load)
        .map_err(|f| Failure::usage(anyhow!("the load after --: {:#}", f.error)))?;
    Ok((fleet, wait))
}

/// The load as a pod reads its arguments: the job's flags must reach it as flags.
fn pod_load(job: &JobArgs, pod_args: &[String], start: &Start) -> Result<LoadArgs, Failure> {
    let usage = |e: String| Failure::usage(anyhow!(e));
    let mut saves = vec![std::path::PathBuf::from("-")];
    if job.results_claim.is_some() {
        saves.push("/results".into());
    }
    let starts_as_given = |d: &crate::load::dist::DistArgs| match start {
        Start::Barrier(at) => {
            d.barrier.as_ref() == Some(at)
                && d.run_id.as_deref() == Some(&format!("$({RUN_ID_VAR})"))
                && d.start_at.is_none()
        }
        Start::At(time) => d.start_at.as_ref() == Some(time) && d.barrier.is_none(),
    };
    let words = std::iter::once("shootout").chain(pod_args.iter().map(String::as_str));
    match crate::Cli::try_parse_from(words) {
        Ok(crate::Cli {
            command: crate::Command::Load(pod),
        }) if pod.dist.shards == Some(job.shards)
            && starts_as_given(&pod.dist)
            && pod.dist.save == saves =>
        {
            Ok(*pod)
        }
        Ok(_) => Err(usage(format!(
            "the load after --: the pods would not read --shards {}, how they start and --save as the job gives them: check the load's last flags",
            job.shards
        ))),
        Err(e) => {
            let double_dash = if job.load.iter().any(|a| a == "--") {
                ": remove the `--` from the load's flags (the job adds --shards, --barrier and --save after them, which a `--` would turn into arguments)"
            } else {
                ""
            };
            Err(usage(format!(
                "the load after --, with the job's flags, is not what a pod can run: {}{double_dash}",
                crate::output::clap_line(&e.to_string())
            )))
        }
    }
}

/// `s` as a YAML double-quoted scalar that reads back as exactly `s`, whatever it holds.
/// Printable ASCII is written as it is (`"` and `\` escaped); every other character as
/// an escape (`\n`, `\t`, … or `\uXXXX`, `\UXXXXXXXX`), which YAML 1.1 and 1.2 both read
/// as that character. So the manifest is ASCII, and no character reaches a parser raw:
/// raw, U+0085 (NEL) is a line break that folds into a space, and C1 controls, U+007F
/// and noncharacters such as U+FFFE are not printable, so parsers refuse them. ASCII other
/// than U+007F is quoted as JSON quotes it.
fn quote(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            '\u{8}' => o.push_str("\\b"),
            '\u{c}' => o.push_str("\\f"),
            ' '..='~' => o.push(c),
            c if u32::from(c) <= 0xFFFF => {
                let _ = write!(o, "\\u{:04x}", u32::from(c));
            }
            c => {
                let _ = write!(o, "\\U{:08x}", u32::from(c));
            }
        }
    }
    o.push('"');
    o
}

/// `s` with every `$` written `$$`: Kubernetes expands `$(NAME)` in a container's
/// arguments to the variable's value and turns `$$` into `$`, so this reaches the pod as
/// `s` whatever it holds.
fn escape_dollars(s: &str) -> String {
    s.replace('$', "$$")
}

/// A DNS-1123 label short enough for the pods' names: the rule for `--name`.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 52
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--name {name:?} is not a Kubernetes name: use at most 52 lowercase letters, digits and '-', starting and ending with a letter or digit"
        ))
    }
}

/// A Kubernetes quantity as users write CPU and memory: a number and an optional suffix.
fn is_quantity(q: &str) -> bool {
    let digits = q.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &q[digits.len()..];
    let number = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().filter(|&b| b == b'.').count() <= 1
        && digits.bytes().any(|b| b.is_ascii_digit());
    number && ["", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"].contains(&suffix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Strings of any characters, the rare ones (C1 controls, noncharacters, line and
    /// paragraph separators, the BOM, the last plane) included.
    fn any_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(any::<char>(), 0..24).prop_map(|v| v.into_iter().collect())
    }

    /// `strings` quoted as the manifest's `args: [...]` line, read back as kubectl would.
    fn read_back(strings: &[&str]) -> Vec<String> {
        let quoted: Vec<String> = strings.iter().map(|s| quote(s)).collect();
        let line = format!("args: [{}]\n", quoted.join(", "));
        let doc: std::collections::BTreeMap<String, Vec<String>> =
            serde_yaml_ng::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
        doc["args"].clone()
    }

    #[test]
    fn a_next_line_a_c1_control_and_a_noncharacter_read_back_exactly() {
        // U+0085 read back as a space; U+0080 and U+FFFE made YAML parsers refuse the
        // manifest; U+007F is not printable in YAML either.
        let odd = [
            "a\u{85}b",
            "\u{80}",
            "x\u{FFFE}y",
            "\u{7F}",
            "\u{FEFF}bom",
            "\u{2028}\u{2029}",
            "\u{10FFFF}",
            "tab\there \"quoted\" back\\slash\r\n",
            "",
        ];
        assert_eq!(read_back(&odd), odd);
    }

    proptest! {
        #[test]
        fn every_string_reads_back_exactly_from_the_manifest(a in any_text(), b in any_text()) {
            prop_assert_eq!(read_back(&[&a, &b]), vec![a, b]);
        }
    }

    /// A container argument as Kubernetes expands it (`$(NAME)` from `vars`, `$$` to `$`,
    /// any other `$` as it is), as the kubelet does before the pod starts.
    fn k8s_expand(s: &str, vars: &[(&str, &str)]) -> String {
        let mut o = String::new();
        let mut rest = s;
        while let Some(at) = rest.find('$') {
            o.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix('$') {
                o.push('$');
                rest = tail;
            } else if let Some((name, value)) = after
                .strip_prefix('(')
                .and_then(|inner| inner.find(')').map(|end| &inner[..end]))
                .and_then(|name| vars.iter().find(|(n, _)| *n == name))
            {
                o.push_str(value);
                rest = &after[name.len() + 2..];
            } else {
                o.push('$');
                rest = after;
            }
        }
        o.push_str(rest);
        o
    }

    #[test]
    fn a_users_dollar_reaches_the_pod_as_written() {
        // `$(SHOOTOUT_RUN_ID)` in the user's load reached the pod as the Job's uid, and
        // `$$(X)` as `$(X)`.
        #[derive(Parser)]
        #[command(no_binary_name = true)]
        struct Job {
            #[command(flatten)]
            job: JobArgs,
        }
        let words = [
            "--shards", "2", "--image", "x", "--", "load", "-n", "2", "-c", "2", "-H",
        ];
        let header = "x-a: $(SHOOTOUT_RUN_ID) $$(X) $ $(";
        let job = Job::try_parse_from(words.iter().copied().chain([header, "http://web:8080/"]))
            .unwrap()
            .job;
        let (manifest, _) = manifest(&job, None).unwrap();
        let doc: serde_json::Value = manifest
            .split("\n---\n")
            .map(|d| serde_yaml_ng::from_str::<serde_json::Value>(d).unwrap())
            .find(|d| d["kind"] == "Job")
            .unwrap();
        let args = &doc["spec"]["template"]["spec"]["containers"][0]["args"];
        let vars = [(RUN_ID_VAR, "uid-1")];
        let got: Vec<String> = args
            .as_array()
            .unwrap()
            .iter()
            .map(|a| k8s_expand(a.as_str().unwrap(), &vars))
            .collect();
        assert_eq!(got[..job.load.len()], job.load[..]);
        assert_eq!(got[6], header);
        // The job's own run id is still expanded.
        let run_id = got.iter().position(|a| a == "--run-id").unwrap();
        assert_eq!(got[run_id + 1], "uid-1");
    }

    #[test]
    fn names_and_quantities_follow_kubernetes_rules() {
        assert!(check_name("shootout-load-2").is_ok());
        for bad in ["", "Load", "-a", "a-", "a_b", &"a".repeat(53)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        for ok in ["1", "500m", "0.5", "256Mi", "1Gi", "2G"] {
            assert!(is_quantity(ok), "{ok}");
        }
        for bad in ["", "m", "1.2.3", "1 Gi", "1Xi", "-1", "1e3"] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }
}
