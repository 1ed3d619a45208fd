//! The trajectory checker: a skill whose route would leave the corridor is refused.

use acres_farm::geom::Polyline;
use acres_farm::Map;

/// Checks a route against the map's corridor (sampled every metre). `Err` carries the cause.
pub fn check_route(map: &Map, route: &Polyline) -> Result<(), String> {
    match map.first_exit(route) {
        None => Ok(()),
        Some(p) => Err(format!("the route leaves the corridor at ({:.1}, {:.1})", p.x, p.y)),
    }
}
