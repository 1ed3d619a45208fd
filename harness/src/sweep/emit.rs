//! The scheduler files of a sweep (`acres-harness sweep --emit slurm|k8s`), made from the spec
//! so that they run exactly its runs.
//!
//! - Slurm: a bash script that submits a job array of `shards` tasks (one task per shard, at
//!   most `throttle` at once: `--array=1-N%T`; each task runs `sweep` and takes its shard from
//!   `SLURM_ARRAY_TASK_ID`), then a merge job (`--dependency=afterok:<array>`) that writes the
//!   leaderboard (`leaderboard.json`, `.md`, `.csv`, `.svg`, `.png` in the output folder).
//! - Kubernetes: an Indexed Job (`completionMode: Indexed`, `completions` = shards,
//!   `parallelism` = throttle, `backoffLimitPerIndex`; each pod takes its shard from
//!   `JOB_COMPLETION_INDEX`) and a merge Job, both mounting one shared volume (a
//!   PersistentVolumeClaim, ReadWriteMany) for the spec, the scenarios and the output. The
//!   documents are JSON (valid YAML), separated by `---`; apply the merge Job once the sweep Job
//!   is complete (`docs/sweeps.md`).

use serde_json::{json, Value};

/// What the scheduler files need beyond the spec.
#[derive(Debug, Clone)]
pub struct EmitOptions {
    /// The spec file as the jobs see it.
    pub spec: String,
    /// The output folder as the jobs see it.
    pub out: String,
    /// Shards (array tasks, Job completions).
    pub shards: u64,
    /// Shards at once (Slurm `%N`, the Job's parallelism).
    pub throttle: u64,
    /// Runs at once in one shard (threads; the CPUs asked per task).
    pub workers: usize,
    /// The harness program as the jobs see it (Slurm).
    pub harness: String,
    /// The container image (Kubernetes).
    pub image: String,
    /// The PersistentVolumeClaim of the shared volume (Kubernetes).
    pub claim: String,
    /// Where the shared volume is mounted in the pods (Kubernetes).
    pub mount: String,
    /// The job name.
    pub name: String,
}

/// Quotes a word for bash (single quotes).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-:=@%+,".contains(&b)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The Slurm submit script.
pub fn slurm(o: &EmitOptions) -> String {
    let q = shell_quote;
    format!(
        r#"#!/usr/bin/env bash
# The Slurm job array of a sweep, made by `acres-harness sweep --emit slurm` (do not edit: make
# it again from the spec). One array task per shard ({shards} shards, at most {throttle} at once);
# each task takes its shard from SLURM_ARRAY_TASK_ID. A merge job writes the leaderboard once
# every task has ended well (afterok). Prints the two job ids.
set -euo pipefail
harness=${{ACRES_HARNESS:-{harness}}}
spec={spec}
out={out}
name={name}
mkdir -p "$out/slurm"
array_job=$(sbatch --parsable --job-name="$name" --array=1-{shards}%{throttle} \
    --cpus-per-task={workers} --output="$out/slurm/shard-%a.log" <<EOF
#!/usr/bin/env bash
exec "$harness" sweep "$spec" --out "$out" --workers {workers}
EOF
)
array_job=${{array_job%%;*}}
merge_job=$(sbatch --parsable --job-name="$name-merge" --dependency="afterok:$array_job" \
    --output="$out/slurm/merge.log" <<EOF
#!/usr/bin/env bash
exec "$harness" leaderboard "$out" --json "$out/leaderboard.json" --markdown "$out/leaderboard.md" \
    --csv "$out/leaderboard.csv" --svg "$out/leaderboard.svg" --png "$out/leaderboard.png"
EOF
)
merge_job=${{merge_job%%;*}}
echo "$array_job $merge_job"
"#,
        shards = o.shards,
        throttle = o.throttle,
        workers = o.workers,
        harness = q(&o.harness),
        spec = q(&o.spec),
        out = q(&o.out),
        name = q(&o.name),
    )
}

fn pod(o: &EmitOptions, args: Vec<String>) -> Value {
    json!({
        "restartPolicy": "Never",
        "containers": [{
            "name": "acres",
            "image": o.image,
            "command": ["acres-harness"],
            "args": args,
            "resources": {"requests": {"cpu": o.workers.to_string()}},
            "volumeMounts": [{"name": "sweep", "mountPath": o.mount}],
        }],
        "volumes": [{"name": "sweep", "persistentVolumeClaim": {"claimName": o.claim}}],
    })
}

/// The Kubernetes documents: the Indexed Job of the shards, then the merge Job.
pub fn k8s_documents(o: &EmitOptions) -> Vec<Value> {
    let shard_args = vec![
        "sweep".to_string(),
        o.spec.clone(),
        "--out".into(),
        o.out.clone(),
        "--shards".into(),
        o.shards.to_string(),
        "--workers".into(),
        o.workers.to_string(),
    ];
    let merge_args = vec![
        "leaderboard".to_string(),
        o.out.clone(),
        "--json".into(),
        format!("{}/leaderboard.json", o.out),
        "--markdown".into(),
        format!("{}/leaderboard.md", o.out),
        "--csv".into(),
        format!("{}/leaderboard.csv", o.out),
        "--svg".into(),
        format!("{}/leaderboard.svg", o.out),
        "--png".into(),
        format!("{}/leaderboard.png", o.out),
    ];
    let labels = json!({"app.kubernetes.io/name": "acres-sweep", "acres/sweep": o.name});
    vec![
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": o.name, "labels": labels},
            "spec": {
                "completionMode": "Indexed",
                "completions": o.shards,
                "parallelism": o.throttle,
                "backoffLimitPerIndex": 2,
                "maxFailedIndexes": 0,
                "template": {"metadata": {"labels": labels}, "spec": pod(o, shard_args)},
            },
        }),
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": format!("{}-merge", o.name), "labels": labels},
            "spec": {
                "completions": 1,
                "backoffLimit": 2,
                "template": {"metadata": {"labels": labels}, "spec": pod(o, merge_args)},
            },
        }),
    ]
}

/// The Kubernetes manifest text: the documents as JSON, separated by `---`.
pub fn k8s(o: &EmitOptions) -> String {
    let docs: Vec<String> =
        k8s_documents(o).iter().map(|d| serde_json::to_string_pretty(d).expect("json")).collect();
    format!(
        "# The Kubernetes Indexed Job of a sweep and its merge Job, made by `acres-harness sweep --emit k8s`.\n\
         # Apply the first, wait for it (kubectl wait --for=condition=complete job/{name}), then the second.\n{}\n",
        docs.join("\n---\n"),
        name = o.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_bash() {
        assert_eq!(shell_quote("/a/b.toml"), "/a/b.toml");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
