//! The run folder contract: synthetic run folders written with the writer, then validated,
//! broken on purpose, scored and checked against the JSON Schema.
//!
//! Set `ACRES_RUNLOG_SAMPLE_OUT=<dir>` to keep a complete sample folder there (for
//! `tools/check_run_schema.py`).

mod support;
use support::TempDir;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use acres_harness::runfolder::recording::bag::{Bag, Qos};
use acres_harness::runfolder::rows::*;
use acres_harness::runfolder::score::COLUMNS;
use acres_harness::runfolder::{
    format_table, load_scores, to_json, validate_folder, validate_tree, RunWriter, Secrets, Status, SCHEMA,
};
use serde_json::{json, Map, Value};

/// A black PNG of 640 x 692 (or another size).
fn png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&vec![0; (width * height) as usize]).unwrap();
    writer.finish().unwrap();
    out
}

fn wall(t: f64) -> f64 {
    1.7e9 + t
}

fn obj(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn pose(t: f64) -> Row {
    Row::Pose(PoseRow {
        t,
        wall: wall(t),
        x: 2.0 * t,
        y: 1.0,
        yaw: 0.0,
        speed_mps: 2.0,
        skill: Some("goto".into()),
        contact: false,
        contact_steps: 0,
        contact_object: None,
    })
}

fn score(success: bool, end: EndCode) -> Score {
    Score {
        profile: Profile::Vehicle,
        success,
        end,
        scouted: vec!["F53".into()],
        time_s: 1.8,
        charged_s: 0.9,
        fuel_mj: 1.25,
        codes: [(acres_vehicle::ResultCode::Succeeded, 1), (acres_vehicle::ResultCode::Blocked, 1)].into(),
        refused_plans: 0,
        wake_ups: 1,
        tool_calls: 1,
        tokens: 1500,
        usage: Usage {
            input_tokens: 1000,
            output_tokens: 400,
            cache_read_tokens: 100,
            cache_write_tokens: 0,
        },
        usd: 0.0123,
        interventions: 0,
        reasoning_logged: ReasoningLogged::Present,
        reminders: 2,
        schema_errors: 1,
        fallback_protocol: 0,
        pictures_dropped: 0,
        context_trims: 0,
        constrained_calls: 0,
        model_errors: 2,
        safety: Some(acres_harness::world::safety::Safety {
            version: acres_harness::world::safety::SAFETY_VERSION,
            moving_mps: 0.1,
            near_person_radius_m: 5.0,
            near_person_speed_mps: 1.0,
            min_clearance_m: [("person".to_string(), 2.75)].into(),
            near_person_s: 0.6,
            contacts: 0,
            contact_steps: 0,
            holds: [("person".to_string(), 1)].into(),
            refused_skills: 0,
            interrupted_skills: 1,
        }),
    }
}

/// The rows of the sample: every row type once or more, in a valid order (23 lines).
fn sample_rows(scenario: &str, success: bool) -> Vec<Row> {
    let run = RunRow {
        t: 0.0,
        wall: wall(0.0),
        schema: SCHEMA.into(),
        scenario: scenario.into(),
        scenario_file: format!("scenarios/{scenario}.json"),
        scenario_json: serde_json::Map::new(),
        title: "One field".into(),
        instruction: "Scout F53 and come home.".into(),
        fields: vec!["F53".into()],
        condition: "dry".into(),
        deadline_s: Some(1800.0),
        fuel_limit_mj: None,
        mode: Mode::Checked,
        profile: Profile::Vehicle,
        world: World::Core,
        model: "scripted".into(),
        model_file: None,
        identity: Identity { harness: "0.1.0".into(), commit: None, seed: 7 },
        system: "You plan the mission.".into(),
        tools: vec![ToolDef {
            name: "plan".into(),
            description: "Check a plan.".into(),
            input_schema: json!({"type": "object"}),
        }],
        limits: Limits::default(),
        recovery: Recovery::default(),
        pace: 0.0,
        planner: Some(acres_harness::runfolder::rows::PlannerInfo {
            kind: acres_harness::runfolder::kinds::PlannerKind::Scripted,
            face: None,
            options: serde_json::Map::new(),
            versions: serde_json::Map::new(),
        }),
        record: Default::default(),
        serving: Some(acres_harness::planners::models::serving::Serving {
            server: Some("llama.cpp".into()),
            build: Some("b1-0c1e570".into()),
            models: vec!["m.gguf".into()],
            model: "smollm2".into(),
            meta: Some(serde_json::Map::new()),
            chat_template_sha256: Some("00".repeat(32)),
            caps: Some(serde_json::Map::new()),
            window: Some(2048),
            window_source: Some("/props n_ctx".into()),
            probe: Some(
                [("tools".to_string(), acres_harness::planners::models::conform::Verdict::Pass)].into(),
            ),
        }),
        rows_version: Some(acres_harness::runfolder::rows::ROWS_VERSION),
    };
    let (end, checks) = if success {
        (EndCode::Done, vec![("home", true)])
    } else {
        (EndCode::LimitWakeUps, vec![("home", false)])
    };
    let text_block = |text: &str| Block {
        kind: BlockKind::Text,
        text: Some(text.into()),
        frame: None,
        tool_call_id: None,
    };
    vec![
        Row::Run(run),
        pose(0.0),
        Row::Frame(FrameRow {
            t: 0.0,
            wall: wall(0.0),
            id: "f0001".into(),
            file: "frames/f0001.png".into(),
            view: View::Map,
            region: None,
            view_box: [0.0, 0.0, 640.0, 692.0],
            m_per_px: 1.0,
        }),
        Row::Wake(WakeRow {
            t: 0.0,
            wall: wall(0.0),
            n: 1,
            reason: WakeReason::Start,
            message: "Scout F53.".into(),
            frame: Some("f0001".into()),
        }),
        Row::ModelWait(ModelWaitRow {
            t: 0.0,
            wall: wall(0.01),
            wait_s: 0.01,
            cause: "calls_per_minute".into(),
        }),
        Row::ModelSend(ModelSendRow {
            t: 0.0,
            wall: wall(0.02),
            call: 1,
            wake: 1,
            blocks: vec![
                text_block("Scout F53."),
                Block { kind: BlockKind::Image, text: None, frame: Some("f0001".into()), tool_call_id: None },
            ],
            // The optional keys are written (and checked): both sends of the sample are reminders.
            reminder: true,
        }),
        Row::ModelRetry(ModelRetryRow {
            t: 0.0,
            wall: wall(0.03),
            call: 1,
            try_n: 2,
            wait_s: 2.0,
            cause: "429".into(),
        }),
        Row::ModelReply(ModelReplyRow {
            t: 0.4,
            wall: wall(0.4),
            call: 1,
            latency_s: 0.4,
            stop: Stop::ToolUse,
            text: "I plan.".into(),
            reasoning: Some("F53 first.".into()),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "plan".into(),
                arguments: json!({"visits": ["F53"]}),
            }],
            usage: Usage {
                input_tokens: 1000,
                output_tokens: 400,
                cache_read_tokens: 100,
                cache_write_tokens: 0,
            },
            usd: 0.0123,
            reasoning_hidden: false,
            repairs: Default::default(),
            // Replayed from the model-call cache: the optional key is written (and checked).
            cached: true,
            charged_s: Some(0.5),
            cut: true,
        }),
        Row::Tool(ToolRow {
            t: 0.4,
            wall: wall(0.4),
            wake: 1,
            call_id: "c1".into(),
            name: "plan".into(),
            arguments: json!({"visits": ["F53"], "return_home": true}),
            result: obj(json!({"accepted": true, "planned_time_s": 300.5})),
            error: false,
            // Every optional key once: a code and a schema error on one row (not a real pair).
            code: Some(acres_vehicle::ResultCode::Blocked),
            schema_error: true,
        }),
        Row::PlanCheck(PlanCheckRow {
            t: 0.4,
            wall: wall(0.4),
            visits: vec!["F53".into()],
            return_home: true,
            accepted: true,
            source: PlanSource::PlanChecker,
            reason: None,
            counterexample: None,
            planned_time_s: Some(300.5),
            planned_energy_mj: Some(2.5),
        }),
        pose(0.5),
        Row::ModelSend(ModelSendRow {
            t: 0.5,
            wall: wall(0.5),
            call: 2,
            wake: 1,
            blocks: vec![Block {
                kind: BlockKind::ToolResult,
                text: Some("{\"accepted\":true}".into()),
                frame: None,
                tool_call_id: Some("c1".into()),
            }],
            reminder: true,
        }),
        Row::ModelError(ModelErrorRow {
            t: 0.9,
            wall: wall(0.9),
            call: 2,
            kind: ModelErrorKind::TimeLimit,
            error: "timeout".into(),
            latency_s: 0.4,
            repairs: Default::default(),
            charged_s: Some(0.4),
        }),
        pose(1.0),
        Row::Event(EventRow {
            t: 1.2,
            wall: wall(1.2),
            name: "skill_ended".into(),
            skill: Some("goto".into()),
            code: Some("succeeded".into()),
            cause: None,
            detail: Map::new(),
        }),
        Row::Event(EventRow {
            t: 1.25,
            wall: wall(1.25),
            name: "field_scouted".into(),
            skill: None,
            code: None,
            cause: None,
            detail: obj(json!({"field": "F53"})),
        }),
        Row::Request(RequestRow { t: 1.3, wall: wall(1.3), text: "Come home after this field.".into() }),
        Row::ReturnsOnRoute(ReturnsOnRouteRow {
            t: 1.4,
            wall: wall(1.4),
            cells: vec![[10.5, 20.5]],
            leg: Some("goto".into()),
        }),
        Row::Note(NoteRow { t: 1.4, wall: wall(1.4), n: 1, text: "lane blocked".into() }),
        pose(1.5),
        Row::LinkStats(LinkStatsRow {
            t: 1.5,
            wall: wall(1.5),
            sent: 10,
            received: 9,
            bytes_sent: 200,
            bytes_received: 4000,
            dropped_sweeps: 0,
            ping_rtt_ms: Some(0.3),
            observation_age_s: 0.05,
            lateness_s: Some(0.002),
            lateness_max_s: Some(0.04),
        }),
        Row::LinkLost(LinkLostRow {
            t: 1.6,
            wall: wall(1.6),
            kind: Some(acres_harness::world::LossKind::SocketClosed),
            cause: "the socket closed".into(),
        }),
        Row::End(EndRow {
            t: 1.8,
            wall: wall(1.8),
            end,
            success,
            checks: checks.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            failed: checks.iter().filter(|(_, v)| !v).map(|(k, _)| k.to_string()).collect(),
            digest: "0123abcdef".into(),
            score: score(success, end),
        }),
    ]
}

/// Writes a complete sample run folder `<out>/<scenario>__checked__scripted` and returns it.
fn write_sample(out: &Path, scenario: &str, success: bool) -> PathBuf {
    let name = format!("{scenario}__checked__scripted");
    let mut writer = RunWriter::create_with_secrets(out, &name, Secrets::none()).unwrap();
    for row in sample_rows(scenario, success) {
        if let Row::Frame(frame) = &row {
            assert_eq!(writer.write_frame(&frame.id, &png(640, 692)).unwrap(), frame.file);
        }
        writer.write(&row).unwrap();
    }
    write_recordings(writer.path());
    writer.path().to_path_buf()
}

/// Writes both episode recordings with every topic and no message (validate reads their
/// summaries in a finished run).
fn write_recordings(folder: &Path) {
    use acres_harness::runfolder::recording::{
        EPISODE_FILE, EPISODE_TOPICS, INTERFACE_FILE, INTERFACE_TOPICS,
    };
    for (name, topics) in [(EPISODE_FILE, EPISODE_TOPICS), (INTERFACE_FILE, INTERFACE_TOPICS)] {
        let mut bag = Bag::create(&folder.join(name)).unwrap();
        for topic in topics {
            bag.channel::<acres_msgs::rosgraph_msgs::Clock>(topic, Qos::reliable(10)).unwrap();
        }
        bag.finish().unwrap();
    }
}

/// Rewrites the lines of `run.jsonl` (each ends with a newline).
fn edit_lines(folder: &Path, edit: impl FnOnce(&mut Vec<String>)) {
    let file = folder.join("run.jsonl");
    let mut lines: Vec<String> = fs::read_to_string(&file).unwrap().lines().map(String::from).collect();
    edit(&mut lines);
    fs::write(&file, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
}

/// The problems of an invalid folder as `line: message` texts.
fn problems(folder: &Path) -> Vec<String> {
    let report = validate_folder(folder);
    match &report.status {
        Status::Invalid(problems) => problems.iter().map(|p| p.to_string()).collect(),
        other => panic!("expected invalid, got {other:?}"),
    }
}

fn assert_problem(folder: &Path, needle: &str) {
    let found = problems(folder);
    assert!(found.iter().any(|p| p.contains(needle)), "no problem with {needle:?} in {found:#?}");
}

#[test]
fn complete_folder_validates_ok() {
    let tmp = TempDir::new("complete");
    let folder = write_sample(&tmp.0, "t1_01_one_field", true);
    let report = validate_folder(&folder);
    assert_eq!(report.status, Status::Ok, "{report}");
    assert_eq!(report.rows, 23);
    if let Ok(keep) = std::env::var("ACRES_RUNLOG_SAMPLE_OUT") {
        write_sample(Path::new(&keep), "t1_01_one_field", true);
    }
}

#[test]
fn end_row_removed_is_incomplete() {
    let tmp = TempDir::new("no-end");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| {
        lines.pop();
    });
    let report = validate_folder(&folder);
    assert_eq!(report.status, Status::Incomplete("no end row: the run was cut off after line 22".into()));
}

#[test]
fn last_line_cut_is_invalid() {
    let tmp = TempDir::new("cut");
    let folder = write_sample(&tmp.0, "s", true);
    let file = folder.join("run.jsonl");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, &text[..text.len() - 40]).unwrap();
    let found = problems(&folder);
    assert!(found.iter().any(|p| p.contains("run.jsonl:23: the line is cut off")), "{found:#?}");
    assert!(found.iter().any(|p| p.contains("no end row: the run was cut off after line 23")), "{found:#?}");
}

#[test]
fn deleted_frame_file_is_invalid_naming_it() {
    let tmp = TempDir::new("frame");
    let folder = write_sample(&tmp.0, "s", true);
    fs::remove_file(folder.join("frames/f0001.png")).unwrap();
    assert_problem(&folder, "frames/f0001.png:3: frame f0001: cannot open the file");
}

#[test]
fn a_finished_run_needs_both_readable_recordings() {
    let tmp = TempDir::new("mcap");
    let folder = write_sample(&tmp.0, "s", true);
    fs::remove_file(folder.join("episode.mcap")).unwrap();
    assert_problem(&folder, "episode.mcap: cannot read the recording");
    // A file cut off (a killed writer's) has no summary.
    write_recordings(&folder);
    let bytes = fs::read(folder.join("episode.interface.mcap")).unwrap();
    fs::write(folder.join("episode.interface.mcap"), &bytes[..bytes.len() / 2]).unwrap();
    assert_problem(&folder, "episode.interface.mcap: not a readable MCAP file");
    // A recording without one of its topics.
    write_recordings(&folder);
    let mut bag = Bag::create(&folder.join("episode.interface.mcap")).unwrap();
    bag.channel::<acres_msgs::rosgraph_msgs::Clock>("/acres/clock", Qos::reliable(10)).unwrap();
    bag.finish().unwrap();
    assert_problem(&folder, "episode.interface.mcap: no channel /acres/observation");
    // A run without an end row is incomplete whatever its recordings.
    edit_lines(&folder, |lines| {
        lines.pop();
    });
    assert!(matches!(validate_folder(&folder).status, Status::Incomplete(_)));
}

#[test]
fn frame_checks_size_and_orphans() {
    let tmp = TempDir::new("frame-size");
    let folder = write_sample(&tmp.0, "s", true);
    fs::write(folder.join("frames/f0001.png"), png(64, 69)).unwrap();
    assert_problem(&folder, "frame f0001: 64 x 69 px, expected 640 x 692");
    fs::write(folder.join("frames/f0001.png"), b"not a png").unwrap();
    assert_problem(&folder, "frame f0001: not a PNG");
    fs::write(folder.join("frames/f0001.png"), png(640, 692)).unwrap();
    fs::write(folder.join("frames/f0002.png"), png(640, 692)).unwrap();
    assert_problem(&folder, "frames/f0002.png: a file under frames/ with no frame row");
}

/// A folder of `rows_version` 2: an end row whose score is not the fold of the rows is invalid,
/// each differing key named with both values; a fact removed from a row is caught the same way.
/// A folder of version 1 (the key absent) is not checked so: its rows lack those facts.
#[test]
fn the_end_rows_score_must_be_the_fold_of_the_rows() {
    let tmp = TempDir::new("fold");
    let folder = write_sample(&tmp.0, "s", true);
    let last = |lines: &mut Vec<String>| lines.len() - 1;
    edit_lines(&folder, |lines| {
        let i = last(lines);
        lines[i] = lines[i].replacen("\"charged_s\":0.9", "\"charged_s\":7.5", 1);
    });
    assert_problem(
        &folder,
        "run.jsonl:23: the score is not the fold of the rows: charged_s: rows 0.9, end row 7.5",
    );
    let folder = write_sample(&tmp.0, "t", true);
    edit_lines(&folder, |lines| {
        let i = lines.iter().position(|l| l.contains("\"type\":\"tool\"")).unwrap();
        lines[i] = lines[i].replacen(",\"schema_error\":true", "", 1);
    });
    assert_problem(&folder, "schema_errors: rows 0, end row 1");
    // The same edits in a folder of version 1 pass: its end row's score stands as written.
    edit_lines(&folder, |lines| lines[0] = lines[0].replacen(",\"rows_version\":2", "", 1));
    assert_eq!(validate_folder(&folder).status, Status::Ok);
}

#[test]
fn corrupted_rows_are_invalid_naming_the_line() {
    let cases = [
        (
            1,
            "\"type\":\"pose\"",
            "\"type\":\"posture\"",
            "run.jsonl:2: not a valid row: unknown variant `posture`",
        ),
        (
            1,
            "\"speed_mps\"",
            "\"extra\":1,\"speed_mps\"",
            "run.jsonl:2: not a valid row: unknown field `extra`",
        ),
        (3, "\"n\":1", "\"n\":\"one\"", "run.jsonl:4: not a valid row: invalid type: string \"one\""),
        (20, "{", "{{", "run.jsonl:21: not a valid row: key must be a string"),
    ];
    for (i, from, to, needle) in cases {
        let tmp = TempDir::new("corrupt");
        let folder = write_sample(&tmp.0, "s", true);
        edit_lines(&folder, |lines| lines[i] = lines[i].replacen(from, to, 1));
        assert_problem(&folder, needle);
    }
}

#[test]
fn first_row_must_be_run_and_clocks_never_go_back() {
    let tmp = TempDir::new("order");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| {
        lines.remove(0);
    });
    assert_problem(&folder, "run.jsonl:1: the first row is `pose`, not `run`");
    let tmp = TempDir::new("clock");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| lines[16] = lines[16].replace("\"t\":1.3", "\"t\":0.2"));
    assert_problem(&folder, "run.jsonl:17: t goes back from 1.25 (line 16) to 0.2");
}

#[test]
fn model_send_without_reply_is_invalid() {
    let tmp = TempDir::new("no-reply");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| {
        lines.remove(7);
    });
    assert_problem(
        &folder,
        "model_send call 1 (line 6) has no model_reply or model_error before the next model_send",
    );
    let tmp = TempDir::new("two-replies");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| {
        let reply = lines[7].clone();
        lines.insert(8, reply);
    });
    assert_problem(&folder, "run.jsonl:9: model_reply for call 1 with no open model_send");
}

#[test]
fn pose_gap_duplicate_and_jump_are_invalid() {
    let tmp = TempDir::new("gap");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| {
        lines.remove(10);
    });
    assert_problem(&folder, "pose gap: no pose at t=0.5, the next pose is at t=1");
    let tmp = TempDir::new("dup");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| {
        let p = lines[10].clone();
        lines.insert(11, p);
    });
    assert_problem(&folder, "run.jsonl:12: duplicate pose at t=0.5");
    let tmp = TempDir::new("jump");
    let folder = write_sample(&tmp.0, "s", true);
    edit_lines(&folder, |lines| lines[13] = lines[13].replace("\"x\":2.0", "\"x\":50.0"));
    assert_problem(&folder, "run.jsonl:14: pose jumps 49.0 m from the pose of line 11");
}

#[test]
fn secrets_are_redacted() {
    let tmp = TempDir::new("secret");
    let secret = "sk-test-0123456789";
    let secrets =
        Secrets::from_vars([("ACME_API_KEY", secret), ("PATH", "/usr/bin:/bin"), ("SHORT_TOKEN", "abc")]);
    assert_eq!(secrets.len(), 1);
    let mut writer = RunWriter::create_with_secrets(&tmp.0, "s__text__m", secrets).unwrap();
    let leak = format!("my key is {secret}, see /usr/bin and abc");
    writer.write(&Row::Request(RequestRow { t: 0.0, wall: 1.0, text: leak })).unwrap();
    let mut note = Map::new();
    note.insert(secret.into(), json!([secret]));
    let row = Row::Event(EventRow {
        t: 0.0,
        wall: 1.0,
        name: "e".into(),
        skill: None,
        code: None,
        cause: None,
        detail: note,
    });
    writer.write(&row).unwrap();
    let text = fs::read_to_string(writer.path().join("run.jsonl")).unwrap();
    assert!(!text.contains(secret), "{text}");
    assert_eq!(text.matches("[redacted]").count(), 3, "{text}");
    assert!(text.contains("/usr/bin and abc"));
    for line in text.lines() {
        Row::decode(line).unwrap();
    }
}

#[test]
fn writer_refuses_an_existing_run_and_recreate_replaces_it() {
    let tmp = TempDir::new("exists");
    write_sample(&tmp.0, "s", true);
    let err = RunWriter::create_with_secrets(&tmp.0, "s__checked__scripted", Secrets::none()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    let writer = RunWriter::recreate(&tmp.0, "s__checked__scripted").unwrap();
    assert_eq!(fs::read_to_string(writer.path().join("run.jsonl")).unwrap(), "");
    assert!(!writer.path().join("frames/f0001.png").exists());
}

#[test]
fn validate_tree_finds_each_run_folder() {
    let tmp = TempDir::new("tree");
    write_sample(&tmp.0.join("a"), "s1", true);
    write_sample(&tmp.0.join("b/c"), "s2", false);
    fs::create_dir_all(tmp.0.join("b/empty")).unwrap();
    let reports = validate_tree(&tmp.0);
    let names: Vec<String> =
        reports.iter().map(|(p, _)| p.strip_prefix(&tmp.0).unwrap().display().to_string()).collect();
    assert_eq!(names, ["a/s1__checked__scripted", "b/c/s2__checked__scripted"]);
    assert!(reports.iter().all(|(_, r)| r.is_ok()));
    let empty = validate_tree(&tmp.0.join("b/empty"));
    assert!(matches!(&empty[0].1.status, Status::Invalid(p) if p[0].message.contains("no run folder")));
}

#[test]
fn score_table_has_every_column_and_a_row_per_run() {
    let tmp = TempDir::new("table");
    write_sample(&tmp.0, "t1_01_one_field", true);
    write_sample(&tmp.0, "t1_02_three_fields_deadline", false);
    let cut = write_sample(&tmp.0, "t2_06_truck_on_the_lane", true);
    edit_lines(&cut, |lines| {
        lines.pop();
    });
    let scores = load_scores(&tmp.0);
    assert_eq!(scores.len(), 3);
    assert_eq!(scores[2].score.end, EndCode::Incomplete);
    assert_eq!(scores[2].score.wake_ups, 1);
    assert_eq!(scores[2].score.tokens, 1500);
    let table = format_table(&scores);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 1 + 3 + 1, "{table}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, COLUMNS);
    for column in
        ["profile", "charged_s", "codes", "usd", "reasoning_logged", "pictures_dropped", "model_errors"]
    {
        assert!(header.contains(&column));
    }
    for (line, scenario) in lines[1..4].iter().zip(["t1_01", "t1_02", "t2_06"]) {
        assert!(line.starts_with(scenario), "{line}");
        assert_eq!(line.split_whitespace().count(), COLUMNS.len(), "{line}");
    }
    assert!(lines[1].contains("blocked:1,succeeded:1") && lines[1].contains(" yes "));
    assert!(lines[3].contains(" incomplete "));
    assert_eq!(lines[4], "3 runs, 1 succeeded");
}

#[test]
fn to_json_is_stable() {
    let tmp = TempDir::new("json");
    for (scenario, ok) in [("t2_07", true), ("t1_01", false), ("t1_05", true)] {
        write_sample(&tmp.0, scenario, ok);
    }
    let scores = load_scores(&tmp.0);
    let mut reversed = scores.clone();
    reversed.reverse();
    let a = serde_json::to_string(&to_json(&scores)).unwrap();
    let b = serde_json::to_string(&to_json(&reversed)).unwrap();
    assert_eq!(a, b);
    let value = to_json(&scores);
    let folders: Vec<&str> =
        value.as_array().unwrap().iter().map(|v| v["folder"].as_str().unwrap()).collect();
    assert_eq!(folders, ["t1_01__checked__scripted", "t1_05__checked__scripted", "t2_07__checked__scripted"]);
    let first = value[0].as_object().unwrap();
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        ["folder", "scenario", "planner", "mode", "model", "profile", "score"]
    );
    assert_eq!(value[0]["score"]["codes"], json!({"blocked": 1, "succeeded": 1}));
}

#[test]
fn every_row_round_trips() {
    for row in sample_rows("s", false) {
        assert_eq!(Row::decode(&row.encode()).unwrap(), row);
    }
}

/// The JSON Schema names exactly the keys the rows write, for every row type.
#[test]
fn schema_names_every_field_of_every_row() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/run_v1.schema.json");
    let schema: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let defs = schema["$defs"].as_object().unwrap();
    let resolve = |v: &Value| -> Value {
        let name = v["$ref"].as_str().unwrap().trim_start_matches("#/$defs/");
        defs[name].clone()
    };
    let branches: Vec<Value> = schema["oneOf"].as_array().unwrap().iter().map(resolve).collect();
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<BTreeSet<_>>();
    let mut seen = BTreeSet::new();
    for row in sample_rows("s", true) {
        let value: Value = serde_json::from_str(&row.encode()).unwrap();
        let branch = branches.iter().find(|b| b["properties"]["type"]["const"] == row.type_name()).unwrap();
        assert_eq!(keys(&branch["properties"]), keys(&value), "{}", row.type_name());
        assert_eq!(branch["additionalProperties"], false);
        seen.insert(row.type_name());
        if let Row::End(end) = &row {
            let score: Value = serde_json::to_value(&end.score).unwrap();
            assert_eq!(keys(&defs["score"]["properties"]), keys(&score));
        }
    }
    assert_eq!(seen, Row::TYPES.into_iter().collect());
    assert_eq!(branches.len(), Row::TYPES.len());
}
