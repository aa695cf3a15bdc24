// Lesson 09: Show, Attend and Tell (Xu et al. 2015), soft attention. The functions that
// main.cpp runs, in the order of the chapter (docs/09_show_attend_tell.md), one file each:
//
//   data.cpp       canvases -> vocabulary and padded batches of word ids
//   encoder.cpp    the CNN: a 64x64 canvas -> an 8x8 grid of L = 64 regions a_i of D = 64;
//                  pre-trained to say what is at each cell of canvases like the captioned
//                  ones, then frozen
//   pipeline.cpp   the encoder pre-trained and frozen, canvases made, regions computed once
//   decoder.cpp    the LSTM decoder: f_init, f_att (eqs 4-5), the gate beta, phi (eq 6),
//                  the LSTM (eqs 1-3) and the deep output layer (eq 7)
//   loss.cpp       -log p(y|a) plus the doubly stochastic regulariser lambda
//                  sum_i (1 - sum_t alpha_ti)^2 (section 4.2.1)
//   decoding.cpp   greedy and beam-search decoding
//   metrics.cpp    exact match, corpus BLEU-4, localisation, attention mass in the box and
//                  the "not static saliency" measure
//   training.cpp   the training loop (Adam, progress line, CSV log)
//
// Lesson 10 (hard attention) reuses everything here: it links this library.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "attend.h"

namespace attend::lesson09 {

using data::CanvasExample;
using data::Vocabulary;

// ---- data: data.cpp --------------------------------------------------------------------------

constexpr Index kCanvasSize = 64;             // canvas side in pixels
constexpr Index kGridSide = kCanvasSize / 8;  // regions per side: three 2x max-pools
constexpr Index kMaxCaptionWords = 16;        // decoding stops here if <eos> never comes

// Every word a canvas caption can contain, plus <pad>, <bos>, <eos> and <unk>.
Vocabulary caption_vocabulary(const data::CanvasGenerator& generator);

// A batch for teacher forcing: inputs = <bos> w1 .. wn, targets = w1 .. wn <eos>, both padded
// with <pad> to the longest caption of the batch; mask is 1 at real steps.
struct CaptionBatch {
  Tensor inputs;   // int64 [B, T]
  Tensor targets;  // int64 [B, T]
  Tensor mask;     // float [B, T]
};
CaptionBatch make_caption_batch(const std::vector<const CanvasExample*>& examples,
                                const Vocabulary& vocab, DType dtype = kFloat32);

// The canvases' images stacked into [B, 3, S, S].
Tensor stack_images(const std::vector<const CanvasExample*>& examples);

// ---- the encoder: encoder.cpp ----------------------------------------------------------------

// Every region vector a_i ends with its grid position: x and y of the cell's centre, in
// [-1, 1] (left/top -1, right/bottom +1). A region vector has D + kPositionFeatures numbers.
constexpr Index kPositionFeatures = 2;
// The [rows * columns, 2] table of those positions, row-major like the regions.
NDArray grid_coordinates(Index rows, Index columns, DType dtype);

// Three times conv 3x3 (padding 1) + ReLU + max-pool 2: [B, 3, S, S] -> [B, D, S/8, S/8],
// read as L = (S/8)^2 regions of D features and their 2 coordinates, [B, L, D + 2] (REF-SAT's
// encoder, plus the coordinates).
class Encoder : public nn::Module {
 public:
  Encoder(Index channels, Index features, Index labels, Generator& gen);
  Tensor feature_grid(const Tensor& images);  // [B, D, S/8, S/8]
  Tensor regions(const Tensor& images);       // [B, L, D + 2]
  // Pre-training scores of every cell: Linear on each region's D features,
  // [B, L, classes + 1 (nothing) + colours + 1 (none)].
  Tensor cell_logits(const Tensor& images);
  std::string describe() const override { return "Encoder"; }

  nn::Conv2d conv1, conv2, conv3;
  nn::Linear classifier;
};

// Pre-training, our stand-in for the paper's ImageNet: on freshly drawn canvases like the
// captioned ones (64x64, 1 to 3 items, from the training pictures), every cell of the 8x8
// grid learns to say what lies at its centre: one of the classes or "nothing", and the colour
// of what is there (or none). This uses the items' boxes, as the "bottom-up" features of
// later captioners are trained on boxes (Anderson et al. 2018); the decoder never sees a box.
// Trained this way, a cell next to an object says "nothing" although its 22-pixel window sees
// part of the object, so features are sharp where they matter for attention; and a cell's
// window holds neighbours during pre-training, as it will on the captioned canvases. (Until
// 2026-12-01 the encoder was pre-trained on single items on 32x32 canvases: one so trained named
// 98% of held-out single items but 96.4% of the objects on the test canvases, where a cell's window
// can also hold part of a neighbour; docs/09, section 4.)
struct PretrainOptions {
  Index steps = 10000;  // minibatches of freshly drawn canvases (lessons 09 and 10)
  Index batch = 8;      // canvases per minibatch
  double lr = 2e-3;
  Index canvas_size = 64;  // side of the pre-training canvases
  Index max_objects = 3;   // items on each: 1 to max_objects
};
// The targets of every cell: `what` [B, L] int64 is the class of the object whose box holds
// the cell's centre, or kClasses ("nothing"); `colour` [B, L] is its colour, or the number
// of colours ("none") on a cell with nothing.
struct CellTargets {
  Tensor what, colour;
};
CellTargets cell_targets(const std::vector<const CanvasExample*>& canvases, Index canvas_size);
// Canvases of `canvas_size` pixels with 1 to max_objects items of `classes`.
data::CanvasGenerator pretraining_canvases(const data::LabelledImages& items, Index canvas_size,
                                           const std::vector<Index>& classes, Index max_objects);
// Per item on the canvases (B of them): the mean of cell_scores [B, L, C] over the cells
// whose centre lies in its box, [items, C], and its class, [items] int64. An item whose box
// holds no cell centre is left out.
struct ItemScores {
  Tensor logits, labels;
};
ItemScores item_scores(const Tensor& cell_scores,
                       const std::vector<const CanvasExample*>& canvases);
// Per cell: cross-entropy of what is there and of its colour (or none); plus, per item, the
// cross-entropy of its class from the mean class scores of the cells inside its box.
Tensor pretraining_loss(Encoder& encoder, const std::vector<CanvasExample>& canvases);
// Trains the encoder; returns the mean loss of each tenth of the run.
std::vector<double> pretrain_encoder(Encoder& encoder, const data::CanvasGenerator& canvases,
                                     const PretrainOptions& options, Generator& gen);
// The share of the items on `canvases` whose noun (and colour) the encoder names, from the
// mean scores of the cells inside each item's box: on held-out single items, and on the
// objects of the test canvases.
struct ItemAccuracy {
  Index objects = 0;
  double noun = 0, colour = 0;
};
ItemAccuracy item_accuracy(Encoder& encoder, const std::vector<CanvasExample>& canvases);

// The frozen encoder's regions for every canvas: float32 [N, L, D + 2] (computed once, so that
// the decoder trains on them without running the CNN again).
NDArray encode_all(Encoder& encoder, std::span<const CanvasExample> canvases);

// ---- the steps before the decoder: pipeline.cpp ----------------------------------------------

constexpr Index kClasses = 10;  // item classes (Fashion-MNIST's, or the stand-in's)
// The classes on the canvases: T-shirt/top, Trouser, Sandal, Bag and Ankle boot, whose
// shapes differ even at 18 pixels. Lesson 03's confusion matrix shows why not all ten: the
// shirts, pullovers, coats and dresses are confused with each other even at 28 pixels by a
// well-trained CNN, and one wrong noun spoils a whole caption (--all-classes to see it).
inline const std::vector<Index> kCaptionClasses = {0, 1, 5, 8, 9};
// Cell labels of the encoder's pre-training: the classes, "nothing", the colours, "none".
inline Index encoder_labels() {
  return kClasses + 1 + static_cast<Index>(data::canvas_colors().size()) + 1;
}

struct PipelineOptions {
  std::uint64_t seed = 0;
  bool synthetic = false;    // generated patterns instead of Fashion-MNIST
  bool all_classes = false;  // all 10 classes on the canvases, not only kCaptionClasses
  Index train = 6000, validation = 300, test = 500;
  PretrainOptions encoder;
  // A folder where the pre-trained encoder is kept, one checkpoint per setting (seed, data,
  // steps, learning rate): a later run with the same settings (lesson 10 after lesson 09,
  // as the paper reuses one VGG) loads it instead of pre-training again. Empty: no cache.
  std::string encoder_cache;
};
struct PreparedCanvases {
  data::CanvasSplits splits;  // the training canvases keep their captions, not their images
  Vocabulary vocab;
  std::vector<std::string> nouns;        // of the classes on the canvases
  std::vector<double> encoder_losses;    // per tenth of the pre-training
  ItemAccuracy encoder_accuracy;         // on held-out single-item canvases
  ItemAccuracy encoder_canvas_accuracy;  // on the objects of the test canvases
  std::string encoder_loaded_from;       // the cached checkpoint used, or empty if pre-trained here
  NDArray train_regions, validation_regions, test_regions;  // [N, L, D + 2] each
  double seconds = 0;
};
// The encoder pre-trained (or loaded) and frozen; the canvases (training ones from the
// training items, held-out ones from the test items) and every canvas's regions. The training
// canvases keep their captions but not their images, dropped as soon as they are encoded.
// The encoder's pre-training draws from its own generator (seeded from options.seed), so a
// run that loads a cached encoder makes the same canvases and decoders as one that trains it.
PreparedCanvases prepare_canvases(const PipelineOptions& options, Encoder& encoder);
// The cache file of these settings inside options.encoder_cache.
std::string encoder_cache_file(const PipelineOptions& options);

// ---- the decoder: decoder.cpp ----------------------------------------------------------------

struct DecoderSizes {
  Index vocab = 0;       // K
  Index features = 66;   // the size of a region vector a_i: D = 64 CNN features + 2 coordinates
  Index embedding = 32;  // m
  Index hidden = 128;    // n, the LSTM's size
  Index attention = 64;  // the hidden layer of f_att
  // Dropout on h_t where it enters the deep output (eq 7), in training only. The authors'
  // code drops h_t there with p = 0.5, so that the output cannot lean on the LSTM's memory
  // alone and reads the context z_t too. 0 turns it off (the tests' gradchecks).
  double dropout = 0;
  // What of the context z_t the LSTM receives (eq 1). The paper feeds it all of z_t. Then a
  // decoder on our small canvases reads an object once, at the word before it ("a"),
  // remembers it, and looks anywhere while it says "red bag": its maps do not show where
  // the words come from. By default the LSTM gets only the *position* part of z_t (where it
  // looked: the last kPositionFeatures numbers), and what it saw reaches the words through
  // the deep output (eq 7) alone, so each word has to look (--lstm-sees-content: the paper).
  bool lstm_sees_content = false;
};

// What one decoding step computed (B images, L regions, V words).
struct StepOutput {
  Tensor logits;  // [B, V]: eq. 7 before the softmax
  Tensor alpha;   // [B, L]: eq. 5
  Tensor beta;    // [B, 1]: the gate
  nn::LSTMState state;
};

class Decoder : public nn::Module {
 public:
  Decoder(const DecoderSizes& sizes, Generator& gen);

  // f_init: h_0 = tanh(init_h(mean_i a_i)), c_0 = tanh(init_c(mean_i a_i)).
  nn::LSTMState initial_state(const Tensor& regions);
  // W_a a_i + b for every region: depends only on the image, computed once per caption.
  Tensor project_regions(const Tensor& regions) { return attention.project_keys(regions); }
  // eq 4: the scores e_ti [B, L] from the projected regions and h_{t-1}.
  Tensor attention_scores(const Tensor& projected, const Tensor& h);
  // eq 5: alpha = softmax(e) [B, L].
  Tensor attention_weights(const Tensor& projected, const Tensor& h);
  // beta_t = sigmoid(f_beta(h_{t-1})) [B, 1], or 1 when the gate is off.
  Tensor gate(const Tensor& h);
  // Given the context z_t [B, D]: the LSTM step (eqs 1-3) and the deep output (eq 7).
  StepOutput advance(const Tensor& previous_words, const Tensor& z, const nn::LSTMState& state);
  // One whole step: alpha, the context z_t, advance. With Context::kSoft (training and
  // decoding in lesson 09), z_t = beta sum_i alpha_i a_i (eq 6). Lesson 10 decodes its
  // hard-attention model with kMostAttended: z_t = beta a_k, k = argmax_i alpha_i (one region).
  enum class Context { kSoft, kMostAttended };
  StepOutput step(const Tensor& regions, const Tensor& projected, const Tensor& previous_words,
                  const nn::LSTMState& state);

  std::string describe() const override { return "Decoder"; }

  DecoderSizes sizes;
  bool use_gate = true;  // --no-gate: beta = 1 (exercise)
  // --no-init: f_init reads zeros instead of the mean region, so that everything the decoder
  // learns about the image comes through attention.
  bool init_from_image = true;
  Context context = Context::kSoft;
  nn::Embedding embed;  // E
  nn::Linear init_h, init_c;
  nn::AdditiveScore attention;  // f_att: u^T tanh(W_a a_i + W_h h_{t-1} + b)
  nn::Linear f_beta;
  nn::LSTMCell cell;               // input [E y_{t-1}; z_t]
  nn::Linear out_h, out_z, out_o;  // L_h, L_z, L_o of eq 7
  nn::Dropout drop_h;              // on h_t before L_h
};

// Teacher forcing over a whole batch of captions.
struct Unrolled {
  Tensor logits;  // [B, T, V]
  Tensor alphas;  // [B, T, L]
  Tensor betas;   // [B, T]
};
Unrolled unroll(Decoder& decoder, const Tensor& regions, const Tensor& inputs);

// ---- the loss: loss.cpp ----------------------------------------------------------------------

// -log p(y|a): the words' negative log-likelihoods summed over each caption, averaged over
// the batch (as in the paper and the authors' code). Padded steps count for nothing.
Tensor caption_nll(const Tensor& logits, const Tensor& targets);
// The doubly stochastic regulariser of section 4.2.1: sum_i (1 - sum_t alpha_ti)^2 per
// caption, averaged over the batch. Padded steps are masked out of sum_t.
Tensor doubly_stochastic_penalty(const Tensor& alphas, const Tensor& mask);
struct LossParts {
  Tensor total;  // nll + lambda * penalty
  double nll = 0, penalty = 0;
};
LossParts soft_attention_loss(Decoder& decoder, const Tensor& regions, const CaptionBatch& batch,
                              double lambda);

// ---- decoding: decoding.cpp ------------------------------------------------------------------

struct Caption {
  std::vector<std::int64_t> ids;  // the words, without <bos>/<eos>
  std::vector<NDArray> alphas;    // per word: the attention [L] used to choose it
  double log_probability = 0;
};
// The most likely word at every step. regions [B, L, D] -> one caption per image.
std::vector<Caption> greedy_decode(Decoder& decoder, const Tensor& regions,
                                   Index max_words = kMaxCaptionWords);
// Beam search: keeps the `width` best partial captions (by summed log-probability); a
// caption ends at <eos>. regions [1, L, D].
Caption beam_decode(Decoder& decoder, const Tensor& regions, Index width,
                    Index max_words = kMaxCaptionWords);

// ---- metrics: metrics.cpp --------------------------------------------------------------------

// Corpus BLEU-4 (Papineni et al. 2002) with one reference per candidate: clipped n-gram
// counts and lengths summed over the corpus, then BP * exp(mean_n log p_n).
double corpus_bleu4(const std::vector<std::vector<std::string>>& candidates,
                    const std::vector<std::vector<std::string>>& references);

// Where the attention of word t lies, for the words that name an object (word_object >= 0).
// A region "lies inside" a box when its centre (in canvas pixels) does.
struct Localisation {
  Index object_words = 0;
  double hit_rate = 0;     // share of object words whose most attended region is in the box
  double mass_in_box = 0;  // mean of sum of alpha over the regions inside the box
  double noun_hit_rate = 0, colour_hit_rate = 0;  // hit_rate over the nouns / colour words
  // The same at the word just before an object's first word ("a"), with that object's box:
  // does the model read the object one word early?
  double before_hit_rate = 0;
  // Not static saliency, over canvases with 2+ objects: the share where the most attended
  // region at the first object's noun differs from the one at the second object's noun
  // (0 for any fixed map), and the mean total-variation distance 1/2 sum_i |alpha - alpha'|
  // between those two maps.
  Index multi_object_canvases = 0;
  double argmax_changes = 0;
  double total_variation = 0;
};
// alphas[n]: [T_n, L] the attention at each word of canvas n's reference caption (teacher
// forcing); grid = sqrt(L) regions a side.
Localisation localisation(const std::vector<CanvasExample>& canvases,
                          const std::vector<NDArray>& alphas, Index grid, Index canvas_size);

// Teacher-forced attention maps of the reference captions, one [T_n, L] per canvas.
std::vector<NDArray> reference_attention(Decoder& decoder, const NDArray& regions,
                                         const std::vector<CanvasExample>& canvases,
                                         const Vocabulary& vocab);

struct CaptionScores {
  double exact_match = 0;    // share of captions equal to the reference, word for word
  double word_accuracy = 0;  // share of reference positions with the right word
  double bleu4 = 0;
  Localisation where;
  // The first few wrong captions, "reference -> generated", and per reference word: how
  // often it was not generated at its position (which words the errors are made of).
  std::vector<std::string> mistakes;
  std::map<std::string, Index> missed_words;
};
// Greedy (beam_width 1) or beam decoding of every canvas, scored against its reference.
CaptionScores evaluate(Decoder& decoder, const NDArray& regions,
                       const std::vector<CanvasExample>& canvases, const Vocabulary& vocab,
                       Index beam_width);
std::vector<std::string> words_of(const Caption& caption, const Vocabulary& vocab);

// ---- training: training.cpp ------------------------------------------------------------------

// The defaults are lesson 09's (main.cpp's Options, where each has its flag).
struct TrainOptions {
  int epochs = 6;
  Index batch = 64;
  double lr = 3e-3;      // Adam's at the start; a cosine takes it to a tenth by the end
  double lambda = 0.0;   // weight of the doubly stochastic regulariser
  double clip = 5.0;     // gradient-norm clipping
  std::string log_path;  // CSV of per-epoch losses ("" for none)
  bool show_progress = true;
};
struct EpochRecord {
  int epoch = 0;
  double loss = 0, nll = 0, penalty = 0;  // training means
  double validation_word_accuracy = 0;
};
// One training step's loss on a batch: what the loop minimises. Lesson 10 passes its own.
using StepLoss = std::function<LossParts(const Tensor& regions, const CaptionBatch& batch)>;
std::vector<EpochRecord> train_decoder(Decoder& decoder, const NDArray& train_regions,
                                       const std::vector<CanvasExample>& train,
                                       const NDArray& validation_regions,
                                       const std::vector<CanvasExample>& validation,
                                       const Vocabulary& vocab, const TrainOptions& options,
                                       Generator& gen, const StepLoss& step_loss = {});

// Rows `indices` of an [N, ...] array, as a Tensor (no gradient).
Tensor rows(const NDArray& all, const std::vector<Index>& indices);

}  // namespace attend::lesson09
