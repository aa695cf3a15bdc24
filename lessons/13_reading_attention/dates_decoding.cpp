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

DecodingScore score_decoding(DatesModel& m, const std::vector<Decoded>& decoded,
                             const BatchStart& on_batch, bool with_alignment) {
  DecodingScore s;
  const std::vector<std::string> outputs = seq::date_strings(m.task, decoded);
  s.exact_match = seq::exact_match(m.task.test, outputs);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < outputs.size() && i < m.outputs.size(); ++i)
    changed += outputs[i] != m.outputs[i];
  s.changed = static_cast<double>(changed) / static_cast<double>(outputs.size());
  if (!with_alignment) return s;

  // Every decoder layer's cross-attention, heads averaged, read back with the same hooks.
  const std::size_t L = m.model->decoder_layers.size(), n = decoded.size();
  std::vector<MapSet> maps(L);
  for (std::size_t start = 0; start < n; start += static_cast<std::size_t>(kDecodeBatch)) {
    const std::size_t end = std::min(n, start + static_cast<std::size_t>(kDecodeBatch));
    const seq::Batch batch = decoded_batch(m, decoded, start, end);
    if (on_batch) on_batch(batch.source_mask.data());
    const seq::TransformerAttention a =
        m.model->attention_maps(batch.source, batch.source_mask, batch.decoder_input);
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t i = start; i < end; ++i) {
        const Index rows = static_cast<Index>(decoded[i].weights.size());
        const NDArray w =
            example_maps(a.cross[l], static_cast<Index>(i - start), rows, batch.source.size(1));
        maps[l].push_back(matrix_rows(interpret::head_mean(w)));
      }
  }
  for (const MapSet& layer : maps)
    s.alignment.push_back(interpret::alignment_accuracy(m.task.test, layer).accuracy());
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
