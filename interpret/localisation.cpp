// The localisation measures of lessons 09 and 10: hits (the most attended region inside the
// box), attention mass inside the box, and "not static saliency" (the map moves between the
// objects' nouns).
#include "interpret/localisation.h"

#include <algorithm>
#include <cmath>

#include "tensor/error.h"

namespace attend::interpret {

bool region_in_box(const data::Box& box, Index region, Index grid, double cell_pixels) {
  return box.contains((static_cast<double>(region % grid) + 0.5) * cell_pixels,
                      (static_cast<double>(region / grid) + 0.5) * cell_pixels);
}

std::vector<Index> cells_in_box(const data::Box& box, Index grid, double cell_pixels) {
  std::vector<Index> inside;
  for (Index cell = 0; cell < grid * grid; ++cell)
    if (region_in_box(box, cell, grid, cell_pixels)) inside.push_back(cell);
  return inside;
}

double mass_in_box(std::span<const double> weights, const data::Box& box, Index grid,
                   double cell_pixels) {
  if (static_cast<Index>(weights.size()) != grid * grid)
    fail("mass_in_box: {} weights for a {}x{} grid", weights.size(), grid, grid);
  double mass = 0;
  for (Index i = 0; i < grid * grid; ++i)
    if (region_in_box(box, i, grid, cell_pixels)) mass += weights[static_cast<std::size_t>(i)];
  return mass;
}

namespace {

// The counts summed over the canvases, turned into rates at the end.
struct Tally {
  Index object_words = 0, hits = 0, nouns = 0, noun_hits = 0, befores = 0, before_hits = 0;
  double mass = 0, noun_mass = 0;
  Index multi_object = 0, changed = 0;
  double variation = 0;
};

// Adds one canvas: w = its [T, L] attention maps, row t at word t; the first centres.size()
// regions have those centres, any others are padding (never inside a box).
void tally_canvas(Tally& tally, const data::CanvasExample& canvas, const double* w, Index regions,
                  std::span<const RegionCentre> centres) {
  const auto in_box = [&](const data::Box& box, Index region) {
    if (region >= static_cast<Index>(centres.size())) return false;
    const RegionCentre& c = centres[static_cast<std::size_t>(region)];
    return box.contains(c[0], c[1]);
  };
  const auto mass = [&](const double* a, const data::Box& box) {
    double inside = 0;
    for (Index i = 0; i < regions; ++i)
      if (in_box(box, i)) inside += a[i];
    return inside;
  };
  std::vector<Index> noun_argmax;         // per object: the argmax at its noun
  std::vector<const double*> noun_alpha;  // and the map there
  for (std::size_t t = 0; t < canvas.words.size(); ++t) {
    const int object = canvas.word_object[t];
    const double* a = w + static_cast<Index>(t) * regions;
    const Index best = std::max_element(a, a + regions) - a;
    if (object < 0) {
      const bool object_next = t + 1 < canvas.words.size() && canvas.word_object[t + 1] >= 0;
      if (object_next) {
        const auto next = static_cast<std::size_t>(canvas.word_object[t + 1]);
        ++tally.befores;
        tally.before_hits += in_box(canvas.objects[next].box, best);
      }
      continue;
    }
    const data::Box& box = canvas.objects[static_cast<std::size_t>(object)].box;
    const bool hit = in_box(box, best);
    tally.hits += hit;
    const double inside = mass(a, box);
    tally.mass += inside;
    ++tally.object_words;
    // The noun is the last word naming its object (after the colour).
    const bool is_noun = t + 1 == canvas.words.size() || canvas.word_object[t + 1] != object;
    if (is_noun) {
      ++tally.nouns;
      tally.noun_hits += hit;
      tally.noun_mass += inside;
      noun_argmax.push_back(best);
      noun_alpha.push_back(a);
    }
  }
  if (noun_argmax.size() >= 2) {
    ++tally.multi_object;
    tally.changed += noun_argmax[0] != noun_argmax[1];
    double tv = 0;
    for (Index i = 0; i < regions; ++i) tv += 0.5 * std::abs(noun_alpha[0][i] - noun_alpha[1][i]);
    tally.variation += tv;
  }
}

double share(double part, Index whole) {
  return part / static_cast<double>(whole);
}

// The rates of a tally.
Localisation rates(const Tally& tally) {
  Localisation out;
  out.object_words = tally.object_words;
  out.multi_object_canvases = tally.multi_object;
  if (tally.object_words > 0) {
    out.hit_rate = share(static_cast<double>(tally.hits), tally.object_words);
    out.mass_in_box = share(tally.mass, tally.object_words);
    if (tally.befores > 0)
      out.before_hit_rate = share(static_cast<double>(tally.before_hits), tally.befores);
    if (tally.nouns > 0) {
      out.noun_hit_rate = share(static_cast<double>(tally.noun_hits), tally.nouns);
      out.noun_mass_in_box = share(tally.noun_mass, tally.nouns);
    }
    if (tally.object_words > tally.nouns)
      out.colour_hit_rate = share(static_cast<double>(tally.hits - tally.noun_hits),
                                  tally.object_words - tally.nouns);
  }
  if (tally.multi_object > 0) {
    out.argmax_changes = share(static_cast<double>(tally.changed), tally.multi_object);
    out.total_variation = share(tally.variation, tally.multi_object);
  }
  return out;
}

// Canvas n's maps as float64 [T, L], checked against its words (and L against `regions`,
// unless 0).
NDArray checked_maps(const std::vector<data::CanvasExample>& canvases,
                     const std::vector<NDArray>& alphas, std::size_t n, Index regions) {
  const NDArray weights = alphas[n].to(kFloat64);  // [T, L]
  if (weights.ndim() != 2 || weights.size(0) < static_cast<Index>(canvases[n].words.size()) ||
      (regions > 0 && weights.size(1) != regions))
    fail("localisation: canvas {} has {} words but attention {}", n, canvases[n].words.size(),
         weights.shape());
  return weights;
}

}  // namespace

Localisation localisation(const std::vector<data::CanvasExample>& canvases,
                          const std::vector<NDArray>& alphas, Index grid, Index canvas_size) {
  if (canvases.size() != alphas.size())
    fail("localisation: {} canvases but {} attention maps", canvases.size(), alphas.size());
  if (grid < 1 || canvas_size < 1)
    fail("localisation: the grid ({}) and the canvas ({}) must be at least 1", grid, canvas_size);
  const double cell = static_cast<double>(canvas_size) / static_cast<double>(grid);
  std::vector<RegionCentre> centres;  // row-major, as region_in_box places them
  for (Index i = 0; i < grid * grid; ++i)
    centres.push_back({(static_cast<double>(i % grid) + 0.5) * cell,
                       (static_cast<double>(i / grid) + 0.5) * cell});
  Tally tally;
  for (std::size_t n = 0; n < canvases.size(); ++n) {
    const NDArray weights = checked_maps(canvases, alphas, n, grid * grid);
    tally_canvas(tally, canvases[n], weights.data<double>(), grid * grid, centres);
  }
  return rates(tally);
}

Localisation localisation(const std::vector<data::CanvasExample>& canvases,
                          const std::vector<NDArray>& alphas,
                          const std::vector<std::vector<RegionCentre>>& centres) {
  if (canvases.size() != alphas.size() || canvases.size() != centres.size())
    fail("localisation: {} canvases, {} attention maps and {} lists of region centres",
         canvases.size(), alphas.size(), centres.size());
  Tally tally;
  for (std::size_t n = 0; n < canvases.size(); ++n) {
    const NDArray weights = checked_maps(canvases, alphas, n, 0);
    if (weights.size(1) < static_cast<Index>(centres[n].size()))
      fail("localisation: canvas {} has {} regions but attention {}", n, centres[n].size(),
           weights.shape());
    tally_canvas(tally, canvases[n], weights.data<double>(), weights.size(1), centres[n]);
  }
  return rates(tally);
}

}  // namespace attend::interpret
