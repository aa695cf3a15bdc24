#!/usr/bin/python3
"""REF-TRANSFORMER in PyTorch: the twin of bench/ref_transformer_bench.cpp (same shapes, same steps).

--batch and --length change the shape, as in the twin (--length also sets the learned positions)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import options, run

VOCAB, MODEL, HEADS, LAYERS, FEED_FORWARD = 32, 64, 4, 2, 256
SHAPE = (("batch", 32), ("length", 32))  # the reference shape
HEAD = MODEL // HEADS


class Block(nn.Module):
    """A pre-norm Transformer layer: x + attention(norm1(x)), then x + ffn(norm2(x))."""

    def __init__(self, length):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(MODEL), nn.LayerNorm(MODEL)
        self.in_proj = nn.Linear(MODEL, 3 * MODEL)  # queries, keys and values of all heads
        self.out_proj = nn.Linear(MODEL, MODEL)
        self.linear1, self.linear2 = nn.Linear(MODEL, FEED_FORWARD), nn.Linear(FEED_FORWARD, MODEL)
        future = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
        self.register_buffer("future", future)

    def attention(self, x):
        b, t, _ = x.shape
        heads = self.in_proj(x).view(b, t, 3, HEADS, HEAD).permute(2, 0, 3, 1, 4)  # [3, B, H, T, d]
        q, k, v = heads[0], heads[1], heads[2]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(HEAD)
        weights = scores.masked_fill(self.future[:t, :t], float("-inf")).softmax(-1)
        context = (weights @ v).transpose(1, 2).reshape(b, t, MODEL)
        return self.out_proj(context)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.linear2(F.gelu(self.linear1(self.norm2(x))))


class Gpt(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, MODEL)
        self.pos = nn.Parameter(0.02 * torch.randn(length, MODEL))  # learned positions, as GPT-2
        self.blocks = nn.Sequential(*[Block(length) for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(MODEL)
        self.head = nn.Linear(MODEL, VOCAB)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        return self.head(self.ln_f(self.blocks(x)))


def main():
    args = options(__doc__, SHAPE)
    batch_size, length = args.batch, args.length
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(8):
        sequence = torch.randint(0, VOCAB, (batch_size, length + 1), generator=g)
        batches.append((sequence[:, :-1].contiguous(), sequence[:, 1:].contiguous()))

    def loss_of(model, batch):
        inputs, targets = batch
        return F.cross_entropy(model(inputs).reshape(-1, VOCAB), targets.reshape(-1))

    run("REF-TRANSFORMER", Gpt(length), loss_of, batches, args, (("batch", batch_size), ("length", length)))


if __name__ == "__main__":
    main()
