//! `acres-harness proxy`: the metering model proxy ([`crate::agents::proxy`]) in the foreground.
//! The first line on stdout is its base URL; it runs until it is stopped. Exit 2 on bad input.
//!
//! ```text
//! acres-harness proxy --upstream https://api.anthropic.com --key-env ANTHROPIC_API_KEY \
//!     --run runs/a/t1_01_one_field__checked__claude-code --port 8788
//! acres-harness proxy --model claude-opus-5-5 --run runs/a/t1_01_one_field__checked__claude-code
//! ```

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::run::model_dir;
use super::Failure;
use crate::agents::proxy::{start, Pricing, ProxyOptions};
use crate::planners::models::config::{list, resolve, Resolved};

/// Options of `proxy`.
#[derive(Debug, Clone, Args)]
pub struct ProxyArgs {
    /// The agent's run folder (`<out>/<scenario>__<mode>__<agent-name>`): `proxy.jsonl` goes in it.
    #[arg(long)]
    pub run: PathBuf,
    /// The model service's base URL (default: the base_url of `--model`).
    #[arg(long)]
    pub upstream: Option<String>,
    /// The environment variable holding the service's key (default: the api_key_env of
    /// `--model`; none: the client's own key headers are relayed).
    #[arg(long)]
    pub key_env: Option<String>,
    /// A model file (a name or a TOML file) whose prices price every call (default: the model
    /// file whose `model` is the one each request names).
    #[arg(long)]
    pub model: Option<String>,
    /// The port on 127.0.0.1 (0: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The longest one call may take, answer included, s.
    #[arg(long, default_value_t = 900.0)]
    pub timeout_s: f64,
}

/// Checks the options, starts the proxy, prints its URL and serves until stopped.
pub fn run(a: ProxyArgs) -> Result<(), Failure> {
    let dir = model_dir();
    let file = match &a.model {
        Some(m) => Some(resolve(m, &dir).map_err(|e| Failure::input(e.to_string()))?),
        None => None,
    };
    let upstream = match (&a.upstream, &file) {
        (Some(u), _) => u.trim_end_matches('/').to_string(),
        (None, Some(f)) => f.config.base_url(),
        (None, None) => return Err(Failure::input("proxy: give --upstream URL or --model NAME")),
    };
    if !(upstream.starts_with("http://") || upstream.starts_with("https://")) {
        return Err(Failure::input(format!(
            "--upstream \"{upstream}\" is not an http:// or https:// address"
        )));
    }
    if !(a.timeout_s.is_finite() && a.timeout_s > 0.0) {
        return Err(Failure::input("--timeout-s must be > 0"));
    }
    let key_env = a.key_env.clone().or_else(|| file.as_ref().and_then(|f| f.config.api_key_env.clone()));
    let key = match &key_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Some(v),
            _ => return Err(Failure::input(format!("proxy: the environment variable {var} is not set"))),
        },
        None => None,
    };
    let pricing = match file {
        Some(f) => Pricing::File(Box::new(f)),
        None => Pricing::ByModel(
            list(&dir)
                .into_iter()
                .filter_map(|(name, file, c)| c.ok().map(|config| Resolved { name, file, config }))
                .collect(),
        ),
    };
    let run_dir = a.run.clone();
    let opts = ProxyOptions { upstream, run_dir, key, pricing, port: a.port, timeout_s: a.timeout_s };
    let proxy = start(opts).map_err(|e| Failure::env(format!("127.0.0.1:{}: cannot listen: {e}", a.port)))?;
    println!("{}", proxy.url());
    let _ = std::io::stdout().flush();
    eprintln!(
        "proxy: ANTHROPIC_BASE_URL={url} OPENAI_BASE_URL={url}/v1; the calls go to {}",
        a.run.join(crate::runfolder::proxy::PROXY_FILE).display(),
        url = proxy.url()
    );
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
