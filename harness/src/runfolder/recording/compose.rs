//! The writer thread's side of the recorder: both files, their channels, and the making of the
//! messages from what the loop handed over ([`Item`]). Everything here runs on the writer
//! thread, in the order of the items, so the files are the same as if the loop had written them.

use std::collections::BTreeMap;

use acres_core::lidar::LidarConfig;
use acres_msgs::acres_interfaces::{ModelCall, Observation, PlanVerdict, PlannerWake, SkillEvent, ToolCall};
use acres_msgs::builtin_interfaces::Time;
use acres_msgs::nav_msgs::Odometry;
use acres_msgs::rosgraph_msgs::Clock;
use acres_msgs::sensor_msgs::{LaserScan, PointCloud2};
use acres_msgs::tf2_msgs::TFMessage;
use acres_msgs::visualization_msgs::MarkerArray;
use acres_msgs::Message;

use super::bag::{time_ns, Bag, BagError, Qos};
use super::{convert, markers, Item, Shot};
use crate::runfolder::rows::{ModelSendRow, Row};
use crate::world::VehicleView;

/// The channels of the episode file.
#[derive(Debug, Clone, Copy, Default)]
struct EpisodeChannels {
    clock: u16,
    tf: u16,
    odom: u16,
    points: u16,
    scan: u16,
    objects: u16,
    observation: u16,
    events: u16,
    wake: u16,
    model_call: u16,
    tool_call: u16,
    plan_verdict: u16,
}

/// The channels of the interface file.
#[derive(Debug, Clone, Copy)]
struct InterfaceChannels {
    clock: u16,
    observation: u16,
    events: u16,
}

/// Both files of a run, with their channels.
#[derive(Debug)]
pub struct Files {
    /// `None` when the run records the interface file only.
    episode: Option<Bag>,
    interface: Bag,
    ep: EpisodeChannels,
    itf: InterfaceChannels,
    lidar_range_m: f32,
    sweep_period_s: f64,
    /// The `model_send` rows of calls not answered yet.
    sends: BTreeMap<u64, ModelSendRow>,
    /// The last cloud's data, refilled for the next one.
    cloud_data: Vec<u8>,
    /// The buffer a message written to both files is encoded into.
    scratch: Vec<u8>,
    /// The skill server's status of the last shot.
    status: acres_vehicle::Status,
    /// The messages of each control step, changed in place from step to step (no new text).
    step_msgs: StepMessages,
}

/// The messages written each control step, kept so that each step only sets their numbers.
#[derive(Debug)]
struct StepMessages {
    tf: TFMessage,
    odom: Odometry,
    obs: Observation,
    scan: LaserScan,
}

const CLOCK_QOS: Qos = Qos { depth: 1, reliable: false, transient_local: false };

impl Files {
    /// Adds the channels to both files and writes the latched start: the static transforms
    /// and the map (`map`: [`markers::map_markers`]).
    pub fn create(
        mut episode: Option<Bag>,
        mut interface: Bag,
        map: &MarkerArray,
        lidar: LidarConfig,
    ) -> Result<Files, BagError> {
        let (mut tf_static, mut map_ch, mut ep) = (0, 0, EpisodeChannels::default());
        if let Some(episode) = episode.as_mut() {
            tf_static = episode.channel::<TFMessage>("/tf_static", Qos::LATCHED)?;
            map_ch = episode.channel::<MarkerArray>("/acres/map", Qos::LATCHED)?;
            ep = EpisodeChannels {
                clock: episode.channel::<Clock>("/clock", CLOCK_QOS)?,
                tf: episode.channel::<TFMessage>("/tf", Qos::reliable(100))?,
                odom: episode.channel::<Odometry>("/odom", Qos::reliable(10))?,
                points: episode.channel::<PointCloud2>("/lidar/points", Qos::SENSOR)?,
                scan: episode.channel::<LaserScan>("/scan", Qos::SENSOR)?,
                objects: episode.channel::<MarkerArray>("/acres/objects", Qos::reliable(10))?,
                observation: episode.channel::<Observation>("/acres/observation", Qos::reliable(10))?,
                events: episode.channel::<SkillEvent>("/acres/events", Qos::reliable(100))?,
                wake: episode.channel::<PlannerWake>("/acres/planner/wake", Qos::reliable(100))?,
                model_call: episode.channel::<ModelCall>("/acres/planner/model_call", Qos::reliable(100))?,
                tool_call: episode.channel::<ToolCall>("/acres/planner/tool_call", Qos::reliable(100))?,
                plan_verdict: episode
                    .channel::<PlanVerdict>("/acres/planner/plan_verdict", Qos::reliable(100))?,
            };
        }
        let itf = InterfaceChannels {
            clock: interface.channel::<Clock>("/acres/clock", CLOCK_QOS)?,
            observation: interface.channel::<Observation>("/acres/observation", Qos::reliable(10))?,
            events: interface.channel::<SkillEvent>("/acres/events", Qos::reliable(100))?,
        };
        if let Some(episode) = episode.as_mut() {
            episode.write(tf_static, 0, &convert::tf_static(lidar.mount_forward_m, lidar.mount_height_m))?;
            episode.write(map_ch, 0, map)?;
        }
        Ok(Files {
            episode,
            interface,
            ep,
            itf,
            lidar_range_m: lidar.max_range_m as f32,
            sweep_period_s: if lidar.rate_hz > 0.0 { 1.0 / lidar.rate_hz } else { 0.0 },
            sends: BTreeMap::new(),
            cloud_data: Vec::new(),
            scratch: Vec::new(),
            status: acres_vehicle::Status::default(),
            step_msgs: StepMessages {
                tf: convert::tf(&VehicleView::default()),
                odom: convert::odometry(&VehicleView::default()),
                obs: Observation::default(),
                scan: convert::laser_scan(0.0, Vec::new(), 0.0, 0.0),
            },
        })
    }

    /// Writes the messages of one item. The item is only borrowed (the sweep taken from it and
    /// let go once its cloud is made, the scan's ranges lent to the message and given back) so
    /// that the writer thread can hand its scan buffers back to the loop ([`super::sink`]).
    pub fn write(&mut self, item: &mut Item) -> Result<(), BagError> {
        match item {
            Item::Step(shot) => self.step(shot),
            Item::Event(e) => {
                let t_ns = time_ns(e.t_s);
                let (ep, itf) = (self.ep.events, self.itf.events);
                self.both(ep, itf, t_ns, &convert::skill_event(e))
            }
            Item::Row(row) => self.row(row),
        }
    }

    /// Writes one message to both files (encoded once).
    fn both<M: Message>(&mut self, ep: u16, itf: u16, t_ns: u64, msg: &M) -> Result<(), BagError> {
        msg.encode_into(&mut self.scratch);
        self.scratch_to_both(ep, itf, t_ns)
    }

    /// Writes the message encoded in the scratch buffer to both files.
    fn scratch_to_both(&mut self, ep: u16, itf: u16, t_ns: u64) -> Result<(), BagError> {
        if let Some(e) = self.episode.as_mut() {
            e.write_bytes(ep, t_ns, &self.scratch)?;
        }
        self.interface.write_bytes(itf, t_ns, &self.scratch)
    }

    /// The messages of a control step, in the order a reader of the file sees them.
    fn step(&mut self, shot: &mut Shot) -> Result<(), BagError> {
        let v = shot.vehicle;
        let t_ns = time_ns(v.t_s);
        let clock = Clock { clock: Time::from_secs_f64(v.t_s) };
        self.both(self.ep.clock, self.itf.clock, t_ns, &clock)?;
        let m = &mut self.step_msgs;
        convert::set_tf(&mut m.tf, &v);
        ep_write(&mut self.episode, self.ep.tf, t_ns, &m.tf)?;
        convert::set_odometry(&mut m.odom, &v);
        ep_write(&mut self.episode, self.ep.odom, t_ns, &m.odom)?;
        shot.status.apply(&mut self.status);
        convert::set_observation(&mut m.obs, &v, &self.status, shot.ahead_m, shot.energy_estimate_mj);
        m.obs.encode_into(&mut self.scratch);
        self.scratch_to_both(self.ep.observation, self.itf.observation, t_ns)?;
        if let Some(ranges) = &mut shot.scan_ranges_m {
            // The shot's ranges lent to the message and given back.
            let scan = &mut self.step_msgs.scan;
            std::mem::swap(&mut scan.ranges, ranges);
            convert::set_laser_scan(scan, v.t_s, self.sweep_period_s, self.lidar_range_m);
            let written = ep_write(&mut self.episode, self.ep.scan, t_ns, &*scan);
            std::mem::swap(&mut scan.ranges, ranges);
            written?;
        }
        if let Some(sweep) = shot.sweep.take() {
            let mut data = std::mem::take(&mut self.cloud_data);
            convert::point_bytes_into(&sweep.points, &mut data);
            // Let go at once: the world refills a sweep in place when no one else holds it.
            drop(sweep);
            let cloud = convert::point_cloud(v.t_s, data);
            let written = ep_write(&mut self.episode, self.ep.points, t_ns, &cloud);
            self.cloud_data = cloud.data;
            written?;
        }
        if let Some(objects) = &shot.objects {
            ep_write(&mut self.episode, self.ep.objects, t_ns, &markers::object_markers(v.t_s, objects))?;
        }
        Ok(())
    }

    /// The planner's timeline: wake-ups, model calls (when the reply or the error comes, with
    /// the request's time), tool calls and plan verdicts.
    fn row(&mut self, row: &Row) -> Result<(), BagError> {
        let t_ns = time_ns(row.t());
        match row {
            Row::Wake(w) => ep_write(&mut self.episode, self.ep.wake, t_ns, &convert::planner_wake(w)),
            Row::ModelSend(s) => {
                self.sends.insert(s.call, s.clone());
                Ok(())
            }
            Row::ModelReply(r) => {
                let msg = convert::model_call_reply(self.sends.remove(&r.call).as_ref(), r);
                ep_write(&mut self.episode, self.ep.model_call, t_ns, &msg)
            }
            Row::ModelError(e) => {
                let msg = convert::model_call_error(self.sends.remove(&e.call).as_ref(), e);
                ep_write(&mut self.episode, self.ep.model_call, t_ns, &msg)
            }
            Row::Tool(t) => ep_write(&mut self.episode, self.ep.tool_call, t_ns, &convert::tool_call(t)),
            Row::PlanCheck(p) => {
                ep_write(&mut self.episode, self.ep.plan_verdict, t_ns, &convert::plan_verdict(p))
            }
            _ => Ok(()),
        }
    }

    /// Closes the open chunks of both files and hands them to the operating system.
    pub fn flush(&mut self) -> Result<(), BagError> {
        if let Some(e) = self.episode.as_mut() {
            e.flush()?;
        }
        self.interface.flush()
    }

    /// Writes both summaries and renames both files to their final names.
    pub fn finish(self) -> Result<(), BagError> {
        if let Some(e) = self.episode {
            e.finish()?;
        }
        self.interface.finish()?;
        Ok(())
    }
}

/// Writes a message to the episode file, if the run records it.
fn ep_write<M: Message>(episode: &mut Option<Bag>, ch: u16, t_ns: u64, msg: &M) -> Result<(), BagError> {
    match episode {
        Some(e) => e.write(ch, t_ns, msg),
        None => Ok(()),
    }
}
