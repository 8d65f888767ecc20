//! Placeholder until the renderer lands.
use super::graph::ExecutionGraph;
pub fn to_dot(_g: &ExecutionGraph) -> String {
    String::new()
}
