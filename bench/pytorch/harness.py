"""Timing harness for the PyTorch versions of attend's reference workloads.

Each script builds the same model as its C++ twin in bench/ (ref_*_bench.cpp), times
--steps training steps (zero_grad + forward + loss + backward + Adam) after --warmup ones,
and prints a summary line and a JSON line with the median step time, like the C++ side.
Run them with Debian's interpreter, /usr/bin/python3, which sees python3-torch.
"""
import argparse
import json
import statistics
import sys
import time

try:
    import torch
except ImportError:
    sys.exit("torch is not importable: apt-get install python3-torch, and run /usr/bin/python3")


def int_flag(low, high=None):
    """An argparse type: an integer in [low, high], else one line naming the allowed range."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer")
        if value < low or (high is not None and value > high):
            allowed = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range (it must be {allowed})")
        return value
    return parse


def options(description, shape=()):
    """Parses --threads --steps --warmup, and the workload's shape flags: (name, default) pairs,
    each an integer from 1 to 1024 as in the C++ twin (e.g. ("batch", 64))."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int_flag(1, 256), default=1)
    parser.add_argument("--steps", type=int_flag(1), default=50)
    parser.add_argument("--warmup", type=int_flag(0), default=10)
    for name, default in shape:
        parser.add_argument("--" + name.replace("_", "-"), type=int_flag(1, 1024), default=default,
                            help=f"default {default}")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    return args


def run(name, model, loss_of, batches, args, shape=()):
    """Times the steps; shape: (name, value) pairs printed in the summary and the JSON line."""
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    times, cpu_times, losses = [], [], []
    for i in range(args.warmup + args.steps):
        batch = batches[i % len(batches)]
        cpu_start, start = time.process_time(), time.perf_counter()
        adam.zero_grad(set_to_none=True)
        loss = loss_of(model, batch)
        loss.backward()
        adam.step()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if i >= args.warmup:
            times.append(1e3 * elapsed)
            cpu_times.append(1e3 * cpu)  # the whole process's CPU time, as the C++ harness
            losses.append(loss.item())
    parameters = sum(p.numel() for p in model.parameters())
    median, cpu_median = statistics.median(times), statistics.median(cpu_times)
    shape_text = "".join(f" {key}={value}" for key, value in shape)
    print(f"{name} pytorch: threads={torch.get_num_threads()} params={parameters}{shape_text} "
          f"step median {median:.2f} ms (CPU time {cpu_median:.2f} ms) "
          f"loss {losses[0]:.3f}->{losses[-1]:.3f}", flush=True)
    print("JSON " + json.dumps({"name": name, "engine": "pytorch", "threads": torch.get_num_threads(),
                                "params": parameters, "step_ms_median": median,
                                "step_cpu_ms_median": cpu_median, **dict(shape)}),
          flush=True)
