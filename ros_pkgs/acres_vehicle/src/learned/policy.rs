//! A learned skill's policy: an ONNX model from the observation vector (`[1, n]` f32) to the
//! command (`[1, 2]` f32: speed m/s, yaw rate rad/s), run in-process by tract (pure Rust).
//! The model is loaded, typed and optimised once, when the skill folder is loaded; each tick
//! runs the optimised plan.

use std::path::Path;
use std::sync::Arc;

use tract_onnx::prelude::*;

/// A loaded, optimised policy.
#[derive(Clone)]
pub struct Policy {
    plan: Arc<TypedRunnableModel>,
    inputs: usize,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("inputs", &self.inputs).finish_non_exhaustive()
    }
}

impl Policy {
    /// Loads the ONNX model at `path` for an observation of `inputs` numbers; the error says
    /// what is wrong (unreadable, an operator tract lacks, shapes that do not fit).
    pub fn load(path: &Path, inputs: usize) -> Result<Policy, String> {
        let typed = tract_onnx::onnx()
            .model_for_path(path)
            .and_then(|m| m.with_input_fact(0, f32::fact([1, inputs]).into()))
            .and_then(|m| m.into_optimized())
            .map_err(|e| format!("the model cannot be loaded for an input [1, {inputs}]: {e:#}"))?;
        if typed.inputs.len() != 1 || typed.outputs.len() != 1 {
            return Err(format!(
                "the model must have one input and one output, not {} and {}",
                typed.inputs.len(),
                typed.outputs.len()
            ));
        }
        let out = typed.output_fact(0).map_err(|e| e.to_string())?;
        if out.datum_type != f32::datum_type() || out.shape.as_concrete() != Some(&[1, 2][..]) {
            return Err(format!(
                "the model's output must be f32 [1, 2] (speed m/s, yaw rate rad/s), not {:?} {:?}",
                out.datum_type, out.shape
            ));
        }
        let plan = typed.into_runnable().map_err(|e| format!("the model cannot be planned: {e:#}"))?;
        Ok(Policy { plan, inputs })
    }

    /// The number of inputs.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// The command for one observation: `[speed m/s, yaw rate rad/s]`.
    pub fn run(&self, obs: &[f32]) -> Result<[f32; 2], String> {
        let input = Tensor::from_shape(&[1, self.inputs], obs).map_err(|e| format!("the input: {e}"))?;
        let out = self.plan.run(tvec!(input.into())).map_err(|e| format!("the policy failed: {e:#}"))?;
        let view = out[0].to_plain_array_view::<f32>().map_err(|e| format!("the policy's output: {e}"))?;
        let v: Vec<f32> = view.iter().copied().collect();
        match v[..] {
            [speed, yaw] => Ok([speed, yaw]),
            _ => Err(format!("the policy gave {} numbers, not 2", v.len())),
        }
    }
}
