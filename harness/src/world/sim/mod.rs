//! ACRES Core and the vehicle's skill server in one deterministic loop: the in-process world of
//! the harness (`--world core`), and the cost-table learner that drives every mission leg.
//!
//! Each control step: the skill server turns the odometry into a drive command (through the
//! shield), the world advances one step under it, and when the LiDAR produced a sweep, the
//! vehicle's scan function reduces it and the server takes the obstacle distance ahead.

use std::sync::Arc;

use acres_core::{Command, World, WorldConfig};
use acres_farm::Map;
use acres_vehicle::scan::{scan, Scan, ScanConfig};
use acres_vehicle::{Observation, Reply, ServerOptions, SkillEvent, SkillRequest, SkillServer};

/// The world and the skill server stepped together.
#[derive(Debug)]
pub struct CoreSim {
    /// ACRES Core.
    pub world: World,
    /// The skill server.
    pub server: SkillServer,
    scan_cfg: ScanConfig,
    last_scan: Option<Scan>,
    scans: u64,
}

/// What one step produced.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SimStep {
    /// A new sweep and scan are ready.
    pub scan: bool,
    /// An object event was applied (objects came or went).
    pub objects_changed: bool,
}

impl CoreSim {
    /// A new simulation.
    pub fn new(world: WorldConfig, server: ServerOptions) -> Self {
        let map: Arc<Map> = world.map.clone();
        let mut scan_cfg = ScanConfig::default();
        let mut server = server;
        if let Some(l) = &world.lidar {
            server.sensor_forward_m = l.mount_forward_m;
            scan_cfg = ScanConfig::for_mount(l.mount_height_m);
        }
        Self {
            world: World::new(world),
            server: SkillServer::new(map, server),
            scan_cfg,
            last_scan: None,
            scans: 0,
        }
    }

    /// The scan parameters in use.
    pub fn scan_config(&self) -> &ScanConfig {
        &self.scan_cfg
    }

    /// The vehicle's observation of itself.
    pub fn observation(&self) -> Observation {
        let o = self.world.odometry();
        Observation { t_s: o.t_s, pose: o.pose, speed_mps: o.speed_mps }
    }

    /// Sends a request to the skill server.
    pub fn request(&mut self, req: &SkillRequest) -> Reply {
        let obs = self.observation();
        self.server.request(req, &obs)
    }

    /// One control step.
    pub fn step(&mut self) -> SimStep {
        let obs = self.observation();
        let twist = self.server.control(&obs);
        let info = self.world.step(Command { speed_mps: twist.speed_mps, yaw_rate_rps: twist.yaw_rate_rps });
        if info.sweep {
            let s = scan(&self.world.sweep().points, &self.scan_cfg);
            self.server.on_scan(s.ahead_m);
            self.last_scan = Some(s);
            self.scans += 1;
        }
        SimStep { scan: info.sweep, objects_changed: info.objects_changed }
    }

    /// The latest scan.
    pub fn last_scan(&self) -> Option<&Scan> {
        self.last_scan.as_ref()
    }

    /// Scans made so far.
    pub fn scans(&self) -> u64 {
        self.scans
    }

    /// Takes the skill server's events.
    pub fn drain_events(&mut self) -> Vec<SkillEvent> {
        self.server.drain_events()
    }
}
