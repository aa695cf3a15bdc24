// Lesson 12: a character-level GPT on a real book. What main.cpp runs, in the order of the
// chapter (docs/12_gpt.md), one file each:
//
//   model.cpp       the GPT (decoder-only, pre-norm), the GRU language model it is compared
//                   with, the attention-only model of the induction task
//   training.cpp    training for a time budget, validation loss in nats and bits per character
//   baselines.cpp   unigram and bigram count models
//   generate.cpp    sampling with temperature and top-k, with and without the key/value cache
//   heads.cpp       what the heads do: shares of attention by kind of key, the layer x head grid
//   induction.cpp   the induction-heads task: repeated random sequences, 2 attention-only layers
//
// The book, its folding to ASCII, the vocabulary and the windows come from the library
// (nn/data/text_corpus.h); multi-head attention and the Transformer layer from nn/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson12 {

struct Options : app::Flags {
  std::uint64_t seed = flag(seed, "seed", 0, "seed of the initial weights and the batches");
  std::string text =
      flag(text, "text", "", "a UTF-8 text file to train on instead of Jane Austen's novels");
  bool synthetic = flag(synthetic, "synthetic", false,
                        "train on generated sentences (no book needed; for quick runs)");
  Index d_model = flag(d_model, "d-model", 96, "GPT: model width", app::at_least<Index>(1));
  Index layers = flag(layers, "layers", 3, "GPT: Transformer blocks", app::at_least<Index>(1));
  Index heads = flag(heads, "heads", 4, "GPT: attention heads per block", app::at_least<Index>(1));
  Index context =
      flag(context, "context", 64, "characters the model sees (T)", app::at_least<Index>(2));
  Index batch = flag(batch, "batch", 32, "windows per training step", app::at_least<Index>(1));
  double lr = flag(lr, "lr", 2e-3, "AdamW learning rate", app::above(0.0));
  double seconds =
      flag(seconds, "seconds", 150, "training time of the GPT, and of the GRU", app::above(0.0));
  bool gru = flag(gru, "gru", true, "train the GRU baseline for the same time");
  Index eval_batches = flag(eval_batches, "eval-batches", 40,
                            "validation windows / batch, drawn once", app::at_least<Index>(1));
  Index sample_chars =
      flag(sample_chars, "sample-chars", 400, "length of each sample", app::at_least<Index>(1));
  double temperature =
      flag(temperature, "temperature", 0.8, "sampling temperature", app::above(0.0));
  Index top_k = flag(top_k, "top-k", 10, "sample among the k likeliest characters (0: all)",
                     app::at_least<Index>(0));
  Index induction_steps =
      flag(induction_steps, "induction-steps", 3000,
           "at most this many steps of the induction model (0: skip it)", app::at_least<Index>(0));
  double induction_lr = flag(induction_lr, "induction-lr", 3e-3,
                             "AdamW learning rate of the induction model", app::above(0.0));
  Index induction_batch =
      flag(induction_batch, "induction-batch", 32, "sequences per step of the induction model",
           app::at_least<Index>(1));
  bool long_run =
      flag(long_run, "long", false, "the long preset: 480 s of training for the GPT and the GRU");
  bool progress = flag(progress, "progress", true, "show the training progress line on stderr");
  std::string out = flag(out, "out", "output/12_gpt", "folder for summary.txt and the figures");
};
void apply_long_preset(Options& o);

// ---- models (model.cpp) ----------------------------------------------------------------------

struct GptConfig {
  Index vocabulary = 0, context = 64, d_model = 128, layers = 4, heads = 4;
  Index feedforward = 0;  // 0: 4 * d_model
};

// GPT (Radford et al. 2018, 2019): token + learned position embeddings, `layers` pre-norm
// Transformer blocks with causal self-attention, a final LayerNorm and a linear read-out.
class Gpt : public nn::Module {
 public:
  Gpt(const GptConfig& config, Generator& gen);
  // ids int64 [B, T] with T <= context -> logits [B, T, V]
  Tensor forward(const Tensor& ids);
  // Decoding with the key/value cache: the new positions ids [B, S] (usually S = 1) after
  // the cache's; logits [B, S, V]. One cache per block; start with an empty vector.
  Tensor forward_step(const Tensor& ids, std::vector<nn::KeyValueCache>& caches);
  // forward() that also keeps every block's attention weights (training does not: it takes
  // the fused attention, which never builds them as a tensor).
  Tensor forward_with_weights(const Tensor& ids);
  // Per block, the attention weights [B, H, T, T] of the last forward_with_weights().
  std::vector<Tensor> attention_weights() const;
  std::string describe() const override;

  GptConfig config;
  nn::Embedding token, position;
  std::vector<std::unique_ptr<nn::TransformerEncoderLayer>> blocks;
  nn::LayerNorm final_norm;
  nn::Linear head;

 private:
  Tensor embed(const Tensor& ids, Index first_position);
};

// Embedding(V, 64) -> GRU(64, hidden) -> Linear(hidden, V), as ref_charlm.py's GRULM.
class GruLm : public nn::Module {
 public:
  GruLm(Index vocabulary, Index hidden, Generator& gen);
  Tensor forward(const Tensor& ids);  // [B, T] -> [B, T, V]
  std::string describe() const override;
  nn::Embedding embedding;
  nn::GRU gru;
  nn::Linear head;
};
// The GRU size whose model has about `parameters` parameters.
Index gru_hidden_for(Index vocabulary, Index parameters);

// Attention only (Elhage et al. 2021; Olsson et al. 2022): embeddings, `layers` pre-norm
// causal self-attention sub-layers with residuals, no feed-forward, a read-out.
class AttentionOnly : public nn::Module {
 public:
  AttentionOnly(Index vocabulary, Index context, Index d_model, Index layers, Index heads,
                Generator& gen);
  Tensor forward(const Tensor& ids);  // [B, T] -> [B, T, V]
  std::vector<Tensor> weights;        // per layer [B, H, T, T] of the last forward
  nn::Embedding token, position;
  std::vector<std::unique_ptr<nn::LayerNorm>> norms;
  std::vector<std::unique_ptr<nn::MultiheadAttention>> attention;
  nn::LayerNorm final_norm;
  nn::Linear head;
};

// ---- training and evaluation (training.cpp) --------------------------------------------------

using LanguageModel = std::function<Tensor(const Tensor& ids)>;  // [B, T] -> logits [B, T, V]

struct TrainResult {
  Index steps = 0;
  double seconds = 0, train_loss = 0, validation_loss = 0;  // nats per character
  std::vector<std::pair<double, double>> curve;             // (seconds, validation loss)
};

// AdamW on random windows of `train` until `seconds` have passed; validation loss on the
// fixed windows `validation` [N, T+1] at the start, every `eval_every` seconds and the end.
TrainResult train_language_model(nn::Module& model, const LanguageModel& forward,
                                 const std::vector<std::int64_t>& train, const NDArray& validation,
                                 const Options& o, Generator& gen);
// Mean cross-entropy (nats per character) over every position of the windows [N, T+1].
double validation_loss(nn::Module& model, const LanguageModel& forward, const NDArray& windows,
                       Index batch);
constexpr double kLn2 = 0.6931471805599453;

// ---- count models (baselines.cpp) ------------------------------------------------------------

// Add-one (Laplace) smoothed unigram and bigram models fitted on train; nats per character
// on validation (the bigram's first character scored by the unigram).
struct CountBaselines {
  double unigram = 0, bigram = 0;
};
CountBaselines count_baselines(const std::vector<std::int64_t>& train,
                               const std::vector<std::int64_t>& validation, Index vocabulary);

// ---- generation (generate.cpp) ---------------------------------------------------------------

struct Sampling {
  double temperature = 1;
  Index top_k = 0;  // 0: all
};
// Continues `prompt` by `chars` characters. With the cache each step feeds one character;
// without, it runs the whole window again. When the context is full the cache is rebuilt
// from the last context/2 characters (a sliding window).
std::string generate(Gpt& model, const data::CharVocabulary& vocabulary, const std::string& prompt,
                     Index chars, const Sampling& sampling, bool use_cache, Generator& gen);
// The next-character distribution's sample from logits [V].
Index sample_logits(std::span<const float> logits, const Sampling& sampling, Generator& gen);

// ---- heads (heads.cpp) -----------------------------------------------------------------------

// For each layer and head, the mean share of a query's attention on: the previous character,
// the first character of the current word (the query's own word, if it is not its first),
// and earlier occurrences of the query's own character.
struct HeadShares {
  std::vector<std::vector<double>> previous, word_start, same_char;  // [layer][head]
};
HeadShares head_shares(const std::vector<Tensor>& weights, const std::vector<std::string>& texts);
// The table of head_shares on validation windows, and heads.png: the maps of every layer and
// head for the first sentence of `text` that fits the context, and the same maps as data for
// the viewer (attention.json).
void report_heads(app::Transcript& t, Gpt& model, const data::CharVocabulary& vocabulary,
                  const std::vector<std::int64_t>& validation, const std::string& text,
                  const std::string& out, std::uint64_t seed);

// ---- induction heads (induction.cpp) ---------------------------------------------------------

void section_induction(app::Transcript& t, const Options& o);

}  // namespace attend::lesson12
