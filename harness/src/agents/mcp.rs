//! The MCP server face (`acres-harness mcp`): the mode's tools with the schemas the model clients
//! send, plus `wait_for_wake`, over stdio or streamable HTTP on 127.0.0.1, on the Rust MCP SDK.
//!
//! - The server's `instructions` are the run's system text; `tools/list` gives the mode's tools
//!   (only `look` and `read` with `--read-only`) and `wait_for_wake`.
//! - A tool's result is one text block, the result object as JSON; `look` adds its PNG as an
//!   image block (the JSON text is its caption). No `structuredContent` is sent beside an image
//!   (some clients drop the image then), and none is sent at all, for one shape everywhere.
//! - `wait_for_wake` blocks until the next wake-up: its message as text and, in the visual and
//!   checked modes, the map picture. While it blocks, a progress notification goes every
//!   [`PROGRESS_EVERY_S`] with the client's own progress token (mission time, skill, progress).
//! - A refused call (outside the agent's turn, after the end) is a tool error whose text is a
//!   JSON object with the phase (and the end code after the end), never a protocol error.
//! - One client session per run: a second `initialize` is refused. Only the protocol versions
//!   with an `initialize` handshake are offered (up to 2025-11-25), so the session is a session.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;

use super::session::{AgentPort, Answer, Picture};
use crate::runfolder::rows::ToolDef;
use crate::tools::export::{drop_nulls, wait_for_wake_def, WAIT_FOR_WAKE};

/// The version of the Rust MCP SDK (`rmcp`, pinned exactly in the workspace's Cargo.toml), as
/// the run row's planner versions record it.
pub const RMCP_VERSION: &str = "3.11.0";

/// The period of the progress notifications while `wait_for_wake` blocks, s.
pub const PROGRESS_EVERY_S: f64 = 0.5;

/// The MCP server of one agent's run.
#[derive(Clone)]
pub struct McpFace {
    port: AgentPort,
    tools: Arc<Vec<Tool>>,
    instructions: Arc<String>,
    claimed: Arc<AtomicBool>,
}

impl McpFace {
    /// A face for `port` registering `tools` (the mode's, already filtered for `--read-only`)
    /// and `wait_for_wake`, with the run's system text as its instructions.
    pub fn new(port: AgentPort, tools: &[ToolDef], instructions: &str) -> Self {
        let mut defs: Vec<ToolDef> = tools.to_vec();
        defs.push(wait_for_wake_def());
        let tools = defs
            .into_iter()
            .map(|d| {
                let schema: JsonObject = d.input_schema.as_object().cloned().unwrap_or_default();
                Tool::new(d.name, d.description, Arc::new(schema))
            })
            .collect();
        McpFace {
            port,
            tools: Arc::new(tools),
            instructions: Arc::new(instructions.to_string()),
            claimed: Arc::new(AtomicBool::new(false)),
        }
    }

    fn registered(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }

    /// `wait_for_wake` with progress notifications while it blocks.
    async fn wait(&self, context: &RequestContext<RoleServer>) -> Answer {
        let token = context.meta.get_progress_token();
        let wait = self.port.wait_for_wake();
        tokio::pin!(wait);
        let mut tick = tokio::time::interval(Duration::from_secs_f64(PROGRESS_EVERY_S));
        tick.tick().await;
        let mut n = 0u64;
        loop {
            tokio::select! {
                a = &mut wait => return a,
                _ = tick.tick() => {
                    let Some(token) = token.clone() else { continue };
                    n += 1;
                    let s = self.port.status();
                    let message = format!(
                        "mission time {:.1} s, skill {}, progress {:.0} %",
                        s.t_s,
                        s.skill.as_deref().unwrap_or("none"),
                        s.progress * 100.0
                    );
                    let p = ProgressNotificationParam::new(token, n as f64).with_message(message);
                    let _ = context.peer.notify_progress(p).await;
                }
            }
        }
    }
}

/// The content blocks of an answer: its JSON (or the wake-up's text) and its picture.
pub fn answer_result(a: &Answer) -> CallToolResult {
    let image = |p: &Option<Picture>| {
        p.as_ref().map(|p| {
            ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(p.png.as_slice()),
                "image/png",
            )
        })
    };
    match a {
        Answer::Tool { result, is_error, picture } => {
            let mut content = vec![ContentBlock::text(result.to_string())];
            content.extend(image(picture));
            if *is_error {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            }
        }
        Answer::Wake { message, picture } => {
            let mut content = vec![ContentBlock::text(message.clone())];
            content.extend(image(picture));
            CallToolResult::success(content)
        }
        Answer::Refused { .. } | Answer::Ended { .. } => {
            CallToolResult::error(vec![ContentBlock::text(a.to_json().to_string())])
        }
    }
}

impl ServerHandler for McpFace {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("acres-harness", crate::HARNESS_VERSION))
            .with_instructions(self.instructions.as_str())
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        if self.claimed.swap(true, Ordering::SeqCst) {
            return Err(McpError::invalid_request(
                "a client session is attached to this run already; a run has one agent",
                None,
            ));
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        if !self.registered(name) {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
            let text = format!("unknown tool \"{name}\"; the tools are {}", names.join(", "));
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        }
        let answer = if name == WAIT_FOR_WAKE {
            self.wait(&context).await
        } else {
            let args = Value::Object(request.arguments.clone().unwrap_or_default());
            self.port.tool(name, drop_nulls(&args)).await
        };
        Ok(answer_result(&answer).into())
    }
}

/// A face that could not serve.
#[derive(Debug, thiserror::Error)]
pub enum FaceError {
    /// The transport failed (stdio, the socket).
    #[error("the MCP transport: {0}")]
    Transport(String),
}

/// Serves one client on stdin/stdout until it closes them.
pub async fn serve_stdio(face: McpFace) -> Result<(), FaceError> {
    use rmcp::ServiceExt;
    let running =
        face.serve(rmcp::transport::stdio()).await.map_err(|e| FaceError::Transport(e.to_string()))?;
    running.waiting().await.map_err(|e| FaceError::Transport(e.to_string()))?;
    Ok(())
}

/// Serves streamable HTTP on `listener` (bound to 127.0.0.1 by the caller) until the run has
/// ended and `linger_s` more have passed (time for the agent to read the end).
pub async fn serve_http(
    face: McpFace,
    listener: tokio::net::TcpListener,
    linger_s: f64,
) -> Result<(), FaceError> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let port = face.port.clone();
    // The rule of every local HTTP face: only the address bound as Host, its origins only.
    let bound = listener.local_addr().map_err(|e| FaceError::Transport(e.to_string()))?.port();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(crate::local_http::allowed_hosts(bound))
        .with_allowed_origins(crate::local_http::allowed_origins(bound));
    let stop = config.cancellation_token.clone();
    let service = StreamableHttpService::new(
        move || Ok(face.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let over = async {
        port.ended().await;
        tokio::time::sleep(Duration::from_secs_f64(linger_s.max(0.0))).await;
    };
    tokio::pin!(over);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, _) = accepted.map_err(|e| FaceError::Transport(e.to_string()))?;
                let svc = TowerToHyperService::new(service.clone());
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), svc).await;
                });
            }
            _ = &mut over => break,
        }
    }
    stop.cancel();
    Ok(())
}
