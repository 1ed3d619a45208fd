//! ACRES Core and the vehicle's skill server in one deterministic loop; the cost-table learner.
