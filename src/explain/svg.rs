//! Placeholder until the renderer lands.
use super::graph::ExecutionGraph;
pub fn to_svg(_g: &ExecutionGraph) -> String {
    String::new()
}
