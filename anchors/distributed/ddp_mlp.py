"""Data parallelism in PyTorch: the standard-workload MLP trained with DistributedDataParallel.

Every process (rank) holds the whole network; a global batch of B rows is cut into one block of
B / N consecutive rows per rank; each rank computes the loss and gradients of its block, DDP
averages the gradients over the ranks (an all-reduce through gloo or NCCL), and every rank takes
the same SGD step. Timed: one training step (forward, backward with the all-reduce, SGD update),
for each width and global batch; samples/s is B divided by that time.

`--inference` times the forward pass instead, like the crate's data-parallel runner: weights
replicated, the rows of the input split across the ranks, and the outputs gathered back in the
input's order.

`--check` first proves the training is the one a single process would do: after `--check-steps`
steps, rank 0 compares the parameters with a plain, unsplit network it trains itself on the
whole global batch (exit status 1 when they differ by more than 1e-5, relative).

    torchrun --standalone --nproc-per-node 2 ddp_mlp.py --backend gloo --device cpu --check
"""

import argparse

import common
from common import AnchorError, dist, torch

CHECK_TOLERANCE = common.TRAINING_TOLERANCE
LEARNING_RATE = 0.01


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_launch_arguments(parser)
    parser.add_argument("--sizes", type=common.positive_list, default=[256, 1024],
                        help="layer widths, comma-separated (default 256,1024)")
    parser.add_argument("--depth", type=int, default=16, help="linear layers (default 16)")
    parser.add_argument("--batches", type=common.positive_list, default=[256, 1024, 4096],
                        help="global batch sizes in rows, comma-separated; each must divide "
                             "evenly by the number of processes")
    parser.add_argument("--workload", type=common.Path,
                        help="a network the crate exported (mlp-SIZExDEPTH.bin); replaces --sizes "
                             "and --depth")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--inference", action="store_true",
                        help="time the forward pass with the rows split across ranks, not training")
    parser.add_argument("--check", action="store_true",
                        help="before timing, compare the trained parameters with one process's "
                             "(once per network, on the smallest batch)")
    parser.add_argument("--check-steps", type=int, default=3, help="training steps the check takes")
    arguments = parser.parse_args(argv)
    common.check_launch_arguments(parser, arguments)
    if arguments.depth < 1 or arguments.check_steps < 1:
        parser.error("--depth and --check-steps must be at least 1")
    return arguments


def networks(arguments):
    """[(size, layers)] to run: the exported workload, or the seeded shape at each width."""
    if arguments.workload:
        size, layers = common.workload_layers(arguments.workload)
        return [(size, layers)]
    return [(size, common.seeded_layers(size, arguments.depth, arguments.seed))
            for size in arguments.sizes]


def my_rows(launch, rows):
    """This rank's block of consecutive rows; every rank gets the same number."""
    if rows % launch.world_size:
        raise AnchorError(f"a global batch of {rows} rows does not split evenly over "
                          f"{launch.world_size} processes: choose batches divisible by it")
    share = rows // launch.world_size
    return slice(launch.rank * share, (launch.rank + 1) * share)


def training_step(model, optimizer, inputs, labels):
    # The loss is the mean over this rank's rows. DDP averages the ranks' gradients, and the
    # average of N equal-sized blocks' means is the mean over the global batch: so N processes
    # take exactly the step one process would take on all B rows.
    optimizer.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()


def distributed_model(launch, layers, dtype=torch.float32):
    model = common.build_network(layers, dtype=dtype).to(launch.device)
    # DDP broadcasts rank 0's parameters at construction; they are equal anyway (same seed).
    device_ids = [launch.device.index] if launch.device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)


def check_training(launch, layers, rows, arguments):
    """Trains `check_steps` steps data-parallel and, on rank 0, one process on the whole
    batch, both in float64 (common.TRAINING_TOLERANCE says why); fails unless every parameter
    agrees."""
    size = layers[0][0].shape[0]
    dtype = common.CHECK_DTYPE
    inputs, labels = common.synthetic_batch(rows, size, arguments.seed + 1)
    inputs = inputs.to(dtype)
    block = my_rows(launch, rows)
    model = distributed_model(launch, layers, dtype)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    local_inputs, local_labels = inputs[block].to(launch.device), labels[block].to(launch.device)
    for _ in range(arguments.check_steps):
        training_step(model, optimizer, local_inputs, local_labels)
    message = None
    if launch.is_main:
        reference = common.build_network(layers, dtype=dtype).to(launch.device)
        reference_optimizer = torch.optim.SGD(reference.parameters(), lr=LEARNING_RATE)
        all_inputs, all_labels = inputs.to(launch.device), labels.to(launch.device)
        for _ in range(arguments.check_steps):
            training_step(reference, reference_optimizer, all_inputs, all_labels)
        difference = max(common.relative_difference(mine, theirs)
                         for mine, theirs in zip(model.module.parameters(), reference.parameters()))
        initial = common.build_network(layers, dtype=dtype).parameters()
        moved = max(common.relative_difference(after, before)
                    for after, before in zip(reference.parameters(), initial))
        print(f"check: {launch.world_size} process(es), size {size}, batch {rows}, "
              f"{arguments.check_steps} SGD steps in float64: parameters differ by "
              f"{difference:.2e} relative from one process's (the steps moved them by {moved:.2e})", flush=True)
        if not difference <= CHECK_TOLERANCE:
            message = (f"data-parallel training differs from one process's by more than "
                       f"{CHECK_TOLERANCE:g} (relative): the gradients are not averaged "
                       f"over the global batch")
    common.agree_on_failures(launch, message)


def time_training(launch, layers, rows, arguments):
    size = layers[0][0].shape[0]
    inputs, labels = common.synthetic_batch(rows, size, arguments.seed + 1)
    block = my_rows(launch, rows)
    model = distributed_model(launch, layers)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    # The batch stays on the device: this times the step, not loading data.
    local_inputs, local_labels = inputs[block].to(launch.device), labels[block].to(launch.device)
    return common.time_runs(lambda: training_step(model, optimizer, local_inputs, local_labels),
                            launch, arguments.warmup, arguments.iterations, arguments.repeats)


def time_inference(launch, layers, rows, arguments):
    """One run: this rank's rows from host memory to its device, the whole network on them,
    and every rank's outputs gathered in the input's order (then to host memory on rank 0),
    as the crate's data-parallel runner stacks its devices' results."""
    size = layers[0][0].shape[0]
    inputs, _ = common.synthetic_batch(rows, size, arguments.seed + 1)
    block = my_rows(launch, rows)
    model = common.build_network(layers).to(launch.device).eval()
    host_block = inputs[block].contiguous()
    if launch.device.type == "cuda":
        host_block = host_block.pin_memory()
    gathered = [torch.empty(host_block.shape, device=launch.device)
                for _ in range(launch.world_size)]

    @torch.no_grad()
    def run_once():
        local = torch.softmax(model(host_block.to(launch.device, non_blocking=True)), dim=1)
        dist.all_gather(gathered, local)
        return torch.cat(gathered).cpu() if launch.is_main else None

    # The split must not change the answer: rank 0 compares with the unsplit network.
    output = run_once()
    message = None
    if launch.is_main:
        expected = common.exact_output(layers, inputs, launch.device)
        difference = common.relative_difference(output, expected)
        print(f"check: {launch.world_size} process(es), size {size}, batch {rows}: gathered "
              f"output differs from the unsplit float64 network's by {difference:.2e}", flush=True)
        if not difference <= common.FORWARD_TOLERANCE:
            message = (f"the gathered outputs differ from the unsplit network's by "
                       f"{difference:.2e}, more than {common.FORWARD_TOLERANCE:g} (relative)")
    common.agree_on_failures(launch, message)
    return common.time_runs(run_once, launch, arguments.warmup, arguments.iterations,
                            arguments.repeats)


def main(argv):
    arguments = parse_arguments(argv)
    launch = common.start(arguments)
    mode = "inference" if arguments.inference else "train"
    for rows in arguments.batches:
        my_rows(launch, rows)  # refuses an uneven split before any work
    rows_out = []
    for size, layers in networks(arguments):
        depth = len(layers)
        for rows in arguments.batches:
            # One training check per network, on its smallest batch: a larger batch checks
            # nothing more and costs more (in float64, on rank 0 alone).
            if arguments.check and not arguments.inference and rows == min(arguments.batches):
                check_training(launch, layers, rows, arguments)
            timer = time_inference if arguments.inference else time_training
            timing = timer(launch, layers, rows, arguments)
            samples_per_second = rows / (timing.median / 1e3)
            if launch.is_main:
                print(f"{mode} {launch.backend}/{launch.device.type} x{launch.world_size} "
                      f"size {size} depth {depth} batch {rows}: {timing.median:.3f} ms "
                      f"(repeats {timing.minimum:.3f} … {timing.maximum:.3f}), "
                      f"{samples_per_second:,.0f} samples/s", flush=True)
            rows_out.append([mode, launch.backend, launch.device.type, launch.world_size, size,
                             depth, rows, common.number(timing.median),
                             common.number(timing.minimum), common.number(timing.maximum),
                             common.number(samples_per_second)])
    if launch.is_main:
        what = "forward pass, rows split across processes" if arguments.inference else \
            "training step (forward, backward with gradient all-reduce, SGD)"
        common.write_csv(common.output_path(arguments, launch, f"ddp-{mode}"),
                         f"Data-parallel MLP in PyTorch: {what}", launch,
                         ["mode", "backend", "device", "world_size", "size", "depth",
                          "global_batch", "ms_median", "ms_min", "ms_max", "samples_per_s"],
                         rows_out)


if __name__ == "__main__":
    common.run_main("ddp_mlp.py", main)
