//! Every GPU error variant that user input can cause, and the message it carries.

mod common;

use common::context;
use galaxy::gpu::{
    AdapterSelection, ContextOptions, GpuContext, GpuError, GpuTensor, Readback, Reduction,
    ReductionStrategy, ShaderCompilation, compile_wgsl,
};
use galaxy::immediate::ImmediateGpu;
use galaxy::{ShapeError, Tensor2d};

#[test]
fn no_adapter_names_the_package_to_install() {
    // No backend at all: wgpu finds nothing.
    let options = ContextOptions {
        backends: wgpu::Backends::empty(),
        selection: AdapterSelection::MostCapable,
        required_limits: None,
        required_features: None,
    };
    let error = GpuContext::with_options(&options)
        .err()
        .expect("no backend, no adapter");
    assert_eq!(error, GpuError::NoAdapter);
    assert!(error.to_string().contains("mesa-vulkan-drivers"), "{error}");
}

#[test]
fn an_unknown_adapter_name_lists_the_adapters_found() {
    let options = ContextOptions {
        backends: wgpu::Backends::PRIMARY,
        selection: AdapterSelection::NameContains("no adapter is called this".into()),
        required_limits: None,
        required_features: None,
    };
    match GpuContext::with_options(&options) {
        Err(GpuError::NoMatchingAdapter { available, .. }) => assert!(!available.is_empty()),
        Err(other) => panic!("expected NoMatchingAdapter, got {other}"),
        Ok(_) => panic!("expected NoMatchingAdapter, got a context"),
    }
}

#[test]
fn limits_beyond_the_adapter_are_a_device_request_error() {
    let impossible = wgpu::Limits {
        max_compute_workgroup_storage_size: u32::MAX,
        ..context().limits()
    };
    let options = ContextOptions {
        required_limits: Some(impossible),
        ..ContextOptions::from_environment()
    };
    match GpuContext::with_options(&options) {
        Err(GpuError::DeviceRequest { reason, .. }) => assert!(!reason.is_empty()),
        Err(other) => panic!("expected DeviceRequest, got {other}"),
        Ok(_) => panic!("expected DeviceRequest, got a context"),
    }
}

#[test]
fn reading_back_from_a_destroyed_device_is_a_readback_error() {
    // A context of its own: destroying the shared one would break the other tests.
    let context = GpuContext::new().unwrap_or_else(|error| panic!("{error}"));
    let tensor = GpuTensor::upload(&context, &Tensor2d::zeros(4, 4), Readback::Needed).unwrap();
    context.device().destroy();
    let error = tensor.download(&context).unwrap_err();
    assert!(matches!(error, GpuError::Readback { .. }), "{error}");
}

#[test]
fn a_subgroup_kernel_on_a_device_without_subgroups_is_a_missing_feature_error() {
    let options = ContextOptions {
        required_features: Some(wgpu::Features::empty()),
        ..ContextOptions::from_environment()
    };
    let context = GpuContext::with_options(&options).unwrap_or_else(|error| panic!("{error}"));
    assert!(!context.supports_subgroups());
    let gpu = ImmediateGpu::new(&context, ShaderCompilation::Cached);
    // The automatic choice falls back to workgroup memory ...
    assert_eq!(
        gpu.best_reduction_strategy(),
        ReductionStrategy::WorkgroupMemory
    );
    assert_eq!(gpu.sum(&Tensor2d::filled(3, 5, 2.0)).unwrap(), 30.0);
    // ... and asking for subgroups explicitly is a typed error.
    let error = gpu
        .reduce(
            Reduction::Sum,
            ReductionStrategy::Subgroups,
            &Tensor2d::zeros(2, 2),
        )
        .unwrap_err();
    assert!(
        matches!(
            error,
            GpuError::MissingFeature {
                kernel: "subgroup_sum",
                ..
            }
        ),
        "{error}"
    );
    // The same for the subgroup softmax.
    let error = gpu
        .softmax_with(ReductionStrategy::Subgroups, &Tensor2d::zeros(2, 2))
        .unwrap_err();
    assert!(
        matches!(
            error,
            GpuError::MissingFeature {
                kernel: "subgroup_softmax",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(
        context.best_reduction_strategy(),
        ReductionStrategy::WorkgroupMemory
    );
}

#[test]
fn a_tensor_larger_than_a_storage_binding_is_rejected_before_allocating() {
    let context = context();
    let limit = context.limits().max_storage_buffer_binding_size;
    let rows = (limit / 4 + 1) as usize;
    let error = GpuTensor::uninitialized(context, rows, 1, Readback::Never)
        .err()
        .unwrap();
    assert!(matches!(error, GpuError::TensorTooLarge { .. }), "{error}");
}

#[test]
fn a_dispatch_wider_than_the_grid_allows_is_a_typed_error() {
    // 16 output columns per workgroup, and no second axis for columns.
    let limit = context().limits().max_compute_workgroups_per_dimension as usize;
    let columns = limit * 16 + 1;
    let input = Tensor2d::zeros(1, 1);
    let weights = Tensor2d::zeros(1, columns);
    let bias = Tensor2d::zeros(1, columns);
    let gpu = ImmediateGpu::new(context(), ShaderCompilation::Cached);
    let error = gpu.linear(&input, &weights, &bias).unwrap_err();
    assert!(
        matches!(
            error,
            GpuError::DispatchTooLarge {
                operation: "linear",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn mismatched_shapes_are_shape_errors() {
    let gpu = ImmediateGpu::new(context(), ShaderCompilation::Cached);
    let input = Tensor2d::zeros(2, 3);
    let wrong_weights = Tensor2d::zeros(4, 5);
    let bias = Tensor2d::zeros(1, 5);
    let error = gpu.linear(&input, &wrong_weights, &bias).unwrap_err();
    assert!(
        matches!(error, GpuError::Shape(ShapeError::Incompatible { .. })),
        "{error}"
    );

    let weights = Tensor2d::zeros(3, 5);
    let full_size_bias = Tensor2d::zeros(2, 5);
    let error = gpu.linear(&input, &weights, &full_size_bias).unwrap_err();
    assert!(
        matches!(error, GpuError::Shape(ShapeError::Incompatible { .. })),
        "{error}"
    );

    let on_gpu = GpuTensor::upload(context(), &input, Readback::Never).unwrap();
    let error = on_gpu.write(context(), &Tensor2d::zeros(3, 2)).unwrap_err();
    assert!(
        matches!(error, GpuError::Shape(ShapeError::Incompatible { .. })),
        "{error}"
    );
}

#[test]
fn empty_tensors_are_shape_errors() {
    let error = GpuTensor::upload(context(), &Tensor2d::zeros(0, 3), Readback::Needed)
        .err()
        .unwrap();
    assert!(
        matches!(error, GpuError::Shape(ShapeError::Empty { .. })),
        "{error}"
    );
    // The sum of no values is 0, but no value is the maximum of nothing.
    let gpu = ImmediateGpu::new(context(), ShaderCompilation::Cached);
    assert_eq!(gpu.sum(&Tensor2d::zeros(3, 0)), Ok(0.0));
    let error = gpu.max(&Tensor2d::zeros(3, 0)).unwrap_err();
    assert!(
        matches!(error, GpuError::Shape(ShapeError::Empty { .. })),
        "{error}"
    );
}

#[test]
fn downloading_a_tensor_without_staging_buffer_is_an_error() {
    let on_gpu = GpuTensor::upload(context(), &Tensor2d::zeros(2, 2), Readback::Never).unwrap();
    let error = on_gpu.download(context()).unwrap_err();
    assert_eq!(
        error,
        GpuError::NotReadable {
            rows: 2,
            columns: 2
        }
    );
}

#[test]
fn a_malformed_shader_is_a_compilation_error() {
    let error = compile_wgsl(context(), "broken", "fn main( {", "main", &[]).unwrap_err();
    assert!(
        matches!(error, GpuError::ShaderCompilation { .. }),
        "{error}"
    );
    let missing_entry = "@compute @workgroup_size(1) fn main() {}";
    let error = compile_wgsl(context(), "no such entry", missing_entry, "other", &[]).unwrap_err();
    assert!(
        matches!(error, GpuError::ShaderCompilation { .. }),
        "{error}"
    );
}

#[test]
fn a_round_trip_keeps_every_value() {
    let tensor = Tensor2d::random(37, 11, -100.0..=100.0, 9);
    let on_gpu = GpuTensor::upload(context(), &tensor, Readback::Needed).unwrap();
    assert_eq!(on_gpu.download(context()).unwrap(), tensor);
}
