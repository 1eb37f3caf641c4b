"""Data parallelism on module 3's model: the handwritten-digits classifier trained with DDP.

The network and the training are the crate's (`code/src/inference/training.rs`): 64 pixels
scaled to 0..1, two hidden layers of 64 units with ReLUs, 10 classes, the cross-entropy of the
softmax, and SGD with momentum 0.9 at learning rate 0.05 for 30 epochs. The 1797 images of
`code/data/digits/optdigits-1797.csv` are shuffled with a seed and 20 % of them (359) kept apart
for testing, as `Digits::split(0.2, 1)` does; PyTorch's generator shuffles, so the test images
are another 359 than the crate's.

Every epoch, a seeded shuffle (the same on every rank) cuts the training images into global
batches of B images; rank r of N trains on the r-th block of B / N images of each batch, and
DistributedDataParallel averages the gradients, so N processes take the steps one process would
take on the whole batches. Timed: one epoch (every step's forward, backward with the gradient
all-reduce, and SGD update); samples/s is the images of an epoch divided by its time. After
each training run, rank 0 measures the accuracy on the test images.

`--check` first proves the training is one process's: after `--check-steps` steps in float64,
rank 0 compares every parameter with a plain network it trains itself on the same global
batches (exit status 1 when they differ by more than 1e-9, relative).

    torchrun --standalone --nproc-per-node 2 ddp_digits.py --backend gloo --device cpu --check
"""

import argparse
import math
import statistics
import time
from pathlib import Path

import common
from common import AnchorError, dist, torch
from ddp_mlp import my_rows, training_step

DATA = Path(__file__).resolve().parents[2] / "code" / "data" / "digits" / "optdigits-1797.csv"
PIXELS = 64
PIXEL_MAXIMUM = 16
CLASSES = 10
HIDDEN_SIZES = (64, 64)
# The crate's TrainingConfig::default() and the split of its train_digits example.
LEARNING_RATE = 0.05
MOMENTUM = 0.9
EPOCHS = 30
TEST_FRACTION = 0.2
SPLIT_SEED = 1
INITIAL_SEED = 2026
# Both sides of the check run in float64, where one step's rounding is near 10⁻¹⁶: a correct
# data-parallel step differs from one process's by far less than 10⁻⁹, a wrong gradient scale
# by 10⁻² or more.
CHECK_TOLERANCE = 1e-9


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_launch_arguments(parser)
    # One timed run is an epoch, and a repeat is a whole training run of --epochs epochs:
    # --iterations has no meaning here.
    parser.set_defaults(iterations=None, warmup=2)
    parser.add_argument("--batches", type=common.positive_list, default=[32, 256],
                        help="global batch sizes in images, comma-separated; each must divide "
                             "evenly by the number of processes (default 32,256; 32 is the crate's)")
    parser.add_argument("--epochs", type=int, default=EPOCHS,
                        help=f"epochs of one training run (default {EPOCHS}, as the crate)")
    parser.add_argument("--data", type=Path, default=DATA, help="the digits CSV file")
    parser.add_argument("--seed", type=int, default=INITIAL_SEED,
                        help="seeds the initial weights and every epoch's shuffle")
    parser.add_argument("--check", action="store_true",
                        help="before timing, compare the trained parameters with one process's "
                             "(once per global batch size)")
    parser.add_argument("--check-steps", type=int, default=10, help="training steps the check takes")
    arguments = parser.parse_args(argv)
    if arguments.iterations is not None:
        parser.error("ddp_digits.py times whole epochs: --epochs sets how many make a training "
                     "run and --repeats how many runs; --iterations is not used")
    arguments.iterations = 1
    common.check_launch_arguments(parser, arguments)
    if arguments.epochs < 1 or arguments.check_steps < 1:
        parser.error("--epochs and --check-steps must be at least 1")
    return arguments


# ---------------------------------------------------------------------------------------
# The data


def load_digits(path):
    """(images scaled to 0..1, labels) from the CSV file: 64 pixel counts 0..16 and a label
    0..9 per line. A malformed line stops the run with its number."""
    try:
        lines = path.read_text().splitlines()
    except OSError as error:
        raise AnchorError(f"cannot read the digits from {path}: {error.strerror}") from None
    images, labels = [], []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            values = [int(field) for field in line.split(",")]
        except ValueError:
            raise AnchorError(f"{path}, line {number}: expected whole numbers separated by "
                              f"commas") from None
        if len(values) != PIXELS + 1:
            raise AnchorError(f"{path}, line {number}: expected {PIXELS} pixels and a label, "
                              f"found {len(values)} numbers")
        *pixels, label = values
        if not all(0 <= pixel <= PIXEL_MAXIMUM for pixel in pixels) or not 0 <= label < CLASSES:
            raise AnchorError(f"{path}, line {number}: pixels must lie in 0..{PIXEL_MAXIMUM} "
                              f"and the label in 0..{CLASSES - 1}")
        images.append(pixels)
        labels.append(label)
    if not images:
        raise AnchorError(f"{path} holds no images")
    return torch.tensor(images) / PIXEL_MAXIMUM, torch.tensor(labels)


def split(images, labels, test_fraction, seed):
    """Shuffles with `seed` and keeps round(test_fraction · count) images apart for testing,
    as the crate's digits::split does (1797 images: 359 for testing, 1438 for training)."""
    test_count = round(len(images) * test_fraction)
    order = torch.randperm(len(images), generator=torch.Generator().manual_seed(seed))
    test, training = order[:test_count], order[test_count:]
    return (images[training], labels[training]), (images[test], labels[test])


def epoch_orders(training_count, global_batch, epochs, seed):
    """Indices of every step's global batch, [epochs, steps, global_batch]: each epoch shuffles
    the training images anew. An epoch takes only whole batches (the few images left over are a
    different few each epoch), so that every step's batch splits into equal blocks and the
    work does not depend on the number of processes."""
    steps = training_count // global_batch
    if steps < 1:
        raise AnchorError(f"a global batch of {global_batch} images is larger than the "
                          f"{training_count} training images")
    generator = torch.Generator().manual_seed(seed)
    return torch.stack([torch.randperm(training_count, generator=generator)[:steps * global_batch]
                        .view(steps, global_batch) for _ in range(epochs)])


# ---------------------------------------------------------------------------------------
# The network


def initial_network(seed, dtype=torch.float32):
    """64 → 64 → 64 → 10 with a ReLU after each hidden layer. Weights uniform in
    ±√(3·gain / inputs), gain 2 before a ReLU and 1 before the softmax, biases zero, as
    TrainedNetwork::initialise draws them (with PyTorch's generator: the same statistics, not
    the same numbers). Drawn in fp32, so the float64 copy of the check starts from the same
    values."""
    generator = torch.Generator().manual_seed(seed)
    widths = [PIXELS, *HIDDEN_SIZES, CLASSES]
    modules = []
    for index, (inputs, outputs) in enumerate(zip(widths, widths[1:])):
        hidden = index + 2 < len(widths)
        limit = (3.0 * (2.0 if hidden else 1.0) / inputs) ** 0.5
        linear = torch.nn.Linear(inputs, outputs)
        with torch.no_grad():
            linear.weight.copy_((torch.rand(outputs, inputs, generator=generator) * 2 - 1) * limit)
            linear.bias.zero_()
        modules.append(linear)
        if hidden:
            modules.append(torch.nn.ReLU())
    return torch.nn.Sequential(*modules).to(dtype)


def optimizer_for(model):
    return torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)


def distributed_model(launch, seed, dtype=torch.float32):
    model = initial_network(seed, dtype).to(launch.device)
    device_ids = [launch.device.index] if launch.device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)


def train_epoch(model, optimizer, images, labels, steps):
    """One epoch: `steps` is [steps, rows] of this rank's indices into the training images."""
    for indices in steps:
        training_step(model, optimizer, images[indices], labels[indices])


@torch.no_grad()
def accuracy(network, images, labels):
    return (network(images).argmax(dim=1) == labels).double().mean().item()


# ---------------------------------------------------------------------------------------
# Check and timing


def check_training(launch, training, global_batch, arguments):
    """`check_steps` data-parallel steps and, on rank 0, as many steps of one process on the
    whole global batches, both in float64; fails unless every parameter agrees."""
    dtype = common.CHECK_DTYPE
    images, labels = training[0].to(launch.device, dtype), training[1].to(launch.device)
    orders = epoch_orders(len(images), global_batch, arguments.epochs, arguments.seed)
    global_steps = orders.flatten(0, 1)[:arguments.check_steps].to(launch.device)
    if len(global_steps) < arguments.check_steps:
        raise AnchorError(f"--check-steps {arguments.check_steps} is more than the "
                          f"{len(global_steps)} steps of {arguments.epochs} epochs")
    model = distributed_model(launch, arguments.seed, dtype)
    optimizer = optimizer_for(model)
    train_epoch(model, optimizer, images, labels, global_steps[:, my_rows(launch, global_batch)])
    message = None
    if launch.is_main:
        reference = initial_network(arguments.seed, dtype).to(launch.device)
        train_epoch(reference, optimizer_for(reference), images, labels, global_steps)
        difference = max(common.relative_difference(mine, theirs)
                         for mine, theirs in zip(model.module.parameters(), reference.parameters()))
        initial = initial_network(arguments.seed, dtype).parameters()
        moved = max(common.relative_difference(after, before)
                    for after, before in zip(reference.parameters(), initial))
        print(f"check: {launch.world_size} process(es), digits, global batch {global_batch}, "
              f"{arguments.check_steps} SGD steps in float64: parameters differ by "
              f"{difference:.2e} relative from one process's (the steps moved them by "
              f"{moved:.2e})", flush=True)
        if not difference <= CHECK_TOLERANCE:
            message = (f"data-parallel training differs from one process's by {difference:.2e}, "
                       f"more than {CHECK_TOLERANCE:g} (relative): the gradients are not "
                       f"averaged over the global batch")
    common.agree_on_failures(launch, message)


def time_training(launch, training, test, global_batch, arguments):
    """(Timing of one epoch, test accuracy of each repeat on rank 0). A repeat trains a fresh
    network for `epochs` epochs; its value is the median of its epochs' times on the slowest
    rank."""
    images, labels = training[0].to(launch.device), training[1].to(launch.device)
    test_images, test_labels = test[0].to(launch.device), test[1].to(launch.device)
    block = my_rows(launch, global_batch)
    # Every epoch's indices are on the device before timing: an epoch times the training.
    orders = epoch_orders(len(images), global_batch, arguments.epochs, arguments.seed)
    my_steps = orders[:, :, block].contiguous().to(launch.device)

    # Warm-up on a throwaway network: `warmup` epochs, and at least common.WARMUP_SECONDS,
    # the same number on every rank (each step holds an all-reduce).
    model = distributed_model(launch, arguments.seed)
    optimizer = optimizer_for(model)
    start_time = time.perf_counter()
    train_epoch(model, optimizer, images, labels, my_steps[0])
    common.synchronize(launch.device)
    first = torch.tensor([time.perf_counter() - start_time], dtype=torch.float64,
                         device=common.collective_device(launch))
    dist.all_reduce(first, op=dist.ReduceOp.MAX)
    more = max(arguments.warmup - 1, math.ceil(common.WARMUP_SECONDS / max(first.item(), 1e-6)) - 1)
    for epoch in range(min(more, common.MAX_WARMUP_RUNS)):
        train_epoch(model, optimizer, images, labels, my_steps[(epoch + 1) % arguments.epochs])
    common.synchronize(launch.device)
    dist.barrier()

    repeat_medians, accuracies = [], []
    for _ in range(arguments.repeats):
        model = distributed_model(launch, arguments.seed)
        optimizer = optimizer_for(model)
        times = []
        for epoch in range(arguments.epochs):
            start_time = time.perf_counter()
            train_epoch(model, optimizer, images, labels, my_steps[epoch])
            common.synchronize(launch.device)
            times.append((time.perf_counter() - start_time) * 1e3)
        slowest = torch.tensor([statistics.median(times)], dtype=torch.float64,
                               device=common.collective_device(launch))
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        repeat_medians.append(slowest.item())
        if launch.is_main:
            accuracies.append(accuracy(model.module, test_images, test_labels))
    return common.Timing(repeat_medians), accuracies


def main(argv):
    arguments = parse_arguments(argv)
    launch = common.start(arguments)
    for global_batch in arguments.batches:
        my_rows(launch, global_batch)  # refuses an uneven split before any work
    images, labels = load_digits(arguments.data)
    training, test = split(images, labels, TEST_FRACTION, SPLIT_SEED)
    depth = len(HIDDEN_SIZES) + 1
    rows_out = []
    for global_batch in arguments.batches:
        if arguments.check:
            check_training(launch, training, global_batch, arguments)
        timing, accuracies = time_training(launch, training, test, global_batch, arguments)
        steps = len(training[0]) // global_batch
        samples_per_second = steps * global_batch / (timing.median / 1e3)
        if launch.is_main:
            test_accuracy = statistics.median(accuracies)
            spread = "" if min(accuracies) == max(accuracies) else \
                f" (repeats {100 * min(accuracies):.1f} … {100 * max(accuracies):.1f} %)"
            print(f"digits {launch.backend}/{launch.device.type} x{launch.world_size} global batch "
                  f"{global_batch} ({global_batch // launch.world_size} per process), {steps} steps "
                  f"per epoch: {timing.median:.3f} ms per epoch (repeats {timing.minimum:.3f} … "
                  f"{timing.maximum:.3f}), {samples_per_second:,.0f} samples/s; test accuracy "
                  f"after {arguments.epochs} epochs {100 * test_accuracy:.1f} %{spread} of "
                  f"{len(test[0])} images", flush=True)
            rows_out.append(["digits", launch.backend, launch.device.type, launch.world_size,
                             HIDDEN_SIZES[0], depth, global_batch, arguments.epochs, steps,
                             common.number(timing.median), common.number(timing.minimum),
                             common.number(timing.maximum), common.number(samples_per_second),
                             common.number(test_accuracy), common.number(min(accuracies)),
                             common.number(max(accuracies))])
    if launch.is_main:
        common.write_csv(
            common.output_path(arguments, launch, "ddp-digits"),
            "Data-parallel training of the digits classifier (64-64-64-10) in PyTorch: one epoch "
            "(forward, backward with gradient all-reduce, SGD with momentum per step)", launch,
            ["mode", "backend", "device", "world_size", "size", "depth", "global_batch", "epochs",
             "steps_per_epoch", "ms_median", "ms_min", "ms_max", "samples_per_s",
             "test_accuracy", "test_accuracy_min", "test_accuracy_max"],
            rows_out)


if __name__ == "__main__":
    common.run_main("ddp_digits.py", main)
