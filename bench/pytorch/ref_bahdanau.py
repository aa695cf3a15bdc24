#!/usr/bin/python3
"""REF-BAHDANAU in PyTorch: the twin of bench/ref_bahdanau_bench.cpp (same shapes, same steps).

--batch, --source-length and --target-length change the shape of the batches, as in the twin."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import options, run

SRC_VOCAB, TGT_VOCAB, EMBEDDING, HIDDEN, ATTENTION = 40, 16, 32, 64, 64
SHAPE = (("batch", 64), ("source_length", 25), ("target_length", 12))  # the reference shape


class Seq2SeqAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.src_emb = nn.Embedding(SRC_VOCAB, EMBEDDING)
        self.tgt_emb = nn.Embedding(TGT_VOCAB, EMBEDDING)
        self.encoder = nn.GRU(EMBEDDING, HIDDEN, batch_first=True, bidirectional=True)
        self.init = nn.Linear(2 * HIDDEN, HIDDEN)
        self.w_q = nn.Linear(HIDDEN, ATTENTION, bias=False)
        self.w_k = nn.Linear(2 * HIDDEN, ATTENTION)
        self.v = nn.Linear(ATTENTION, 1, bias=False)
        self.cell = nn.GRUCell(EMBEDDING + 2 * HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN + 2 * HIDDEN + EMBEDDING, TGT_VOCAB)

    def forward(self, src, tgt_in):
        annotations, h_n = self.encoder(self.src_emb(src))
        s = torch.tanh(self.init(torch.cat([h_n[0], h_n[1]], -1)))
        keys = self.w_k(annotations)
        embedded = self.tgt_emb(tgt_in)
        logits = []
        for t in range(tgt_in.shape[1]):
            scores = self.v(torch.tanh(keys + self.w_q(s).unsqueeze(1))).squeeze(-1)
            alpha = torch.softmax(scores, -1)
            context = torch.bmm(alpha.unsqueeze(1), annotations).squeeze(1)
            y = embedded[:, t]
            s = self.cell(torch.cat([y, context], -1), s)
            logits.append(self.out(torch.cat([s, context, y], -1)))
        return torch.stack(logits, 1)


def main():
    args = options(__doc__, SHAPE)
    batch_size, src_len, tgt_len = args.batch, args.source_length, args.target_length
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(8):
        src = torch.randint(0, SRC_VOCAB, (batch_size, src_len), generator=g)
        tgt = torch.randint(1, TGT_VOCAB, (batch_size, tgt_len), generator=g)
        tgt_in = torch.cat([torch.zeros(batch_size, 1, dtype=torch.long), tgt[:, :-1]], 1)
        batches.append((src, tgt_in, tgt))

    def loss_of(model, batch):
        src, tgt_in, tgt = batch
        return F.cross_entropy(model(src, tgt_in).reshape(-1, TGT_VOCAB), tgt.reshape(-1))

    run("REF-BAHDANAU", Seq2SeqAttention(), loss_of, batches, args,
        (("batch", batch_size), ("source_length", src_len), ("target_length", tgt_len)))


if __name__ == "__main__":
    main()
