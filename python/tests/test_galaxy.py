"""Tests of the `galaxy` Python module against a NumPy implementation of the same network.

Run from the repository's root after `pip install ./python`:  pytest python/tests

Every comparison is element by element with numpy.testing.assert_allclose at a relative
tolerance of 1e-4 plus an absolute 1e-6: the crate computes in float32 and the reference in
float64; the largest relative difference measured over these tests is 3e-6 (size 64, depth
16, on the 2-core AMD EPYC and on lavapipe), so the tolerance leaves a margin of about 30. The GPU modes run on
whatever adapter the crate picks (lavapipe, the software Vulkan driver, in CI); with no
adapter at all those tests fail with the crate's message rather than being skipped.
"""

import numpy as np
import pytest

import galaxy

RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_TOLERANCE = 1e-6

# One CPU mode, the GPU mode with every compiler pass, and the plainest GPU graph mode.
MODES = ["CpuGraph", "Cpu", "Graph", "GraphCompiled"]
# (size, depth, seed): small and odd sizes, one layer up to sixteen.
WORKLOADS = [(1, 1, 3), (3, 2, 5), (8, 4, 1), (17, 3, 9), (64, 16, 2)]


def numpy_reference(network, inputs):
    """The network run in NumPy (float64): linear layers, ReLUs, then the row-wise softmax."""
    activations = np.asarray(inputs, dtype=np.float64)
    for weights, bias, relu in network.layers:
        activations = activations @ weights.astype(np.float64) + bias.astype(np.float64)
        if relu:
            activations = np.maximum(activations, 0.0)
    if network.softmax:
        shifted = activations - activations.max(axis=1, keepdims=True)
        exponentials = np.exp(shifted)
        activations = exponentials / exponentials.sum(axis=1, keepdims=True)
    return activations


def assert_matches_reference(network, inputs, output):
    expected = numpy_reference(network, inputs)
    assert output.shape == expected.shape
    assert output.dtype == np.float32
    assert np.isfinite(output).all(), "the output holds NaN or infinity"
    np.testing.assert_allclose(
        output, expected, rtol=RELATIVE_TOLERANCE, atol=ABSOLUTE_TOLERANCE
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("size, depth, seed", WORKLOADS)
def test_standard_workload_matches_numpy(size, depth, seed, mode):
    network = galaxy.random_mlp(size, depth, seed)
    inputs = network.workload_input
    assert inputs.shape == (size, size)
    assert_matches_reference(network, inputs, network.run(inputs, mode=mode))


@pytest.mark.parametrize("mode", MODES)
def test_new_random_inputs_match_numpy_and_change_the_output(mode):
    network = galaxy.random_mlp(32, 8, 4)
    generator = np.random.default_rng(7)
    outputs = []
    for _ in range(3):
        inputs = generator.uniform(-1.0, 1.0, size=(32, 32)).astype(np.float32)
        output = network.run(inputs, mode=mode)
        assert_matches_reference(network, inputs, output)
        outputs.append(output)
    # A runner that ignored its input would hand back the same array every time.
    assert not np.allclose(outputs[0], outputs[1])
    assert not np.allclose(outputs[1], outputs[2])


@pytest.mark.parametrize("mode", MODES)
def test_network_from_user_weights_with_other_shapes(mode):
    generator = np.random.default_rng(11)
    layers = [
        (generator.normal(size=(7, 3)).astype(np.float32), generator.normal(size=3).astype(np.float32), True),
        (generator.normal(size=(3, 11)).astype(np.float32), generator.normal(size=11).astype(np.float32), False),
    ]
    network = galaxy.Network(layers, rows=5, softmax=False)
    assert network.input_shape == (5, 7)
    inputs = generator.normal(size=(5, 7)).astype(np.float32)
    output = network.run(inputs, mode=mode)
    assert output.shape == (5, 11)
    assert_matches_reference(network, inputs, output)
    # Without a softmax the last layer's negative values survive.
    assert (output < 0).any()


def test_float64_and_transposed_inputs_are_converted():
    network = galaxy.random_mlp(16, 2, 8)
    generator = np.random.default_rng(3)
    inputs = generator.uniform(-1.0, 1.0, size=(16, 16))
    # float64, and a transposed view whose memory is column-major: both are copied in
    # row-major float32 order.
    transposed = inputs.T
    assert not transposed.flags["C_CONTIGUOUS"]
    assert_matches_reference(
        network, transposed.astype(np.float32), network.run(transposed)
    )
    # A Python list of lists works too.
    assert_matches_reference(
        network, inputs.astype(np.float32), network.run(inputs.tolist())
    )


def test_the_same_arguments_give_the_same_network():
    first = galaxy.random_mlp(8, 4, 1)
    second = galaxy.random_mlp(8, 4, 1)
    other_seed = galaxy.random_mlp(8, 4, 2)
    np.testing.assert_array_equal(first.workload_input, second.workload_input)
    for (w1, b1, r1), (w2, b2, r2) in zip(first.layers, second.layers):
        np.testing.assert_array_equal(w1, w2)
        np.testing.assert_array_equal(b1, b2)
        assert r1 == r2
    assert not np.array_equal(first.workload_input, other_seed.workload_input)
    # The standard workload always ends with a ReLU, then the softmax.
    assert first.layers[-1][2] is True
    assert first.softmax is True


def test_modes_are_listed_and_classified():
    modes = galaxy.execution_modes()
    assert "CpuGraph" in modes and "GraphCompiled" in modes
    assert galaxy.uses_gpu("GraphCompiled")
    assert not galaxy.uses_gpu("CpuGraph")
    assert isinstance(galaxy.gpu_adapter(), str)


def test_wrong_input_shape_is_a_run_error_with_the_crates_message():
    network = galaxy.random_mlp(8, 2, 1)
    with pytest.raises(galaxy.RunError, match=r"the input is 3×8, but the graph's input node expects 8×8"):
        network.run(np.zeros((3, 8), dtype=np.float32))
    # The same error from a GPU mode.
    with pytest.raises(galaxy.RunError, match=r"expects 8×8"):
        network.run(np.zeros((8, 3), dtype=np.float32), mode="GraphCompiled")


def test_layers_that_do_not_fit_are_a_graph_error():
    layers = [
        (np.zeros((3, 4), dtype=np.float32), np.zeros(4, dtype=np.float32), True),
        (np.zeros((5, 2), dtype=np.float32), np.zeros(2, dtype=np.float32), False),
    ]
    with pytest.raises(galaxy.GraphError, match=r"the input's columns must equal the weights' rows"):
        galaxy.Network(layers, rows=2)


def test_a_bias_of_the_wrong_length_is_a_graph_error():
    layers = [(np.zeros((3, 4), dtype=np.float32), np.zeros(5, dtype=np.float32), True)]
    with pytest.raises(galaxy.GraphError, match=r"linear"):
        galaxy.Network(layers, rows=2)


def test_an_empty_workload_is_a_graph_error():
    with pytest.raises(galaxy.GraphError, match=r"empty"):
        galaxy.random_mlp(0, 4, 1)
    # Both are GalaxyError, so one except clause catches every error of the crate.
    assert issubclass(galaxy.GraphError, galaxy.GalaxyError)
    assert issubclass(galaxy.RunError, galaxy.GalaxyError)


def test_an_unknown_mode_names_the_modes_there_are():
    network = galaxy.random_mlp(4, 1, 1)
    with pytest.raises(ValueError, match=r'unknown execution mode "Fastest"; the modes are Cpu, CpuGraph'):
        network.run(network.workload_input, mode="Fastest")


def test_arrays_of_the_wrong_dimension_are_type_errors():
    network = galaxy.random_mlp(4, 1, 1)
    with pytest.raises(TypeError):
        network.run(np.zeros(16, dtype=np.float32))
    with pytest.raises(OverflowError):
        galaxy.random_mlp(-1, 1, 1)


def test_seconds_per_run_in_rust_is_positive_and_checks_its_arguments():
    network = galaxy.random_mlp(4, 1, 1)
    seconds = network.seconds_per_run_in_rust(network.workload_input, "CpuGraph", 10)
    assert 0.0 < seconds < 1.0
    with pytest.raises(ValueError, match=r"at least 1"):
        network.seconds_per_run_in_rust(network.workload_input, "CpuGraph", 0)
