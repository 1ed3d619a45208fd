//! The shipped scenarios' deadlines and fuel limits test what their titles say, against the
//! checked-in cost tables (planned time = table × 1.6, planned energy = table × 1.5).

mod support;
use support::root;

use acres_harness::planners::planning::costs::CostTable;
use acres_harness::planners::planning::mission::best_order;
use acres_harness::scenario;

fn load(id: &str) -> (scenario::Scenario, CostTable) {
    let sc =
        scenario::load(&root().join(format!("scenarios/{id}.json")), &root().join("scenarios/maps")).unwrap();
    let t =
        CostTable::load(&root().join("scenarios/costs"), &sc.map_data.name, sc.condition.as_str()).unwrap();
    (sc, t)
}

fn without(fields: &[String], f: &str) -> Vec<String> {
    fields.iter().filter(|g| *g != f).cloned().collect()
}

#[test]
fn t1_02_the_deadline_allows_all_three_fields_but_binds() {
    let (sc, t) = load("t1_02_three_fields_deadline");
    let d = sc.deadline_s.unwrap();
    let (_, all) = best_order(&sc.fields, &t).unwrap();
    assert!(all.planned_time_s <= d, "the best plan ({:.0} s) must fit {d}", all.planned_time_s);
    assert!(
        all.planned_time_s >= d - 120.0,
        "the deadline must bind: {:.0} s planned, {d} allowed",
        all.planned_time_s
    );
}

#[test]
fn t1_03_the_deadline_permits_two_of_three_fields() {
    let (sc, t) = load("t1_03_time_limit_excludes_a_field");
    let d = sc.deadline_s.unwrap();
    let (_, two) = best_order(&without(&sc.fields, "F57"), &t).unwrap();
    assert!(two.planned_time_s <= d);
    for f in ["F51", "F52"] {
        let (_, c) = best_order(&without(&sc.fields, f), &t).unwrap();
        assert!(c.planned_time_s > d, "a plan with F57 must be refused");
    }
    let (_, all) = best_order(&sc.fields, &t).unwrap();
    assert!(all.table_time_s > d, "even driven at table time, three fields end late");
}

#[test]
fn t1_04_the_fuel_limit_permits_two_of_three_fields() {
    let (sc, t) = load("t1_04_fuel_limit_excludes_a_field");
    let f = sc.fuel_limit_mj.unwrap();
    let (_, two) = best_order(&without(&sc.fields, "F60"), &t).unwrap();
    assert!(two.planned_energy_mj <= f);
    for g in ["F55", "F56"] {
        let (_, c) = best_order(&without(&sc.fields, g), &t).unwrap();
        assert!(c.planned_energy_mj > f, "a plan with F60 must be refused");
    }
    let (_, all) = best_order(&sc.fields, &t).unwrap();
    assert!(all.table_energy_mj > f, "even at table energy, three fields break the limit");
}

#[test]
fn t1_05_the_instruction_order_is_not_the_planners_order() {
    let (sc, t) = load("t1_05_instruction_with_an_order");
    let (best, _) = best_order(&sc.fields, &t).unwrap();
    assert_ne!(Some(&best), sc.success.order.as_ref());
}

#[test]
fn t2_08_the_deadline_allows_both_fields_and_the_waits() {
    let (sc, t) = load("t2_08_two_stops_and_a_deadline");
    let d = sc.deadline_s.unwrap();
    let (_, c) = best_order(&sc.fields, &t).unwrap();
    assert!(c.planned_time_s <= d && c.table_time_s + 150.0 <= d);
    assert!(c.planned_time_s + 200.0 > d, "the deadline binds");
}
