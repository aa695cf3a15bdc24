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


def options(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    return args


def run(name, model, loss_of, batches, args):
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    times, losses = [], []
    for i in range(args.warmup + args.steps):
        batch = batches[i % len(batches)]
        start = time.perf_counter()
        adam.zero_grad(set_to_none=True)
        loss = loss_of(model, batch)
        loss.backward()
        adam.step()
        elapsed = time.perf_counter() - start
        if i >= args.warmup:
            times.append(1e3 * elapsed)
            losses.append(loss.item())
    parameters = sum(p.numel() for p in model.parameters())
    median = statistics.median(times)
    print(f"{name} pytorch: threads={torch.get_num_threads()} params={parameters} "
          f"step median {median:.2f} ms loss {losses[0]:.3f}->{losses[-1]:.3f}", flush=True)
    print("JSON " + json.dumps({"name": name, "engine": "pytorch", "threads": torch.get_num_threads(),
                                "params": parameters, "step_ms_median": median}), flush=True)
