// Section 1 of the program: the canvases, which classes are on them and where; canvases.png.
#include <fmt/ranges.h>

#include <algorithm>

#include "program.h"

namespace attend::lesson08 {
namespace {

// How many training canvases canvases.png shows, in two rows.
constexpr int kExampleCanvases = 8;

// "coat, bag, bag": the caption nouns of a canvas's objects, for figure captions.
std::string noun_list(const std::vector<data::CanvasObject>& objects,
                      const std::vector<std::string>& nouns) {
  std::vector<std::string> words;
  for (const data::CanvasObject& o : objects)
    words.push_back(nouns[static_cast<std::size_t>(o.label)]);
  return fmt::format("{}", fmt::join(words, ", "));
}

}  // namespace

CanvasData section_data(app::Transcript& t, const Options& o) {
  t.heading("1. Canvases: which classes, and where");
  CanvasData d = make_canvas_data(canvas_options(o));
  t.say("{} pictures: {} training, {} validation and {} test canvases of {}x{} pixels.\n",
        o.synthetic ? "Synthetic stand-in" : "Fashion-MNIST", d.train.size(), d.validation.size(),
        d.test.size(), d.train.images.size(2), d.train.images.size(3));
  t.say("Training canvases use the training pictures, validation and test canvases the test\n");
  t.say("pictures: held-out canvases show items the model never saw.\n");
  const std::vector<Index> train_counts = class_counts(d.train), test_counts = class_counts(d.test);
  t.say("\n{:<22} {:>10} {:>10}\n", "class", "train", "test");
  for (std::size_t c = 0; c < d.class_names.size(); ++c)
    t.say("{:<22} {:>10} {:>10}\n", d.class_names[c], train_counts[c], test_counts[c]);

  double objects = 0, classes = 0, box_area = 0;
  for (const auto& canvas : d.test.objects)
    for (const data::CanvasObject& object : canvas) {
      objects += 1;
      box_area +=
          static_cast<double>((object.box.x1 - object.box.x0) * (object.box.y1 - object.box.y0));
    }
  for (Index c : test_counts) classes += static_cast<double>(c);
  const double canvases = static_cast<double>(d.test.size());
  const double area = static_cast<double>(d.test.images.size(2) * d.test.images.size(3));
  t.say("A test canvas holds {:.2f} objects of {:.2f} different classes on average;\n",
        objects / canvases, classes / canvases);
  t.say("one object's box covers {:.1f}% of the canvas.\n", 100 * box_area / objects / area);

  const std::vector<std::string> nouns = data::caption_nouns(d.class_names);
  std::vector<std::vector<viz::Panel>> rows(2);
  for (Index i = 0; i < std::min<Index>(kExampleCanvases, d.train.size()); ++i) {
    const auto& on_canvas = d.train.objects[static_cast<std::size_t>(i)];
    rows[static_cast<std::size_t>(i * 2 / kExampleCanvases)].push_back(
        viz::canvas_panel(canvas_image(d.train, i), on_canvas, kZoom, noun_list(on_canvas, nouns)));
  }
  if (rows[1].empty()) rows.pop_back();
  viz::write_panels(o.out + "/canvases.png", rows);
  t.say("Wrote {}/canvases.png: training canvases, their boxes (cyan) and classes.\n", o.out);
  return d;
}

}  // namespace attend::lesson08
