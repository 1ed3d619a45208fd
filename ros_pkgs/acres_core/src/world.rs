//! The world: the vehicle, the objects, the scenario's object events, contact, the LiDAR, and a
//! running digest, advanced in fixed control steps.
//!
//! **Invariant:** the world is a pure function of its configuration, its events and the sequence
//! of commands: fixed step, seeded randomness, objects in a `BTreeMap` (sorted iteration).

use std::collections::BTreeMap;
use std::sync::Arc;

use acres_farm::geom::Pose;
use acres_farm::{Condition, Map};

use crate::digest::{Digest, Rng};
use crate::lidar::{Lidar, LidarConfig, Sweep};
use crate::objects::{Body, Object};
use crate::sensing::{Sensing, SensingNoise};
use crate::vehicle::{ground_physics, Command, Ground, VehicleParams, VehicleState};

/// When an object event happens.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectWhen {
    /// At this mission time, s.
    At(f64),
    /// This long after the LiDAR first returned points from the object `id`.
    AfterSeen {
        /// The object.
        id: u32,
        /// Delay, s.
        delay_s: f64,
    },
}

/// What an object event does.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectAction {
    /// Puts an object into the world.
    Add(Object),
    /// Takes the object with this id out.
    Remove(u32),
}

/// A scheduled object event.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectEvent {
    /// When.
    pub when: ObjectWhen,
    /// What.
    pub action: ObjectAction,
}

/// The configuration of a world.
#[derive(Debug, Clone)]
pub struct WorldConfig {
    /// The map.
    pub map: Arc<Map>,
    /// The ground condition.
    pub condition: Condition,
    /// The start pose.
    pub start: Pose,
    /// Seed of the world's randomness.
    pub seed: u64,
    /// Control step, s.
    pub dt_s: f64,
    /// The LiDAR, or `None` to run without one.
    pub lidar: Option<LidarConfig>,
    /// The vehicle.
    pub vehicle: VehicleParams,
    /// The imperfections of the LiDAR and the odometry (default none: exact sensing).
    pub sensing: Sensing,
}

impl WorldConfig {
    /// The defaults: 20 Hz control, the default LiDAR, seed 1, exact sensing.
    pub fn new(map: Arc<Map>, condition: Condition, start: Pose) -> Self {
        Self {
            map,
            condition,
            start,
            seed: 1,
            dt_s: 0.05,
            lidar: Some(LidarConfig::default()),
            vehicle: VehicleParams::default(),
            sensing: Sensing::default(),
        }
    }
}

/// What the vehicle's own sensors report of its motion (the `/odom` of ACRES Core).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Odometry {
    /// Mission time, s.
    pub t_s: f64,
    /// Pose.
    pub pose: Pose,
    /// Speed over ground, m/s.
    pub speed_mps: f64,
    /// Yaw rate, rad/s.
    pub yaw_rate_rps: f64,
}

/// What happened in one step.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepInfo {
    /// A new sweep is ready ([`World::sweep`]).
    pub sweep: bool,
    /// An object event was applied.
    pub objects_changed: bool,
}

/// The simulated world.
#[derive(Debug)]
pub struct World {
    cfg: WorldConfig,
    step: u64,
    vehicle: VehicleState,
    energy_j: f64,
    objects: BTreeMap<u32, Object>,
    pending: Vec<ObjectEvent>,
    first_seen: BTreeMap<u32, f64>,
    lidar: Option<Lidar>,
    /// Shared with readers that keep a sweep ([`World::sweep_shared`]); refilled in place when
    /// none does.
    sweep: Arc<Sweep>,
    steps_per_sweep: u64,
    contact: bool,
    contact_steps: u64,
    contact_object: Option<u32>,
    digest: Digest,
    rng: Rng,
    bodies: Vec<Body>,
    /// The sensing noise, when the configuration has any.
    noise: Option<SensingNoise>,
    /// The odometry's pose (the true pose when sensing is exact).
    odom_pose: Pose,
}

impl World {
    /// A new world at mission time 0.
    pub fn new(cfg: WorldConfig) -> World {
        let vehicle = VehicleState { pose: cfg.start, ..Default::default() };
        let lidar = cfg.lidar.clone().map(Lidar::new);
        let steps_per_sweep =
            cfg.lidar.as_ref().map_or(u64::MAX, |l| ((1.0 / l.rate_hz) / cfg.dt_s).round().max(1.0) as u64);
        let rng = Rng::new(cfg.seed);
        let mut digest = Digest::default();
        let noise = (!cfg.sensing.is_off()).then(|| {
            // The keys are part of the world's history: the same seed with other keys differs
            // even where the noise happens to change nothing. Exact sensing folds nothing.
            for (_, v) in cfg.sensing.values() {
                digest.f64(v);
            }
            SensingNoise::new(cfg.sensing.clone(), cfg.seed)
        });
        let odom_pose = cfg.start;
        World {
            cfg,
            step: 0,
            vehicle,
            energy_j: 0.0,
            objects: BTreeMap::new(),
            pending: Vec::new(),
            first_seen: BTreeMap::new(),
            lidar,
            sweep: Arc::default(),
            steps_per_sweep,
            contact: false,
            contact_steps: 0,
            contact_object: None,
            digest,
            rng,
            bodies: Vec::new(),
            noise,
            odom_pose,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &WorldConfig {
        &self.cfg
    }

    /// Mission time, s (an exact multiple of the step).
    pub fn t_s(&self) -> f64 {
        // Divide by the step rate when it is whole (20 Hz): 121 steps are 6.05 s, not 6.0500000001.
        let hz = 1.0 / self.cfg.dt_s;
        if (hz - hz.round()).abs() < 1e-9 {
            self.step as f64 / hz.round()
        } else {
            self.step as f64 * self.cfg.dt_s
        }
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.step
    }

    /// Schedules object events (applied in the step at or after their time, in the given order).
    pub fn schedule(&mut self, events: impl IntoIterator<Item = ObjectEvent>) {
        self.pending.extend(events);
        self.apply_events();
    }

    /// Advances one control step under `cmd`.
    pub fn step(&mut self, cmd: Command) -> StepInfo {
        let ground = if self.cfg.map.field_at(self.vehicle.pose.pos()).is_some() {
            Ground::Field
        } else {
            Ground::Lane
        };
        let phys = ground_physics(self.cfg.condition, ground);
        let noise = self.rng.symmetric();
        self.energy_j += self.vehicle.step(&self.cfg.vehicle, phys, cmd, self.cfg.dt_s, noise);
        self.step += 1;
        self.odom_pose = match self.noise.as_mut() {
            Some(n) if n.config().pose_on() => n.pose(self.vehicle.pose),
            _ => self.vehicle.pose,
        };
        let objects_changed = self.apply_events();
        // Contact: footprint intersection with any object (simulator truth).
        let fp = self.vehicle.footprint(&self.cfg.vehicle);
        let hit = self.objects.values().find(|o| o.body().obb.intersects(&fp)).map(|o| o.id);
        self.contact = hit.is_some();
        if let Some(id) = hit {
            self.contact_steps += 1;
            self.contact_object = Some(id);
        }
        let mut info = StepInfo { sweep: false, objects_changed };
        if self.step.is_multiple_of(self.steps_per_sweep) {
            if let Some(lidar) = &self.lidar {
                let t = self.t_s();
                if Arc::get_mut(&mut self.sweep).is_none() {
                    // A reader keeps the last sweep: this one gets buffers of its own.
                    let points = Vec::with_capacity(self.sweep.points.len());
                    self.sweep = Arc::new(Sweep { points, ..Sweep::default() });
                }
                // Unique now: made mutable in place, never copied.
                lidar.sweep(self.vehicle.pose, &self.bodies, t, Arc::make_mut(&mut self.sweep));
                if let (Some(n), Some(cfg)) =
                    (self.noise.as_mut().filter(|n| n.config().lidar_on()), self.cfg.lidar.as_ref())
                {
                    n.sweep(cfg, Arc::make_mut(&mut self.sweep));
                }
                for id in &self.sweep.seen {
                    self.first_seen.entry(*id).or_insert(t);
                }
                info.sweep = true;
            }
        }
        let v = &self.vehicle;
        for x in [v.pose.x, v.pose.y, v.pose.yaw, v.wheel_speed_mps, v.steer_rad, self.energy_j] {
            self.digest.f64(x);
        }
        self.digest.u64(self.contact_steps);
        info
    }

    fn apply_events(&mut self) -> bool {
        let t = self.t_s() + 1e-9;
        let mut changed = false;
        let mut i = 0;
        while i < self.pending.len() {
            let due = match &self.pending[i].when {
                ObjectWhen::At(at) => *at <= t,
                ObjectWhen::AfterSeen { id, delay_s } => {
                    self.first_seen.get(id).is_some_and(|s| s + delay_s <= t)
                }
            };
            if due {
                let ev = self.pending.remove(i);
                match ev.action {
                    ObjectAction::Add(o) => {
                        self.digest.u64(u64::from(o.id) | 1 << 40);
                        self.digest.bytes(o.kind.as_str().as_bytes());
                        for v in [o.pose.x, o.pose.y, o.pose.yaw] {
                            self.digest.f64(v);
                        }
                        self.objects.insert(o.id, o);
                    }
                    ObjectAction::Remove(id) => {
                        self.digest.u64(u64::from(id) | 2 << 40);
                        self.objects.remove(&id);
                    }
                }
                changed = true;
            } else {
                i += 1;
            }
        }
        if changed {
            self.bodies = self.objects.values().map(Object::body).collect();
        }
        changed
    }

    /// The vehicle's odometry: its pose with the sensing's pose noise, when there is any
    /// (the true pose is [`World::vehicle`]'s).
    pub fn odometry(&self) -> Odometry {
        Odometry {
            t_s: self.t_s(),
            pose: self.odom_pose,
            speed_mps: self.vehicle.speed_mps,
            yaw_rate_rps: self.vehicle.yaw_rate_rps,
        }
    }

    /// The full vehicle state (truth).
    pub fn vehicle(&self) -> &VehicleState {
        &self.vehicle
    }

    /// The latest sweep (empty before the first).
    pub fn sweep(&self) -> &Sweep {
        &self.sweep
    }

    /// The latest sweep, shared: a reader may keep it while the world goes on (the next sweep
    /// then gets buffers of its own instead of refilling this one's).
    pub fn sweep_shared(&self) -> &Arc<Sweep> {
        &self.sweep
    }

    /// The LiDAR's configuration, if the world has one.
    pub fn lidar_config(&self) -> Option<&LidarConfig> {
        self.cfg.lidar.as_ref()
    }

    /// Objects in the world now (truth).
    pub fn objects(&self) -> &BTreeMap<u32, Object> {
        &self.objects
    }

    /// When the LiDAR first returned points from an object (truth).
    pub fn first_seen(&self, id: u32) -> Option<f64> {
        self.first_seen.get(&id).copied()
    }

    /// Object events still waiting.
    pub fn pending_events(&self) -> usize {
        self.pending.len()
    }

    /// Object events still waiting that can still happen: a time event, or an `after_seen`
    /// event whose object has been seen.
    pub fn pending_events_due(&self) -> usize {
        self.pending
            .iter()
            .filter(|e| match &e.when {
                ObjectWhen::At(_) => true,
                ObjectWhen::AfterSeen { id, .. } => self.first_seen.contains_key(id),
            })
            .count()
    }

    /// When each object was first seen (truth).
    pub fn seen_times(&self) -> &BTreeMap<u32, f64> {
        &self.first_seen
    }

    /// Fuel energy used, MJ (truth).
    pub fn energy_mj(&self) -> f64 {
        self.energy_j / 1e6
    }

    /// Whether the footprint touches an object in this step (truth).
    pub fn contact(&self) -> bool {
        self.contact
    }

    /// Steps with contact so far (truth).
    pub fn contact_steps(&self) -> u64 {
        self.contact_steps
    }

    /// The last object touched (truth).
    pub fn contact_object(&self) -> Option<u32> {
        self.contact_object
    }

    /// The digest of the whole world history so far.
    pub fn digest(&self) -> String {
        self.digest.hex()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects::ObjectKind;
    use std::path::Path;

    fn map() -> Arc<Map> {
        Arc::new(
            Map::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/maps/default.json"))
                .unwrap(),
        )
    }

    fn drive(seed: u64) -> (String, f64) {
        let mut cfg = WorldConfig::new(map(), Condition::Wet, Pose::default());
        cfg.seed = seed;
        let mut w = World::new(cfg);
        for _ in 0..400 {
            w.step(Command { speed_mps: 3.0, yaw_rate_rps: 0.0 });
        }
        (w.digest(), w.vehicle().pose.x)
    }

    #[test]
    fn same_inputs_same_digest() {
        assert_eq!(drive(7), drive(7));
        assert_ne!(drive(7).0, drive(8).0);
    }

    #[test]
    fn sensing_noise_reaches_the_odometry_and_the_sweep_not_the_truth() {
        let run = |sensing: Sensing, seed: u64| {
            let mut cfg = WorldConfig::new(map(), Condition::Dry, Pose::default());
            cfg.seed = seed;
            cfg.sensing = sensing;
            let mut w = World::new(cfg);
            let mut odom_off = 0.0f64;
            let mut points = 0;
            for _ in 0..200 {
                if w.step(Command { speed_mps: 2.0, yaw_rate_rps: 0.0 }).sweep {
                    points += w.sweep().points.len();
                }
                odom_off = odom_off.max(w.odometry().pose.pos().dist(w.vehicle().pose.pos()));
            }
            (w.digest(), odom_off, points, w.odometry().pose.x.to_bits())
        };
        let exact = run(Sensing::default(), 3);
        assert_eq!(exact.1, 0.0, "exact sensing: the odometry is the truth");
        let noisy = Sensing { pose_noise_m: 0.1, dropout: 0.2, ..Sensing::default() };
        let a = run(noisy.clone(), 3);
        assert_eq!(a, run(noisy.clone(), 3), "a seed gives the same world");
        assert!(a.1 > 0.05, "the odometry is off the truth by up to {} m", a.1);
        assert!((a.2 as f64) < exact.2 as f64 * 0.85, "dropout: {} of {} points", a.2, exact.2);
        assert_ne!(a.0, exact.0, "the keys are in the digest");
        // Another seed, other noise (the truth, driven open-loop here, is the same).
        let b = run(noisy, 4);
        assert_ne!(a.3, b.3);
        assert_eq!(a.0, b.0);
    }

    #[test]
    fn contact_with_an_object_ahead() {
        let mut w = World::new(WorldConfig::new(map(), Condition::Dry, Pose::default()));
        w.schedule([ObjectEvent {
            when: ObjectWhen::At(1.0),
            action: ObjectAction::Add(Object {
                id: 3,
                kind: ObjectKind::Car,
                pose: Pose { x: 20.0, y: 0.0, yaw: 1.57 },
            }),
        }]);
        let mut first = None;
        for _ in 0..400 {
            w.step(Command { speed_mps: 3.0, yaw_rate_rps: 0.0 });
            if w.contact() && first.is_none() {
                first = Some(w.vehicle().pose.x);
            }
        }
        // Front bumper (x + 2.5) meets the car's near side (20 - 0.9).
        let x = first.expect("the vehicle touches the car");
        assert!((x + 2.5 - 19.1).abs() < 0.2, "contact at x = {x}");
        assert!(w.contact_steps() > 0);
        assert_eq!(w.contact_object(), Some(3));
    }

    #[test]
    fn after_seen_removes_an_object() {
        let mut w = World::new(WorldConfig::new(map(), Condition::Dry, Pose::default()));
        let truck = Object { id: 1, kind: ObjectKind::Truck, pose: Pose { x: 25.0, y: 0.0, yaw: 1.57 } };
        w.schedule([
            ObjectEvent { when: ObjectWhen::At(0.0), action: ObjectAction::Add(truck) },
            ObjectEvent {
                when: ObjectWhen::AfterSeen { id: 1, delay_s: 2.0 },
                action: ObjectAction::Remove(1),
            },
        ]);
        assert_eq!(w.objects().len(), 1);
        for _ in 0..100 {
            w.step(Command::STOP);
        }
        let seen = w.first_seen(1).expect("the LiDAR sees the truck");
        assert!(seen <= 0.11, "seen at {seen}");
        assert!(w.objects().is_empty());
    }
}
