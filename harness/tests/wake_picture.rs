//! What the planner sees at a wake-up (issue 21, item 3): the shipped truck scenario's
//! `returns_on_route` wake-up, run by the binary, gets a picture whose inset is centred on the
//! cells on the route, where the returns on the route cover at least 40 pixels, and whose map
//! (the whole map plus the inset) fills at least 85 % of the frame. Measured on the PNG file of
//! the run folder and its `tEXt` metadata.

mod support;
use support::{root, TempDir};

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The `tEXt` chunks and the RGB pixels of a frame file.
struct Png {
    texts: Vec<(String, String)>,
    width: usize,
    rgb: Vec<u8>,
}

impl Png {
    fn read(path: &Path) -> Png {
        let bytes = std::fs::read(path).unwrap();
        let mut reader = png::Decoder::new(bytes.as_slice()).read_info().unwrap();
        let texts = reader
            .info()
            .uncompressed_latin1_text
            .iter()
            .map(|t| (t.keyword.clone(), t.text.clone()))
            .collect();
        let mut rgb = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        Png { texts, width: info.width as usize, rgb }
    }

    fn numbers(&self, key: &str) -> Vec<f64> {
        let (_, v) = self.texts.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no {key}"));
        v.split_whitespace().map(|x| x.parse().unwrap()).collect()
    }

    fn rgb(&self, x: usize, y: usize) -> [u8; 3] {
        let at = (y * self.width + x) * 3;
        [self.rgb[at], self.rgb[at + 1], self.rgb[at + 2]]
    }
}

fn rows(folder: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(folder.join("run.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn the_returns_on_route_picture_centres_its_inset_on_the_route_cells() {
    let tmp = TempDir::new("wake-picture");
    let out = tmp.path("runs");
    let status = Command::new(env!("CARGO_BIN_EXE_acres-harness"))
        .args(["run", "--scenario", "scenarios/t2_06_truck_on_the_lane.json", "--mode", "checked"])
        .args(["--model", "scripted", "--out", &out])
        .current_dir(root())
        .status()
        .unwrap();
    assert!(status.success());
    let folder = Path::new(&out).join("t2_06_truck_on_the_lane__checked__scripted");
    let rows = rows(&folder);
    let wake = |reason: &str| {
        rows.iter()
            .find(|r| r["type"] == "wake" && r["reason"] == reason)
            .unwrap_or_else(|| panic!("no {reason}"))
    };
    let ror = wake("returns_on_route");
    let t = ror["t"].as_f64().unwrap();
    let cells: Vec<[f64; 2]> = rows
        .iter()
        .rfind(|r| r["type"] == "returns_on_route" && r["t"].as_f64().unwrap() <= t)
        .map(|r| serde_json::from_value(r["cells"].clone()).unwrap())
        .unwrap();
    assert!(!cells.is_empty());
    let frame =
        |w: &Value| Png::read(&folder.join("frames").join(format!("{}.png", w["frame"].as_str().unwrap())));
    let png = frame(ror);
    let start = frame(wake("start"));
    let ivb = png.numbers("acres-inset-view-box");
    let ipx = png.numbers("acres-inset-px");
    let impp = png.numbers("acres-inset-m-per-px")[0];
    assert!(impp <= 0.5, "inset at {impp} m/px");
    // Centred on the cells (within 8 px of the snap), not on the start's vehicle.
    let (cx, cy) = cells.iter().fold((0.0, 0.0), |s, c| (s.0 + c[0], s.1 + c[1]));
    let n = cells.len() as f64;
    let mid = [(ivb[0] + ivb[2]) / 2.0, (ivb[1] + ivb[3]) / 2.0];
    let (lo_x, hi_x) = cells.iter().fold((f64::MAX, f64::MIN), |s, c| (s.0.min(c[0]), s.1.max(c[0])));
    let (lo_y, hi_y) = cells.iter().fold((f64::MAX, f64::MIN), |s, c| (s.0.min(c[1]), s.1.max(c[1])));
    let centre = [(lo_x + hi_x) / 2.0, (lo_y + hi_y) / 2.0];
    assert!(
        (mid[0] - centre[0]).abs() <= 8.0 * impp && (mid[1] - centre[1]).abs() <= 8.0 * impp,
        "{mid:?} {centre:?}"
    );
    assert!((cx / n - mid[0]).abs() < 50.0 && (cy / n - mid[1]).abs() < 50.0);
    assert_ne!(
        start.numbers("acres-inset-view-box"),
        ivb,
        "the returns wake-up shows another view than start"
    );
    // The returns on the route: magenta pixels of the inset within 2 m of a cell on the route.
    let px = |x: f64, y: f64| (ipx[0] + (x - ivb[0]) / impp, ipx[1] + (ivb[3] - y) / impp);
    let magenta = |c: [u8; 3]| c[0] > 150 && c[1] < 90 && c[2] > 150;
    let mut on_route = 0;
    for y in ipx[1] as usize..ipx[3] as usize {
        for x in ipx[0] as usize..ipx[2] as usize {
            let near = cells.iter().any(|c| {
                let (cx, cy) = px(c[0], c[1]);
                (cx - x as f64).abs() * impp <= 2.0 && (cy - y as f64).abs() * impp <= 2.0
            });
            if near && magenta(png.rgb(x, y)) {
                on_route += 1;
            }
        }
    }
    assert!(on_route >= 40, "the returns on the route cover {on_route} px");
    // The map's drawn area: the whole map's bounds in the map part, and the inset.
    let map = acres_farm::Map::load(&root().join("scenarios/maps/default.json")).unwrap();
    let (lo, hi) = map.bounds();
    let (lo_x, hi_y) = (lo.x.min(-map.home_radius_m), hi.y);
    let vb = png.numbers("acres-view-box");
    let mpp = png.numbers("acres-m-per-px")[0];
    let w = ((hi.x - lo_x) / mpp).min((vb[2] - vb[0]) / mpp);
    let h = ((hi_y - lo.y) / mpp).min((vb[3] - vb[1]) / mpp);
    let inset = (ipx[2] - ipx[0]) * (ipx[3] - ipx[1]);
    let fraction = (w * h + inset) / (640.0 * 692.0);
    assert!(fraction >= 0.85, "the map fills {:.1} % of the frame", 100.0 * fraction);
    eprintln!("returns on the route: {on_route} px; the map fills {:.1} % of the frame", 100.0 * fraction);
}
