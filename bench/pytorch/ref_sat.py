#!/usr/bin/python3
"""REF-SAT in PyTorch: the twin of bench/ref_sat_bench.cpp (same shapes, same steps)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import options, run

VOCAB, EMBEDDING, HIDDEN, ATTENTION, FEATURES, STEPS, BATCH, LAMBDA = 24, 32, 128, 64, 64, 8, 32, 1.0


class ShowAttendTell(nn.Module):
    def __init__(self):
        super().__init__()
        layers = []
        for c_in, c_out in [(3, 32), (32, 64), (64, FEATURES)]:
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
        self.cnn = nn.Sequential(*layers)
        self.emb = nn.Embedding(VOCAB, EMBEDDING)
        self.init_h = nn.Linear(FEATURES, HIDDEN)
        self.init_c = nn.Linear(FEATURES, HIDDEN)
        self.w_a = nn.Linear(FEATURES, ATTENTION)
        self.w_h = nn.Linear(HIDDEN, ATTENTION, bias=False)
        self.v = nn.Linear(ATTENTION, 1, bias=False)
        self.f_beta = nn.Linear(HIDDEN, 1)
        self.cell = nn.LSTMCell(EMBEDDING + FEATURES, HIDDEN)
        self.l_h = nn.Linear(HIDDEN, EMBEDDING)
        self.l_z = nn.Linear(FEATURES, EMBEDDING)
        self.l_o = nn.Linear(EMBEDDING, VOCAB)

    def forward(self, images, captions_in):
        a = self.cnn(images).flatten(2).transpose(1, 2)
        mean_region = a.mean(1)
        h, c = torch.tanh(self.init_h(mean_region)), torch.tanh(self.init_c(mean_region))
        keys = self.w_a(a)
        words = self.emb(captions_in)
        logits, alphas = [], []
        for t in range(captions_in.shape[1]):
            scores = self.v(torch.tanh(keys + self.w_h(h).unsqueeze(1))).squeeze(-1)
            alpha = torch.softmax(scores, -1)
            z = torch.sigmoid(self.f_beta(h)) * torch.bmm(alpha.unsqueeze(1), a).squeeze(1)
            y = words[:, t]
            h, c = self.cell(torch.cat([y, z], -1), (h, c))
            logits.append(self.l_o(y + self.l_h(h) + self.l_z(z)))
            alphas.append(alpha)
        return torch.stack(logits, 1), torch.stack(alphas, 1)


def main():
    args = options(__doc__)
    g = torch.Generator().manual_seed(1)
    batches = []
    for _ in range(4):
        images = torch.randn(BATCH, 3, 64, 64, generator=g)
        captions = torch.randint(1, VOCAB, (BATCH, STEPS), generator=g)
        captions_in = torch.cat([torch.zeros(BATCH, 1, dtype=torch.long), captions[:, :-1]], 1)
        batches.append((images, captions_in, captions))

    def loss_of(model, batch):
        images, captions_in, captions = batch
        logits, alphas = model(images, captions_in)
        ce = F.cross_entropy(logits.reshape(-1, VOCAB), captions.reshape(-1))
        coverage = ((1.0 - alphas.sum(1)) ** 2).sum(1).mean()
        return ce + LAMBDA * coverage

    run("REF-SAT", ShowAttendTell(), loss_of, batches, args)


if __name__ == "__main__":
    main()
