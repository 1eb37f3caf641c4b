//! Prints what the op-code compiler makes of a small network: the program of every node
//! and the WGSL generated for it, before and after fusion, and one specialisation of the
//! linear-layer template.
//!
//! Run it with `cargo run --example show_generated_shader`. It only writes text, so it
//! needs no GPU.

use galaxy::Tensor2d;
use galaxy::compiler::fuse;
use galaxy::compiler::opcode::{Program, fuse_programs, generate_wgsl, lower_graph};
use galaxy::compiler::specialised_linear::specialised_linear_source;
use galaxy::graph::{ChainBuilder, ValidGraph};

// ANCHOR: show_generated_shader
fn main() -> Result<(), Box<dyn std::error::Error>> {
    // input 4×8 → linear 8×8 → relu → linear 8×4 → relu → softmax → output
    let graph = ChainBuilder::input(4, 8)
        .linear(
            Tensor2d::random(8, 8, -0.5..=0.5, 1),
            Tensor2d::random(1, 8, -0.5..=0.5, 2),
        )
        .relu()
        .linear(
            Tensor2d::random(8, 4, -0.5..=0.5, 3),
            Tensor2d::random(1, 4, -0.5..=0.5, 4),
        )
        .relu()
        .softmax()
        .output()?;

    print_programs("Unfused: one program per node", &graph)?;
    print_programs(
        "Fused: the fusion pass first, then lowering",
        &fuse(&graph)?,
    )?;

    // The same result without the graph pass: append the lowered programs of the second
    // linear layer, its ReLU and the softmax.
    let unfused: Vec<Program> = lower_graph(&graph)
        .into_iter()
        .map(|node| node.program)
        .collect();
    heading("Fused by appending op codes: linear 8×4 + relu + softmax");
    let appended = fuse_programs(&unfused[2..])?;
    print!("{appended}");
    let fused_by_the_pass = &lower_graph(&fuse(&graph)?)[1].program;
    println!(
        "\nThe same program as the fusion pass gives: {}",
        appended == *fused_by_the_pass
    );

    heading("The linear template, preprocessed: WORKGROUP_SIZE 8, USE_WORKGROUP_MEMORY");
    print!("{}", specialised_linear_source(8, true)?);
    Ok(())
}

fn print_programs(title: &str, graph: &ValidGraph) -> Result<(), Box<dyn std::error::Error>> {
    let lowered = lower_graph(graph);
    heading(&format!("{title} ({} programs)", lowered.len()));
    for (index, node) in lowered.iter().enumerate() {
        println!(
            "--- Program {} of {}, node {} ---",
            index + 1,
            lowered.len(),
            node.node.0
        );
        print!("{}", node.program);
        println!("--- Its WGSL ---");
        println!("{}", generate_wgsl(&node.program)?);
    }
    Ok(())
}
// ANCHOR_END: show_generated_shader

fn heading(title: &str) {
    let rule = "=".repeat(88);
    println!("\n{rule}\n{title}\n{rule}\n");
}
