// (d) The sanity checks of Adebayo et al. (2018, "Sanity Checks for Saliency Maps"). A map
// that explains the model must change when the model changes:
//   model randomisation: re-initialise the weights from the top (the head) down, one part at
//     a time and cumulatively, with the model's own initialiser (a fresh model's values);
//   data randomisation: train the same model on labels shuffled across the canvases.
// How much a map changed is the Spearman rank correlation between the trained model's map
// and the other model's (interpret/sanity.h), on the absolute values and signed, averaged
// over test pairs. A correlation that stays near 1 means the map never looked at those
// weights: the method fails the check.
#include "images.h"

namespace attend::lesson13 {
namespace {

// The first `count` pairs of the set, as a batch.
struct PairBatch {
  NDArray images;
  std::vector<Index> classes;
};
PairBatch first_pairs(const vision::CanvasSet& set, Index count) {
  std::vector<vision::ClassOnCanvas> pairs = vision::classes_on_canvases(set);
  if (static_cast<Index>(pairs.size()) > count) pairs.resize(static_cast<std::size_t>(count));
  if (pairs.size() < 2) fail("sanity checks: need at least 2 (canvas, class) pairs");
  PairBatch batch;
  std::vector<std::int64_t> canvases;
  for (const vision::ClassOnCanvas& p : pairs) {
    canvases.push_back(p.canvas);
    batch.classes.push_back(p.label);
  }
  batch.images = index_select(set.images, 0,
                              NDArray::from_vector(canvases, {static_cast<Index>(pairs.size())}));
  return batch;
}

// Every ViT method's map and the two baselines (the CNN is not randomised), flow included.
MapBatch all_maps(CanvasVit& model, const PairBatch& batch, Generator& gen) {
  model.eval();
  MapBatch maps =
      vit_maps(model, batch.images, batch.classes, std::vector<bool>(batch.classes.size(), true));
  add_baseline_maps(maps, batch.images, gen);
  return maps;
}

// Mean over the pairs of the rank correlation of each method's two maps.
void add_correlations(SanityCurves& curves, const MapBatch& reference, const MapBatch& other) {
  std::vector<double> rho_abs, rho_signed;
  for (std::size_t row = 0; row < reference.maps.size(); ++row) {
    if (!reference.maps[row].defined() || !other.maps[row].defined()) {
      rho_abs.push_back(0);
      rho_signed.push_back(0);
      continue;
    }
    const Index pairs = reference.maps[row].size(0);
    double sum_abs = 0, sum_signed = 0;
    for (Index b = 0; b < pairs; ++b) {
      const std::vector<double> a = map_of(reference.maps[row], b).to_vector();
      const std::vector<double> o = map_of(other.maps[row], b).to_vector();
      sum_abs += interpret::spearman_correlation(a, o, /*absolute=*/true);
      sum_signed += interpret::spearman_correlation(a, o, /*absolute=*/false);
    }
    rho_abs.push_back(sum_abs / static_cast<double>(pairs));
    rho_signed.push_back(sum_signed / static_cast<double>(pairs));
  }
  curves.rho_abs.push_back(rho_abs);
  curves.rho_signed.push_back(rho_signed);
}

}  // namespace

std::vector<CascadeStep> cascade_steps(const CanvasVit& model) {
  std::vector<CascadeStep> steps = {{"the classifier (heads)", "heads", {"vit.heads"}},
                                    {"the final LayerNorm", "ln", {"vit.ln"}}};
  for (auto layer = static_cast<Index>(model.vit.layers.size()) - 1; layer >= 0; --layer)
    steps.push_back({fmt::format("encoder layer {}", layer + 1),
                     fmt::format("L{}", layer + 1),
                     {fmt::format("vit.layers.{}", layer)}});
  steps.push_back(
      {"the positions and class token", "pos", {"vit.pos_embedding", "vit.class_token"}});
  steps.push_back({"the patch embedding (conv_proj)", "patch", {"vit.conv_proj"}});
  return steps;
}

SanityCurves cascading_randomisation(const CanvasVit& trained, const vision::CanvasSet& set,
                                     const SanityOptions& options) {
  const PairBatch batch = first_pairs(set, options.pairs);
  Generator model_gen(options.seed), fresh_gen(options.seed + 1), map_gen(options.seed);
  // A copy of the trained model to randomise step by step, and a freshly initialised one
  // whose values the randomised parts take (the module's own initialiser).
  CanvasVit model(trained.vit.config(), trained.pixels, model_gen);
  copy_parameters(model, trained);
  CanvasVit fresh(trained.vit.config(), trained.pixels, fresh_gen);
  const MapBatch reference = all_maps(model, batch, map_gen);
  SanityCurves curves;
  // Step 0, the trained model against itself: 1 for every method but the random map, which
  // is drawn anew (the other maps are deterministic: no need to compute them again).
  MapBatch again = reference;
  add_baseline_maps(again, batch.images, map_gen);
  curves.steps.push_back("none");
  add_correlations(curves, reference, again);
  for (const CascadeStep& step : cascade_steps(model)) {
    copy_parameters(model, fresh, step.prefixes);
    curves.steps.push_back(step.column);
    add_correlations(curves, reference, all_maps(model, batch, map_gen));
  }
  return curves;
}

SanityCurves compare_models(CanvasVit& trained, CanvasVit& other, const vision::CanvasSet& set,
                            const SanityOptions& options) {
  const PairBatch batch = first_pairs(set, options.pairs);
  Generator map_gen(options.seed);
  const MapBatch reference = all_maps(trained, batch, map_gen);
  SanityCurves curves;
  curves.steps.push_back("shuffled");
  add_correlations(curves, reference, all_maps(other, batch, map_gen));
  return curves;
}

}  // namespace attend::lesson13
