//! Objects of the world: trucks, persons, tractors and cars with real footprints and heights,
//! and the three forms of place that put them on the map.

use crate::map::HOME;
use serde::{Deserialize, Serialize};

use crate::geom::{Obb, Pose, Vec2};
use crate::route::{leg_path, LaneGraph, Leg, LegKind};
use crate::Map;

/// The kind of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObjectKind {
    /// A lorry, 8.0 × 2.5 m, 3.5 m high.
    Truck,
    /// A person, 0.6 × 0.6 m, 1.8 m high.
    Person,
    /// A tractor, 4.5 × 2.4 m, 3.0 m high.
    Tractor,
    /// A car, 4.5 × 1.8 m, 1.5 m high.
    Car,
}

impl ObjectKind {
    /// All kinds, in a fixed order.
    pub const ALL: [ObjectKind; 4] =
        [ObjectKind::Truck, ObjectKind::Person, ObjectKind::Tractor, ObjectKind::Car];

    /// `(length, width, height)` in metres.
    pub fn dims_m(self) -> (f64, f64, f64) {
        match self {
            ObjectKind::Truck => (8.0, 2.5, 3.5),
            ObjectKind::Person => (0.6, 0.6, 1.8),
            ObjectKind::Tractor => (4.5, 2.4, 3.0),
            ObjectKind::Car => (4.5, 1.8, 1.5),
        }
    }
    /// The name as written in scenarios.
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Truck => "truck",
            ObjectKind::Person => "person",
            ObjectKind::Tractor => "tractor",
            ObjectKind::Car => "car",
        }
    }
}

/// A solid box the LiDAR can hit and the vehicle can touch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// The object identifier.
    pub id: u32,
    /// Footprint.
    pub obb: Obb,
    /// Height above ground, m (the box stands on the ground).
    pub height_m: f64,
}

/// An object in the world.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Identifier from the scenario.
    pub id: u32,
    /// Kind.
    pub kind: ObjectKind,
    /// Centre and heading.
    pub pose: Pose,
}

impl Object {
    /// The object's solid box.
    pub fn body(&self) -> Body {
        let (l, w, h) = self.kind.dims_m();
        Body {
            id: self.id,
            obb: Obb {
                center: self.pose.pos(),
                yaw: self.pose.yaw,
                half_length_m: l / 2.0,
                half_width_m: w / 2.0,
            },
            height_m: h,
        }
    }
}

/// The leg named in a `route_to` place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlaceLeg {
    /// H to the field's entry.
    Goto,
    /// The field's scout path.
    Scout,
    /// The field's entry to H.
    Return,
}

/// Where an object stands: one of the three forms of the scenario format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Place {
    /// `{"x", "y", "yaw"}`.
    Xy {
        /// East, m.
        x: f64,
        /// North, m.
        y: f64,
        /// Heading, rad (default 0).
        #[serde(default)]
        yaw: f64,
    },
    /// A point `at_m` metres along a leg of the mission of a field from H.
    RouteTo {
        /// The field.
        route_to: String,
        /// Which leg.
        leg: PlaceLeg,
        /// Arc length along the leg, m.
        at_m: f64,
        /// Stand across the path instead of along it.
        #[serde(default)]
        across: bool,
    },
    /// A point at a fraction of the field's Scout loop, from the loop's start.
    LoopOf {
        /// The field.
        loop_of: String,
        /// Fraction of the loop length, 0..1.
        at_fraction: f64,
        /// Stand across the loop instead of along it.
        #[serde(default)]
        across: bool,
    },
}

/// A place that does not exist on the map.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlaceError {
    /// The field is not on the map.
    #[error("unknown field \"{0}\"")]
    UnknownField(String),
    /// The distance is beyond the leg.
    #[error("at_m {at_m} is beyond the {leg} leg of {field} ({length_m:.1} m long)")]
    BeyondLeg {
        /// Field.
        field: String,
        /// Leg name.
        leg: &'static str,
        /// Asked distance.
        at_m: f64,
        /// Leg length.
        length_m: f64,
    },
    /// The fraction is outside 0..=1.
    #[error("at_fraction {0} is not between 0 and 1")]
    BadFraction(f64),
    /// A coordinate is not finite.
    #[error("the place has a coordinate that is not a finite number")]
    NotFinite,
}

impl Place {
    /// Resolves the place to a pose on the map.
    pub fn resolve(&self, map: &Map, graph: &LaneGraph) -> Result<Pose, PlaceError> {
        let across_yaw =
            |yaw: f64, across: bool| if across { yaw + std::f64::consts::FRAC_PI_2 } else { yaw };
        match self {
            Place::Xy { x, y, yaw } => {
                if !(x.is_finite() && y.is_finite() && yaw.is_finite()) {
                    return Err(PlaceError::NotFinite);
                }
                Ok(Pose { x: *x, y: *y, yaw: *yaw })
            }
            Place::RouteTo { route_to, leg, at_m, across } => {
                if !map.fields.contains_key(route_to) {
                    return Err(PlaceError::UnknownField(route_to.clone()));
                }
                let (l, name) = match leg {
                    PlaceLeg::Goto => (Leg::goto(HOME, route_to), "goto"),
                    PlaceLeg::Scout => {
                        (Leg { kind: LegKind::Scout, from: route_to.clone(), to: route_to.clone() }, "scout")
                    }
                    PlaceLeg::Return => (Leg::ret(route_to), "return"),
                };
                let path =
                    leg_path(map, graph, &l).ok_or_else(|| PlaceError::UnknownField(route_to.clone()))?;
                if !(at_m.is_finite() && *at_m >= 0.0 && *at_m <= path.length_m()) {
                    return Err(PlaceError::BeyondLeg {
                        field: route_to.clone(),
                        leg: name,
                        at_m: *at_m,
                        length_m: path.length_m(),
                    });
                }
                let p: Vec2 = path.point_at(*at_m);
                Ok(Pose { x: p.x, y: p.y, yaw: across_yaw(path.yaw_at(*at_m), *across) })
            }
            Place::LoopOf { loop_of, at_fraction, across } => {
                let f = map.fields.get(loop_of).ok_or_else(|| PlaceError::UnknownField(loop_of.clone()))?;
                if !(0.0..=1.0).contains(at_fraction) {
                    return Err(PlaceError::BadFraction(*at_fraction));
                }
                let lp = f.loop_polyline();
                let s = lp.length_m() * at_fraction;
                let p = lp.point_at(s);
                Ok(Pose { x: p.x, y: p.y, yaw: across_yaw(lp.yaw_at(s), *across) })
            }
        }
    }
}
