//! The fused MLP kernel compiled for one chain: the weights packed into one buffer, the
//! layer table, the pipeline, and binding it to an input and an output.

use wgpu::util::DeviceExt;

use crate::gpu::dispatch::WorkgroupGrid;
use crate::gpu::fused_mlp::{
    FusedChainShape, FusedMlpConfig, FusedMlpError, fused_mlp_source, vectors,
};
use crate::gpu::record::BoundDispatch;
use crate::gpu::register_blocked_linear::KernelLimits;
use crate::gpu::shader::{ShaderChecks, compile_wgsl_with_checks};
use crate::gpu::{GpuContext, GpuError, GpuTensor};
use crate::tensor::Tensor2d;

/// One entry of the kernel's layer table (the `Layer` struct of the template).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LayerDescription {
    weight_offset: u32,
    bias_offset: u32,
    inner_vectors: u32,
    column_vectors: u32,
    apply_relu: u32,
    padding: [u32; 3],
}

/// The fused kernel for one chain, compiled, with its weights uploaded.
pub struct FusedMlpKernel {
    shape: FusedChainShape,
    config: FusedMlpConfig,
    pipeline: wgpu::ComputePipeline,
    weights: wgpu::Buffer,
    biases: wgpu::Buffer,
    layers: wgpu::Buffer,
}

impl FusedMlpKernel {
    // ANCHOR: fused_mlp_prepare
    /// Compiles the kernel for `shape` and `config`, and uploads `parameters` (the weights
    /// and bias of every layer, in order), each padded with zeros to whole vec4s.
    pub fn prepare(
        context: &GpuContext,
        shape: &FusedChainShape,
        config: FusedMlpConfig,
        parameters: &[(&Tensor2d, &Tensor2d)],
    ) -> Result<FusedMlpKernel, FusedMlpError> {
        let limits = KernelLimits::of(&context.limits());
        let source = fused_mlp_source(shape, &config, &limits)?;
        if parameters.len() != shape.layers.len() {
            return Err(FusedMlpError::ParameterCount {
                expected: shape.layers.len(),
                given: parameters.len(),
            });
        }
        let (weights, biases, table) = pack_parameters(shape, parameters)?;
        let label = format!("fused mlp, {} layers", shape.layers.len());
        // Every loop of the template counts up to a constant or to a size from the layer
        // table, and every workgroup value is written before it is read: the loop counters
        // and the zeroing wgpu would add only cost time.
        let pipeline = compile_wgsl_with_checks(
            context,
            &label,
            &source,
            "main",
            &[],
            ShaderChecks::TrustedLoops,
        )?;
        let storage = |label: &str, contents: &[u8]| {
            context
                .device()
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage: wgpu::BufferUsages::STORAGE,
                })
        };
        Ok(FusedMlpKernel {
            shape: shape.clone(),
            config,
            pipeline,
            weights: storage("fused weights", bytemuck::cast_slice(&weights)),
            biases: storage("fused biases", bytemuck::cast_slice(&biases)),
            layers: storage("fused layer table", bytemuck::cast_slice(&table)),
        })
    }
    // ANCHOR_END: fused_mlp_prepare

    pub fn shape(&self) -> &FusedChainShape {
        &self.shape
    }

    pub fn config(&self) -> FusedMlpConfig {
        self.config
    }

    /// Binds the kernel to an input of the chain's input shape and an output of its result
    /// shape: one dispatch, one workgroup per block of rows.
    pub fn bind(
        &self,
        context: &GpuContext,
        input: &GpuTensor,
        output: &GpuTensor,
    ) -> Result<BoundDispatch, FusedMlpError> {
        let expected_input = (self.shape.rows, self.shape.input_columns);
        let expected_output = (self.shape.rows, self.shape.output_columns());
        for (name, expected, given) in [
            ("input", expected_input, input.shape()),
            ("output", expected_output, output.shape()),
        ] {
            if expected != given {
                return Err(GpuError::Shape(crate::tensor::ShapeError::Incompatible {
                    operation: "fused mlp",
                    expectation: "the tensors must have the chain's input and result shapes",
                    left_name: name,
                    left: given,
                    right_name: "chain",
                    right: expected,
                })
                .into());
            }
        }
        let workgroups = self.config.workgroups(&self.shape);
        let limit = context.limits().max_compute_workgroups_per_dimension;
        let grid = WorkgroupGrid::covering(workgroups, limit, "fused mlp").map_err(|_| {
            FusedMlpError::TooManyWorkgroups {
                workgroups,
                rows: self.config.rows_per_workgroup,
            }
        })?;
        let buffers = [
            input.buffer(),
            &self.weights,
            &self.biases,
            &self.layers,
            output.buffer(),
        ];
        Ok(BoundDispatch::new(context, &self.pipeline, &buffers, grid))
    }
}

/// The weights (vec4s, every layer padded to whole vec4s both ways), the biases (padded)
/// and the layer table.
type PackedParameters = (Vec<f32>, Vec<f32>, Vec<LayerDescription>);

// ANCHOR: pack_parameters
fn pack_parameters(
    shape: &FusedChainShape,
    parameters: &[(&Tensor2d, &Tensor2d)],
) -> Result<PackedParameters, FusedMlpError> {
    let mut weights = Vec::new();
    let mut biases = Vec::new();
    let mut table = Vec::new();
    for (index, (layer, (layer_weights, bias))) in shape.layers.iter().zip(parameters).enumerate() {
        if layer_weights.shape() != (layer.inner, layer.columns)
            || bias.shape() != (1, layer.columns)
        {
            return Err(FusedMlpError::ParameterShape {
                layer: index,
                weights: layer_weights.shape(),
                bias: bias.shape(),
                inner: layer.inner,
                columns: layer.columns,
            });
        }
        let (inner_vectors, column_vectors) = (vectors(layer.inner), vectors(layer.columns));
        table.push(LayerDescription {
            weight_offset: (weights.len() / 4) as u32,
            bias_offset: (biases.len() / 4) as u32,
            inner_vectors: inner_vectors as u32,
            column_vectors: column_vectors as u32,
            apply_relu: u32::from(layer.relu),
            padding: [0; 3],
        });
        let padded_columns = 4 * column_vectors;
        for inner in 0..4 * inner_vectors {
            for column in 0..padded_columns {
                let value = if inner < layer.inner && column < layer.columns {
                    layer_weights.get(inner, column)
                } else {
                    0.0
                };
                weights.push(value);
            }
        }
        biases.extend(bias.row(0));
        biases.resize(biases.len() + padded_columns - layer.columns, 0.0);
    }
    Ok((weights, biases, table))
}
// ANCHOR_END: pack_parameters

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::fused_mlp::FusedLayerShape;

    #[test]
    fn packing_pads_every_layer_to_whole_vec4s() {
        let shape = FusedChainShape {
            rows: 2,
            input_columns: 3,
            input_relu: false,
            layers: vec![FusedLayerShape {
                inner: 3,
                columns: 5,
                relu: true,
            }],
            softmax: false,
        };
        let weights = Tensor2d::random(3, 5, -1.0..=1.0, 1);
        let bias = Tensor2d::random(1, 5, -1.0..=1.0, 2);
        let (packed, biases, table) = pack_parameters(&shape, &[(&weights, &bias)]).unwrap();
        // 3 × 5 becomes 4 × 8.
        assert_eq!(packed.len(), 4 * 8);
        assert_eq!(biases.len(), 8);
        assert_eq!((table[0].inner_vectors, table[0].column_vectors), (1, 2));
        for inner in 0..4 {
            for column in 0..8 {
                let expected = if inner < 3 && column < 5 {
                    weights.get(inner, column)
                } else {
                    0.0
                };
                assert_eq!(packed[inner * 8 + column], expected);
            }
        }
        assert_eq!(&biases[..5], bias.row(0));
        assert_eq!(&biases[5..], &[0.0; 3]);
        let wrong = Tensor2d::random(5, 3, -1.0..=1.0, 1);
        assert!(matches!(
            pack_parameters(&shape, &[(&wrong, &bias)]),
            Err(FusedMlpError::ParameterShape { layer: 0, .. })
        ));
    }
}
