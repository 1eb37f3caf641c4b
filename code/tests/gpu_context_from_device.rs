//! A `GpuContext` built around a device that someone else created (the GUI's, in module 2)
//! keeps that device and its limits, and runs graphs on it. An integration test because it
//! runs the graph runners, which the `gpu` module itself must not import.

use galaxy::gpu::GpuContext;
use galaxy::graph::random_mlp;
use galaxy::runner::ExecutionMode;

#[test]
fn a_context_from_an_outside_device_uses_that_device_and_runs_graphs_on_it() {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends: wgpu::Backends::PRIMARY,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    // The adapter the shared context chose, found again by name among the instance's.
    let chosen = GpuContext::shared()
        .unwrap_or_else(|error| panic!("{error}"))
        .adapter_info();
    let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
    let adapter = adapters
        .into_iter()
        .find(|adapter| adapter.get_info().name == chosen.name)
        .expect("the shared context's adapter is among the instance's adapters");
    // wgpu's default limits, not the adapter's: the context must keep what it was given.
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("outside device"),
        required_limits: wgpu::Limits::default(),
        ..Default::default()
    }))
    .unwrap();
    let context = GpuContext::from_device(adapter.clone(), device.clone(), queue.clone());
    assert!(context.device() == &device && context.queue() == &queue);
    assert_eq!(context.adapter_info().name, adapter.get_info().name);
    assert_eq!(
        context.limits().max_storage_buffer_binding_size,
        wgpu::Limits::default().max_storage_buffer_binding_size
    );
    assert!(!context.supports_subgroups(), "no features were requested");

    let workload = random_mlp(24, 3, 5).unwrap();
    let expected = ExecutionMode::Cpu
        .prepare(&workload.graph, None)
        .unwrap()
        .run(&workload.input, 1)
        .unwrap();
    let got = ExecutionMode::GraphCached
        .prepare(&workload.graph, Some(&context))
        .unwrap()
        .run(&workload.input, 1)
        .unwrap();
    let (expected, got) = (&expected[0], &got[0]);
    assert_eq!((got.rows(), got.columns()), (24, 24));
    for (index, (got, expected)) in got.as_slice().iter().zip(expected.as_slice()).enumerate() {
        assert!(
            (got - expected).abs() <= 1e-5 + 1e-4 * expected.abs(),
            "element {index}: {got} on the outside device, {expected} on the CPU"
        );
    }
}
