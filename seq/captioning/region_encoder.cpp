// The encoder: where the annotation vectors a_1 .. a_L come from.
//
// The paper takes the 14x14x512 feature map of a VGG network pre-trained on ImageNet and does
// not fine-tune it: each of the L = 196 positions is one a_i in R^512. Our canvases are
// 64x64, so a smaller CNN (the REF-SAT encoder) gives an 8x8 grid: L = 64 regions of D = 64.
// Each max-pool halves the grid, 64 -> 32 -> 16 -> 8, so region (r, c) summarises the
// 8x8-pixel cell whose centre is at (8c + 4, 8r + 4), and sees (through the three 3x3
// convolutions) a 22x22 window around it.
//
// Pre-training (our stand-in for ImageNet): on canvases like the captioned ones, every cell of
// the grid learns to say what lies at its centre (a class or nothing) and its colour. Then the
// CNN is frozen, as the paper's VGG is. See region_encoder.h (PretrainOptions) for why cells.
#include "seq/captioning/region_encoder.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autograd/ops.h"
#include "interpret/localisation.h"
#include "nn/loss.h"
#include "nn/optim/optim.h"
#include "nn/pool.h"
#include "nn/viz/progress.h"

namespace attend::captioning {

RegionEncoder::RegionEncoder(Index channels, Index features, Index labels, Generator& gen)
    : conv1(3, channels, 3, 1, 1, true, gen),
      conv2(channels, features, 3, 1, 1, true, gen),
      conv3(features, features, 3, 1, 1, true, gen),
      classifier(features, labels, true, gen) {
  register_module("conv1", conv1);
  register_module("conv2", conv2);
  register_module("conv3", conv3);
  register_module("classifier", classifier);
}

// Each block is conv 3x3, ReLU, max-pool 2, computed as conv, max-pool, ReLU: the maximum of
// four ReLUs is the ReLU of their maximum, and the gradient reaches the same element (the
// window's first maximum, when it is positive; none, when it is not), so every number is the
// same while the ReLU and its backward touch a quarter of the elements. Measured: a ReLU and its
// backward were about 5% of lesson 09's pre-training and ReLU 6% of encoding the canvases.
Tensor RegionEncoder::feature_grid(const Tensor& images) {
  Tensor x = relu(nn::max_pool2d(conv1(images), 2));
  x = relu(nn::max_pool2d(conv2(x), 2));
  return relu(nn::max_pool2d(conv3(x), 2));
}

NDArray grid_coordinates(Index rows, Index columns, DType dtype) {
  NDArray out = NDArray::zeros({rows * columns, kPositionFeatures}, dtype);
  // Centre of cell k of n, scaled so that the grid spans [-1, 1]: (2k + 1) / n - 1.
  auto scaled = [](Index k, Index n) {
    return (2.0 * static_cast<double>(k) + 1.0) / static_cast<double>(n) - 1.0;
  };
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < columns; ++c) {
      out.set({r * columns + c, 0}, scaled(c, columns));  // x: left -1 .. right +1
      out.set({r * columns + c, 1}, scaled(r, rows));     // y: top -1 .. bottom +1
    }
  return out;
}

Tensor RegionEncoder::regions(const Tensor& images) {
  Tensor grid = feature_grid(images);  // [B, D, h, w]
  const Index batch = grid.size(0), rows = grid.size(2), columns = grid.size(3);
  // [B, D, h*w] -> [B, L, D]: region i = (row i / w, column i % w), row-major.
  Tensor features = transpose(flatten(grid, 2), 1, 2);
  // Deviation from the paper: a_i also says where region i is. Our captions name objects
  // left to right or top to bottom, and a convolution's features say what is in a window,
  // not where the window is; without the two coordinates, f_att could not find "the
  // leftmost object" (docs/09_show_attend_tell.md, section 2).
  Tensor where = Tensor(grid_coordinates(rows, columns, grid.dtype()));  // [L, 2], constant
  return concat(
      {features, broadcast_to(unsqueeze(where, 0), {batch, rows * columns, kPositionFeatures})},
      2);  // [B, L, D + 2]
}

Tensor RegionEncoder::cell_logits(const Tensor& images) {
  return classifier(transpose(flatten(feature_grid(images), 2), 1, 2));  // [B, L, labels]
}

data::CanvasGenerator pretraining_canvases(const data::CanvasGenerator& pictures, Index canvas_size,
                                           const std::vector<Index>& classes, Index max_objects) {
  data::CanvasOptions options;
  options.size = canvas_size;
  options.classes = classes;
  options.min_objects = 1;
  options.max_objects = static_cast<int>(max_objects);
  return data::CanvasGenerator(pictures, options);
}

namespace {

constexpr Index kCellPixels = 8;  // three 2x max-pools: one cell is 8x8 pixels
constexpr Index kNothing = kClasses;

// The cells of a grid x grid canvas whose centre lies inside `box`, in row-major order.
std::vector<Index> cells_in_box(const data::Box& box, Index grid) {
  return interpret::cells_in_box(box, grid, static_cast<double>(kCellPixels));
}

}  // namespace

CellTargets cell_targets(const std::vector<const CanvasExample*>& canvases, Index canvas_size) {
  const Index grid = canvas_size / kCellPixels, cells = grid * grid;
  const Index batch = static_cast<Index>(canvases.size());
  NDArray what = NDArray::full({batch, cells}, static_cast<double>(kNothing), kInt64);
  const double no_colour = static_cast<double>(data::canvas_colors().size());
  NDArray colour = NDArray::full({batch, cells}, no_colour, kInt64);
  for (Index b = 0; b < batch; ++b)
    for (const data::CanvasObject& object : canvases[static_cast<std::size_t>(b)]->objects)
      for (Index cell : cells_in_box(object.box, grid)) {
        what.data<std::int64_t>()[b * cells + cell] = object.label;
        colour.data<std::int64_t>()[b * cells + cell] = object.color;
      }
  return {Tensor(what), Tensor(colour)};
}

ItemScores item_scores(const Tensor& cell_scores,
                       const std::vector<const CanvasExample*>& canvases) {
  if (cell_scores.ndim() != 3)
    fail("item_scores: expected [B, L, C] cell scores, got {}", cell_scores.shape());
  const Index batch = cell_scores.size(0), cells = cell_scores.size(1);
  const Index grid = static_cast<Index>(std::lround(std::sqrt(static_cast<double>(cells))));
  if (grid * grid != cells || batch != static_cast<Index>(canvases.size()))
    fail("item_scores: expected [{}, L = n^2, C] cell scores, got {}", canvases.size(),
         cell_scores.shape());
  // A [items, B * L] matrix holding 1/count at the cells of each item's box: one product
  // with the [B * L, C] scores takes every item's mean.
  std::vector<std::int64_t> labels;
  std::vector<std::vector<Index>> item_cells;
  for (Index b = 0; b < batch; ++b)
    for (const data::CanvasObject& object : canvases[static_cast<std::size_t>(b)]->objects) {
      std::vector<Index> inside = cells_in_box(object.box, grid);
      if (inside.empty()) continue;                  // a box too thin to hold a cell centre
      for (Index& cell : inside) cell += b * cells;  // its row in [B * L, C]
      labels.push_back(object.label);
      item_cells.push_back(std::move(inside));
    }
  const Index items = static_cast<Index>(labels.size());
  NDArray averaging = NDArray::zeros({items, batch * cells}, cell_scores.dtype());
  for (Index i = 0; i < items; ++i) {
    const std::vector<Index>& inside = item_cells[static_cast<std::size_t>(i)];
    for (Index k : inside) averaging.set({i, k}, 1.0 / static_cast<double>(inside.size()));
  }
  return {matmul(Tensor(averaging), reshape(cell_scores, {batch * cells, cell_scores.size(2)})),
          Tensor(NDArray::from_vector(labels, {items}))};
}

Tensor pretraining_loss(RegionEncoder& encoder, const std::vector<CanvasExample>& canvases) {
  std::vector<const CanvasExample*> batch;
  for (const CanvasExample& c : canvases) batch.push_back(&c);
  Tensor images = stack_images(batch);
  CellTargets targets = cell_targets(batch, images.size(2));
  Tensor logits = encoder.cell_logits(images);  // [B, L, classes + 1 + colours]
  Tensor what_logits = slice(logits, 2, 0, kClasses + 1);
  Tensor colour_logits = slice(logits, 2, kClasses + 1, logits.size(2));
  // And each item's class from the mean of the class scores of the cells inside its box
  // (lesson 08's CAM classifier, on one object): it asks the cells together to tell the
  // classes apart, where the cell targets mostly teach "where".
  ItemScores items = item_scores(slice(what_logits, 2, 0, kClasses), batch);
  return nn::cross_entropy(what_logits, targets.what) +
         nn::cross_entropy(colour_logits, targets.colour) +
         nn::cross_entropy(items.logits, items.labels);
}

std::vector<double> pretrain_encoder(RegionEncoder& encoder, const data::CanvasGenerator& canvases,
                                     const PretrainOptions& options, Generator& gen) {
  optim::Adam adam(encoder.parameters(), {.lr = options.lr});
  // The learning rate falls along half a cosine to a tenth of itself: the last steps refine.
  const optim::Schedule schedule =
      optim::CosineAnnealing(options.lr, options.steps, options.lr / 10);
  constexpr Index kReports = 10;
  const Index per_report = std::max<Index>(1, options.steps / kReports);
  viz::ProgressOptions shown;
  shown.unit = "canvases";
  std::ostringstream quiet;  // where the progress line goes when it is switched off
  if (!options.progress) shown.out = &quiet;
  viz::Progress progress(options.steps, shown);
  progress.start_epoch();
  std::vector<double> losses;
  double running = 0;
  for (Index step = 1; step <= options.steps; ++step) {
    std::vector<CanvasExample> batch;
    for (Index i = 0; i < options.batch; ++i) batch.push_back(canvases.make(gen));
    optim::apply_schedule(adam, schedule);
    adam.zero_grad();
    Tensor loss = pretraining_loss(encoder, batch);
    optim::check_loss_is_finite("pretrain_encoder", step, loss.item());
    loss.backward();
    adam.step();
    progress.step(loss.item(), options.batch);
    running += loss.item();
    if (step % per_report == 0 || step == options.steps) {
      losses.push_back(
          running / static_cast<double>(step % per_report == 0 ? per_report : step % per_report));
      running = 0;
    }
  }
  progress.end_epoch();
  return losses;
}

ItemAccuracy item_accuracy(RegionEncoder& encoder, const std::vector<CanvasExample>& canvases) {
  NoGradGuard no_graph;
  Index objects = 0, nouns = 0, colours = 0;
  for (std::size_t start = 0; start < canvases.size(); start += 64) {
    std::vector<const CanvasExample*> batch;
    for (std::size_t i = start; i < std::min(canvases.size(), start + 64); ++i)
      batch.push_back(&canvases[i]);
    Tensor images = stack_images(batch);
    const NDArray logits = encoder.cell_logits(images).data();  // [B, L, labels]
    const Index cells = logits.size(1), labels = logits.size(2);
    const Index grid = images.size(2) / kCellPixels;
    for (std::size_t b = 0; b < batch.size(); ++b)
      for (const data::CanvasObject& object : batch[b]->objects) {
        // The summed scores of the cells inside the item's box (all cells if none is): the
        // same argmax as their mean.
        std::vector<Index> inside = cells_in_box(object.box, grid);
        if (inside.empty())
          for (Index cell = 0; cell < cells; ++cell) inside.push_back(cell);
        std::vector<double> sum(static_cast<std::size_t>(labels), 0.0);
        for (Index cell : inside) {
          const float* row = logits.data<float>() + (static_cast<Index>(b) * cells + cell) * labels;
          for (Index j = 0; j < labels; ++j) sum[static_cast<std::size_t>(j)] += row[j];
        }
        auto best = [&](Index from, Index to) {
          return std::max_element(sum.begin() + from, sum.begin() + to) - (sum.begin() + from);
        };
        ++objects;
        nouns += best(0, kClasses) == object.label;
        colours += best(kClasses + 1, labels - 1) == object.color;
      }
  }
  const double n = static_cast<double>(std::max<Index>(objects, 1));
  return {objects, static_cast<double>(nouns) / n, static_cast<double>(colours) / n};
}

NDArray encode_all(RegionEncoder& encoder, std::span<const CanvasExample> canvases) {
  NoGradGuard no_graph;
  constexpr std::size_t kBatch = 64;
  NDArray out;
  float* dst = nullptr;
  for (std::size_t start = 0; start < canvases.size(); start += kBatch) {
    std::vector<const CanvasExample*> batch;
    for (const CanvasExample& c :
         canvases.subspan(start, std::min(kBatch, canvases.size() - start)))
      batch.push_back(&c);
    const NDArray regions = encoder.regions(stack_images(batch)).data();
    if (!out.defined()) {
      out = NDArray::empty({static_cast<Index>(canvases.size()), regions.size(1), regions.size(2)});
      dst = out.data<float>();
    }
    dst = std::copy_n(regions.data<float>(), regions.numel(), dst);
  }
  return out;
}

}  // namespace attend::captioning
