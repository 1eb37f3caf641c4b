"""Pipeline parallelism in PyTorch: the standard-workload MLP cut into one stage per rank.

The `depth` layers are cut into N consecutive stages of (nearly) equal numbers of layers, rank r
holding stage r (torch.distributed.pipelining's manual `PipelineStage`). A batch of B rows goes
through in M micro-batches of B / M rows under the GPipe schedule (`ScheduleGPipe`): every
micro-batch's forward pass, stage after stage, then (when training) every backward pass. With
M = 1 the stages take turns and all but one rank idle; with more micro-batches they overlap, at
the price of more, smaller messages and matrix products.

Timed per batch, for each M in `--microbatches`:
- `pipeline inference`: forward only (`schedule.eval`), input uploaded on rank 0, the softmax
  output read back to host memory on the last rank, like the crate's pipeline runner;
- `pipeline train`: forward, backward and an SGD step of every stage (cross-entropy, the mean
  over each micro-batch; the schedule divides the summed gradients by M, which makes them the
  gradient of the mean over the whole batch);
- `unsplit inference` / `unsplit train`: the same network whole, on rank 0 alone.

Before timing, the last rank checks the pipeline's output against the unsplit network's
(1e-5 relative) and, with `--check`, every rank checks its stage's parameters after one training
step against the unsplit network's after one step on the whole batch. A failure stops every rank
with exit status 1.

One process works too: one stage holding every layer, so that the schedule's own overhead can be
read off against `unsplit` on the same device.

    torchrun --standalone --nproc-per-node 2 pipeline_mlp.py --backend gloo --device cpu --check
"""

import argparse

import common
from common import AnchorError, dist, torch
from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

LEARNING_RATE = 0.01


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_launch_arguments(parser)
    parser.add_argument("--size", type=int, default=1024, help="layer width (default 1024)")
    parser.add_argument("--depth", type=int, default=16, help="linear layers (default 16)")
    parser.add_argument("--batch", type=int, default=1024, help="rows per batch (default 1024)")
    parser.add_argument("--microbatches", type=common.positive_list, default=[1, 2, 4, 8, 16],
                        help="micro-batch counts, comma-separated; each must divide --batch")
    parser.add_argument("--workload", type=common.Path,
                        help="a network the crate exported; replaces --size and --depth")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--check", action="store_true",
                        help="also check every stage's parameters after one training step")
    parser.add_argument("--skip-training", action="store_true", help="time inference only")
    arguments = parser.parse_args(argv)
    common.check_launch_arguments(parser, arguments)
    if arguments.size < 1 or arguments.depth < 1 or arguments.batch < 1:
        parser.error("--size, --depth and --batch must be at least 1")
    uneven = [count for count in arguments.microbatches if arguments.batch % count]
    if uneven:
        parser.error(f"--batch {arguments.batch} does not split into {uneven[0]} equal "
                     f"micro-batches: choose counts that divide it")
    return arguments


def stage_bounds(depth, stages, stage):
    """Layers [first, last) of a stage: consecutive, the first depth % stages stages one longer
    (the crate's split_rows rule, applied to layers)."""
    base, extra = divmod(depth, stages)
    first = stage * base + min(stage, extra)
    return first, first + base + (1 if stage < extra else 0)


def make_stage(launch, layers, for_inference, dtype):
    """This rank's stage module, freshly built from the layers (so every schedule starts from
    the same parameters). The last stage ends with the softmax when it only infers; training
    feeds its logits to the cross-entropy, which applies its own (log-)softmax."""
    first, last = stage_bounds(len(layers), launch.world_size, launch.rank)
    module = common.build_network(layers, first, last, dtype)
    if for_inference and launch.rank == launch.world_size - 1:
        module.append(torch.nn.Softmax(dim=1))
    module = module.to(launch.device)
    stage = PipelineStage(module, launch.rank, launch.world_size, launch.device)
    return module, stage


def cross_entropy(output, target):
    return torch.nn.functional.cross_entropy(output, target)


class Pipeline:
    """One schedule for one micro-batch count: `run()` does one batch on this rank."""

    def __init__(self, launch, layers, microbatches, training, host_inputs, labels,
                 dtype=torch.float32):
        self.launch = launch
        self.training = training
        self.module, stage = make_stage(launch, layers, not training, dtype)
        self.schedule = ScheduleGPipe(stage, microbatches,
                                      loss_fn=cross_entropy if training else None)
        self.optimizer = torch.optim.SGD(self.module.parameters(), lr=LEARNING_RATE)
        self.host_inputs = host_inputs if host_inputs.dtype == dtype else host_inputs.to(dtype)
        self.labels = labels.to(launch.device)
        self.is_first = launch.rank == 0
        self.is_last = launch.rank == launch.world_size - 1

    def run(self):
        inputs = ()
        if self.is_first:
            inputs = (self.host_inputs.to(self.launch.device, non_blocking=True),)
        if self.training:
            self.optimizer.zero_grad(set_to_none=True)
            target = self.labels if self.is_last else None
            self.schedule.step(*inputs, target=target)
            self.optimizer.step()
            return None
        with torch.no_grad():
            output = self.schedule.eval(*inputs)
        return output.cpu() if self.is_last else None


def unsplit_runs(launch, layers, host_inputs, labels):
    """The whole network on rank 0: (inference run, training step); other ranks do nothing."""
    if launch.rank != 0:
        return (lambda: None), (lambda: None)
    model = common.build_network(layers).to(launch.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    device_labels = labels.to(launch.device)

    @torch.no_grad()
    def infer():
        return torch.softmax(model(host_inputs.to(launch.device, non_blocking=True)), dim=1).cpu()

    def train():
        optimizer.zero_grad(set_to_none=True)
        inputs = host_inputs.to(launch.device, non_blocking=True)
        cross_entropy(model(inputs), device_labels).backward()
        optimizer.step()

    return infer, train


def check_inference(launch, pipeline, layers, host_inputs, microbatches):
    output = pipeline.run()
    message = None
    if pipeline.is_last:
        expected = common.exact_output(layers, host_inputs, launch.device)
        difference = common.relative_difference(output, expected)
        print(f"check: {launch.world_size} stage(s), {microbatches} micro-batch(es): output "
              f"differs from the unsplit float64 network's by {difference:.2e} (relative)",
              flush=True)
        if not difference <= common.FORWARD_TOLERANCE:
            message = (f"the pipeline's output differs from the unsplit network's by "
                       f"{difference:.2e}, more than {common.FORWARD_TOLERANCE:g}")
    common.agree_on_failures(launch, message)


def check_training(launch, layers, host_inputs, labels, microbatches):
    """One pipeline training step against one unsplit step on the whole batch, per stage, both
    in float64 (common.TRAINING_TOLERANCE says why)."""
    dtype = common.CHECK_DTYPE
    pipeline = Pipeline(launch, layers, microbatches, True, host_inputs, labels, dtype)
    pipeline.run()
    reference = common.build_network(layers, dtype=dtype).to(launch.device)
    optimizer = torch.optim.SGD(reference.parameters(), lr=LEARNING_RATE)
    cross_entropy(reference(host_inputs.to(launch.device, dtype)),
                  labels.to(launch.device)).backward()
    optimizer.step()
    first, last = stage_bounds(len(layers), launch.world_size, launch.rank)
    reference_linears = [module for module in reference if isinstance(module, torch.nn.Linear)]
    stage_linears = [module for module in pipeline.module if isinstance(module, torch.nn.Linear)]
    difference = 0.0
    for mine, theirs in zip(stage_linears, reference_linears[first:last]):
        for parameter, expected in ((mine.weight, theirs.weight), (mine.bias, theirs.bias)):
            difference = max(difference, common.relative_difference(parameter, expected))
    print(f"check: stage {launch.rank} (layers {first}..{last - 1}), {microbatches} "
          f"micro-batch(es): parameters after one float64 step differ by {difference:.2e} (relative)",
          flush=True)
    message = None
    if not difference <= common.TRAINING_TOLERANCE:
        message = (f"stage {launch.rank}'s parameters after one training step differ from the "
                   f"unsplit network's by {difference:.2e}, more than "
                   f"{common.TRAINING_TOLERANCE:g}")
    common.agree_on_failures(launch, message)


def main(argv):
    arguments = parse_arguments(argv)
    launch = common.start(arguments)
    if arguments.workload:
        size, layers = common.workload_layers(arguments.workload)
    else:
        size = arguments.size
        layers = common.seeded_layers(size, arguments.depth, arguments.seed)
    depth = len(layers)
    if depth < launch.world_size:
        raise AnchorError(f"{depth} layers cannot make {launch.world_size} stages")
    host_inputs, labels = common.synthetic_batch(arguments.batch, size, arguments.seed + 1)
    if launch.device.type == "cuda":
        host_inputs = host_inputs.pin_memory()

    results = []  # (mode, series, microbatches, timing)

    def measure(mode, series, microbatches, run):
        # Nothing else makes rank 0 wait for the last stage: without the barrier rank 0 would
        # start the next batch while rank 1 still works on this one, and the time per batch
        # would be that of the slowest stage, not of one batch going through every stage.
        def one_batch():
            run()
            dist.barrier()

        timing = common.time_runs(one_batch, launch, arguments.warmup, arguments.iterations,
                                  arguments.repeats)
        if launch.is_main:
            print(f"{series} {mode} x{launch.world_size} size {size} depth {depth} batch "
                  f"{arguments.batch} micro-batches {microbatches}: {timing.median:.3f} ms "
                  f"(repeats {timing.minimum:.3f} … {timing.maximum:.3f})", flush=True)
        results.append((mode, series, microbatches, timing))

    modes = ["inference"] if arguments.skip_training else ["inference", "train"]
    infer, train = unsplit_runs(launch, layers, host_inputs, labels)
    measure("inference", "unsplit", 1, infer)
    if not arguments.skip_training:
        measure("train", "unsplit", 1, train)
    for microbatches in arguments.microbatches:
        for mode in modes:
            training = mode == "train"
            if training and arguments.check:
                check_training(launch, layers, host_inputs, labels, microbatches)
            pipeline = Pipeline(launch, layers, microbatches, training, host_inputs, labels)
            if not training:
                check_inference(launch, pipeline, layers, host_inputs, microbatches)
            measure(mode, "pipeline", microbatches, pipeline.run)

    if launch.is_main:
        rows = [[mode, series, launch.backend, launch.device.type, launch.world_size, size, depth,
                 arguments.batch, microbatches, common.number(timing.median),
                 common.number(timing.minimum), common.number(timing.maximum),
                 common.number(arguments.batch / (timing.median / 1e3))]
                for mode, series, microbatches, timing in results]
        common.write_csv(common.output_path(arguments, launch, "pipeline"),
                         "Pipeline-parallel MLP in PyTorch (GPipe): time per batch by micro-batch "
                         "count, and the unsplit network on one rank", launch,
                         ["mode", "series", "backend", "device", "world_size", "size", "depth",
                          "batch", "microbatches", "ms_median", "ms_min", "ms_max",
                          "samples_per_s"], rows)


if __name__ == "__main__":
    common.run_main("pipeline_mlp.py", main)
