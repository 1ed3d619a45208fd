//! A learned skill's policy: an ONNX model from the observation vector (`[1, n]` f32) to the
//! command (`[1, 2]` f32: speed m/s, yaw rate rad/s), run in-process by RTen (pure Rust).
//! The model is loaded, checked and optimised once, when the skill folder is loaded; each tick
//! runs it on a pool of one thread of its own, so its arithmetic never depends on the machine's
//! cores or on how many runs share the process (docs/learned-skills.md says why RTen).

use std::path::Path;
use std::sync::Arc;

use rten::{Dimension, Model, RunOptions, ThreadPool};
use rten_tensor::prelude::*;
use rten_tensor::{NdTensor, Tensor};

/// A loaded, optimised policy.
#[derive(Clone)]
pub struct Policy {
    model: Arc<Model>,
    pool: Arc<ThreadPool>,
    inputs: usize,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("inputs", &self.inputs).finish_non_exhaustive()
    }
}

impl Policy {
    /// Loads the ONNX model at `path` for an observation of `inputs` numbers; the error says
    /// what is wrong (unreadable, an operator RTen lacks, shapes that do not fit).
    pub fn load(path: &Path, inputs: usize) -> Result<Policy, String> {
        let model = Model::load_file(path).map_err(|e| format!("the model cannot be loaded: {e}"))?;
        if model.input_ids().len() != 1 || model.output_ids().len() != 1 {
            return Err(format!(
                "the model must have one input and one output, not {} and {}",
                model.input_ids().len(),
                model.output_ids().len()
            ));
        }
        // A declared input shape must be [1, inputs] (a named dimension stands for any size).
        if let Some(shape) = model.input_shape(0) {
            let fits = |d: &Dimension, n: usize| !matches!(d, Dimension::Fixed(m) if *m != n);
            if shape.len() != 2 || !fits(&shape[0], 1) || !fits(&shape[1], inputs) {
                return Err(format!(
                    "the model's input must be [1, {inputs}] (the observation), not {}",
                    shape_text(&shape)
                ));
            }
        }
        let policy =
            Policy { model: Arc::new(model), pool: Arc::new(ThreadPool::with_num_threads(1)), inputs };
        // One run on a zero observation proves the output's type and size before any tick.
        policy
            .run(&vec![0.0; inputs])
            .map_err(|e| format!("the model cannot be run on [1, {inputs}]: {e}"))?;
        Ok(policy)
    }

    /// The number of inputs.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The command for one observation: `[speed m/s, yaw rate rad/s]`.
    pub fn run(&self, obs: &[f32]) -> Result<[f32; 2], String> {
        if obs.len() != self.inputs {
            return Err(format!("the observation has {} numbers, not {}", obs.len(), self.inputs));
        }
        let input = NdTensor::from_data([1, self.inputs], obs.to_vec());
        let opts = RunOptions::default().with_thread_pool(Some(self.pool.clone()));
        let out =
            self.model.run_one(input.into(), Some(opts)).map_err(|e| format!("the policy failed: {e}"))?;
        let out: Tensor<f32> =
            out.try_into().map_err(|e| format!("the policy's output must be f32 (speed, yaw rate): {e}"))?;
        if out.shape() != [1, 2] {
            return Err(format!(
                "the policy's output must be [1, 2] (speed m/s, yaw rate rad/s), not {:?}",
                out.shape()
            ));
        }
        match out.to_vec()[..] {
            [speed, yaw] => Ok([speed, yaw]),
            ref v => Err(format!("the policy gave {} numbers, not 2", v.len())),
        }
    }
}

/// A shape as `[1, n]` (named dimensions by their name).
fn shape_text(shape: &[Dimension]) -> String {
    let dims: Vec<String> = shape
        .iter()
        .map(|d| match d {
            Dimension::Fixed(n) => n.to_string(),
            Dimension::Symbolic(s) => s.to_string(),
        })
        .collect();
    format!("[{}]", dims.join(", "))
}
