// What every dates section measures with: greedy decoding of the test dates under whatever
// hooks are set, a decoding's scores, maps read back per example, and a set of maps scored
// against the true source spans.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "dates.h"

namespace attend::lesson13 {
namespace {

// The rows of the test dates [start, end).
std::vector<std::size_t> rows_between(std::size_t start, std::size_t end) {
  std::vector<std::size_t> rows;
  for (std::size_t i = start; i < end; ++i) rows.push_back(i);
  return rows;
}

}  // namespace

std::vector<Decoded> decode_test_dates(DatesModel& m, const BatchStart& on_batch) {
  std::vector<Decoded> out;
  const std::size_t n = m.task.test.size(), step = static_cast<std::size_t>(kDecodeBatch);
  for (std::size_t start = 0; start < n; start += step) {
    const seq::Batch batch =
        seq::date_batch(m.task, m.task.test, rows_between(start, std::min(n, start + step)));
    if (on_batch) on_batch(batch.source_mask.data());
    for (Decoded& d :
         seq::greedy_decode(*m.model, batch.source, batch.source_mask, seq::kMaxDateLength))
      out.push_back(std::move(d));
  }
  return out;
}

seq::Batch decoded_batch(const DatesModel& m, const std::vector<Decoded>& decoded,
                         std::size_t start, std::size_t end) {
  std::vector<seq::TokenIds> sources, outputs;
  for (std::size_t i = start; i < end; ++i) {
    sources.push_back(m.task.source_vocabulary.encode_characters(m.task.test[i].input));
    outputs.push_back(decoded[i].tokens);
  }
  return seq::make_batch(sources, outputs);
}

NDArray example_maps(const Tensor& weights, Index b, Index rows, Index keys) {
  const NDArray w = weights.data();  // [B, H, Tq, Tk]
  const NDArray one = slice(w, 0, b, b + 1).reshape({w.size(1), w.size(2), w.size(3)});
  return slice(slice(one, 1, 0, rows), 2, 0, keys).to(kFloat64);
}

Rows matrix_rows(const NDArray& matrix) {
  const NDArray m = matrix.to(kFloat64);
  const Index columns = m.size(1);
  Rows rows;
  for (Index i = 0; i < m.size(0); ++i) {
    const double* p = m.data<double>() + i * columns;
    rows.emplace_back(p, p + columns);
  }
  return rows;
}

namespace {

// Appends row q of every date's head-mean weights w [B, H, Tq, S] to maps[first + b].
void record(const Tensor& weights, std::size_t first, MapSet& maps) {
  const NDArray w = weights.data().to(kFloat64);
  const Index B = w.size(0), H = w.size(1), Tq = w.size(2), S = w.size(3);
  for (Index b = 0; b < B; ++b)
    for (Index q = 0; q < Tq; ++q) {
      std::vector<double> mean(static_cast<std::size_t>(S), 0.0);
      for (Index h = 0; h < H; ++h)
        for (Index j = 0; j < S; ++j)
          mean[static_cast<std::size_t>(j)] += w.data<double>()[((b * H + h) * Tq + q) * S + j] / H;
      maps[first + static_cast<std::size_t>(b)].push_back(std::move(mean));
    }
}

}  // namespace

DecodingScore decode_and_score(DatesModel& m, const BatchStart& on_batch, bool with_alignment) {
  const std::size_t L = m.model->decoder_layers.size();
  std::vector<MapSet> maps(L, MapSet(m.task.test.size()));
  std::vector<nn::MultiheadAttention::WeightsHook> saved(L);
  std::size_t first = 0, next = 0;  // the test dates of the batch being decoded
  for (std::size_t l = 0; with_alignment && l < L; ++l) {
    nn::MultiheadAttention& cross = m.model->decoder_layers[l]->multihead_attn;
    saved[l] = cross.weights_hook;
    cross.weights_hook = [&, l](const Tensor& w) {
      const Tensor used = saved[l] ? saved[l](w) : w;
      record(used, first, maps[l]);
      return used;
    };
  }
  const std::vector<Decoded> decoded = decode_test_dates(m, [&](const NDArray& mask) {
    first = next;
    next += static_cast<std::size_t>(mask.size(0));
    if (on_batch) on_batch(mask);
  });
  for (std::size_t l = 0; with_alignment && l < L; ++l)
    m.model->decoder_layers[l]->multihead_attn.weights_hook = saved[l];

  DecodingScore s;
  const std::vector<std::string> outputs = seq::date_strings(m.task, decoded);
  s.exact_match = seq::exact_match(m.task.test, outputs);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < outputs.size() && i < m.outputs.size(); ++i)
    changed += outputs[i] != m.outputs[i];
  s.changed = static_cast<double>(changed) / static_cast<double>(outputs.size());
  for (MapSet& layer : maps) {
    // A batch runs until its last date ends: keep each date's own steps, as decoding does.
    for (std::size_t i = 0; i < decoded.size(); ++i) layer[i].resize(decoded[i].weights.size());
    s.alignment.push_back(interpret::alignment_accuracy(m.task.test, layer).accuracy());
  }
  if (!with_alignment) s.alignment.clear();
  return s;
}

MapScore score_maps(const std::vector<data::DateExample>& examples, const MapSet& maps) {
  MapScore s;
  s.alignment = interpret::alignment_accuracy(examples, maps).accuracy();
  double mass = 0;
  int digits = 0;
  for (std::size_t e = 0; e < examples.size(); ++e)
    for (std::size_t i = 0; i < examples[e].source.size(); ++i) {
      const data::Span& span = examples[e].source[i];
      if (span.empty()) continue;  // a '-'
      ++digits;
      if (i >= maps[e].size()) continue;  // not produced: no mass inside
      double inside = 0, total = 0;
      for (std::size_t j = 0; j < maps[e][i].size(); ++j) {
        total += maps[e][i][j];
        if (span.contains(static_cast<int>(j))) inside += maps[e][i][j];
      }
      if (total > 0) mass += inside / total;
    }
  s.mass = digits > 0 ? mass / digits : 0.0;
  return s;
}

std::string kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::kEncoderSelf:
      return "encoder self";
    case AttentionKind::kDecoderSelf:
      return "decoder self";
    case AttentionKind::kCross:
      return "cross";
  }
  return "?";
}

nn::MultiheadAttention& attention_module(seq::TransformerSeq2Seq& model, AttentionKind kind,
                                         Index layer) {
  const auto l = static_cast<std::size_t>(layer);
  if (kind == AttentionKind::kEncoderSelf) return model.encoder_layers.at(l)->self_attn;
  if (kind == AttentionKind::kDecoderSelf) return model.decoder_layers.at(l)->self_attn;
  return model.decoder_layers.at(l)->multihead_attn;
}

void clear_hooks(seq::TransformerSeq2Seq& model) {
  for (auto& layer : model.encoder_layers) layer->self_attn.weights_hook = nullptr;
  for (auto& layer : model.decoder_layers) {
    layer->self_attn.weights_hook = nullptr;
    layer->multihead_attn.weights_hook = nullptr;
  }
}

void progress(const Options& o, const std::string& what, std::size_t done, std::size_t total,
              double seconds) {
  if (!o.progress) return;
  std::fputs(fmt::format("  {}: {}/{} ({:.0f} s)\n", what, done, total, seconds).c_str(), stderr);
}

}  // namespace attend::lesson13
