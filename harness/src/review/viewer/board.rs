//! `/api/board`: the leaderboard of a sweep folder for the viewer's folder page — the groups
//! (`sweep::board`), the planner × scenario matrix with the run folders of each cell, the
//! cost-vs-success chart (SVG) and the paired comparison of two groups (`sweep::compare`).
//!
//! `?a=KEY&b=KEY` chooses the comparison; without them it is the first two groups. A folder with
//! no finished sweep run answers `{"sweep": false}`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::http::{Request, Response};
use super::Viewer;
use crate::sweep::board::{groups, Group, Merge};
use crate::sweep::compare::{compare, key_of, resolve, Comparison};

/// One cell of the matrix.
#[derive(Debug, Serialize)]
pub struct Cell {
    /// Counted runs that succeeded.
    pub successes: u64,
    /// Counted runs.
    pub counted: u64,
    /// Every finished run of the cell (infrastructure ends too), as the index names folders.
    pub runs: Vec<String>,
}

/// One line of the matrix: a group.
#[derive(Debug, Serialize)]
pub struct Line {
    /// The group's key.
    pub key: String,
    /// Per scenario.
    pub cells: BTreeMap<String, Cell>,
}

/// The answer.
#[derive(Debug, Serialize)]
pub struct Board {
    /// Whether the folder holds finished sweep runs.
    pub sweep: bool,
    /// The groups.
    pub groups: Vec<Group>,
    /// The keys of the groups, in order.
    pub keys: Vec<String>,
    /// Every scenario of the matrix.
    pub scenarios: Vec<String>,
    /// The matrix, a line per group.
    pub matrix: Vec<Line>,
    /// The chart.
    pub chart_svg: String,
    /// The comparison (two groups or more).
    pub comparison: Option<Comparison>,
}

/// `/api/board`.
pub fn board(v: &Viewer, req: &Request) -> Response {
    let merge = Merge::load(std::slice::from_ref(&v.root));
    if merge.entries.is_empty() {
        return Response::json(&serde_json::json!({"sweep": false}));
    }
    let gs = groups(&merge.entries);
    let keys: Vec<String> = gs.iter().map(key_of).collect();
    let pick = |name: &str, default: usize| -> Result<Option<&Group>, Response> {
        match req.get(name) {
            Some(k) => resolve(k, &gs).map(Some).map_err(|e| Response::error(404, e)),
            None => Ok(gs.get(default)),
        }
    };
    let comparison = match (pick("a", 0), pick("b", 1)) {
        (Ok(Some(a)), Ok(Some(b))) => Some(compare(&merge.entries, a, b)),
        (Err(r), _) | (_, Err(r)) => return r,
        _ => None,
    };
    let mut scenarios: Vec<String> = merge.entries.iter().map(|e| e.id.scenario.clone()).collect();
    scenarios.sort();
    scenarios.dedup();
    let matrix = gs
        .iter()
        .map(|g| {
            let mut cells: BTreeMap<String, Cell> = g
                .scenarios
                .iter()
                .map(|(s, &(c, n))| (s.clone(), Cell { successes: c, counted: n, runs: Vec::new() }))
                .collect();
            for e in merge.entries.iter().filter(|e| {
                e.planner == g.planner
                    && e.id.model == g.model
                    && e.id.mode == g.mode
                    && e.id.profile == g.profile
            }) {
                let rel = e.folder.strip_prefix(&v.root).unwrap_or(&e.folder);
                let rel: Vec<String> =
                    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                if let Some(cell) = cells.get_mut(&e.id.scenario) {
                    cell.runs.push(rel.join("/"));
                }
            }
            Line { key: key_of(g), cells }
        })
        .collect();
    Response::json(&Board {
        sweep: true,
        chart_svg: crate::sweep::chart::svg(&gs),
        groups: gs,
        keys,
        scenarios,
        matrix,
        comparison,
    })
}
