// (b) The figure of a few test bags: each instance drawn twice its size, with a bar under it
// as high as its weight and the weight written below. Green bars mark instances of the
// target class, red bars the others, so a good localiser puts its tallest bar on green.
#include <algorithm>
#include <fstream>

#include "lesson.h"

namespace attend::lesson04 {
namespace {

constexpr int kZoom = 2;              // each picture pixel becomes kZoom x kZoom
constexpr int kPicture = 28 * kZoom;  // drawn picture size
constexpr int kCell = kPicture + 6;   // horizontal room per instance
constexpr int kMargin = 6;
constexpr int kTitle = viz::kTextLineHeight + 4;
constexpr int kBar = 36;  // the tallest bar
constexpr int kRow = kTitle + kPicture + 4 + kBar + viz::kTextLineHeight + 10;
constexpr double kBackground = 0.22;  // grey, so the black picture borders show
constexpr viz::Rgb kPositiveBar{0.2, 0.85, 0.3}, kNegativeBar{0.9, 0.25, 0.2};
constexpr viz::Rgb kText{1, 1, 1};

void fill_rectangle(NDArray& image, int x, int y, int width, int height, viz::Rgb color) {
  const Index H = image.size(1), W = image.size(2);
  float* p = image.data<float>();
  const double channel[3] = {color.r, color.g, color.b};
  for (int c = 0; c < 3; ++c)
    for (int r = std::max(0, y); r < std::min<int>(static_cast<int>(H), y + height); ++r)
      for (int s = std::max(0, x); s < std::min<int>(static_cast<int>(W), x + width); ++s)
        p[(c * H + r) * W + s] = static_cast<float>(channel[c]);
}

void draw_picture(NDArray& image, const NDArray& picture, int x, int y) {
  const Index H = image.size(1), W = image.size(2);
  NDArray grey = picture.to(kFloat32).reshape({28, 28});
  const float* q = grey.data<float>();
  float* p = image.data<float>();
  for (int r = 0; r < kPicture; ++r)
    for (int s = 0; s < kPicture; ++s)
      for (int c = 0; c < 3; ++c) p[(c * H + y + r) * W + x + s] = q[(r / kZoom) * 28 + s / kZoom];
}

}  // namespace

void write_bag_figure(const std::string& png, const std::vector<BagRow>& rows) {
  if (rows.empty()) fail("write_bag_figure: no bags to draw");
  std::size_t widest = 0;
  int title_width = 0;
  for (const BagRow& row : rows) {
    if (row.weights.size() != row.instances.size() || row.positive.size() != row.instances.size())
      fail("write_bag_figure: '{}' has {} instances, {} weights and {} labels", row.title,
           row.instances.size(), row.weights.size(), row.positive.size());
    widest = std::max(widest, row.instances.size());
    title_width = std::max(title_width, viz::text_width(row.title, 1));
  }
  const int width = 2 * kMargin + std::max(static_cast<int>(widest) * kCell, title_width);
  const int height = 2 * kMargin + static_cast<int>(rows.size()) * kRow;
  NDArray image = NDArray::full({3, height, width}, kBackground);

  std::ofstream text = viz::open_for_writing(viz::data_path_for(png), "write_bag_figure");
  text << "# one line per bag: its title, then weight:label for each instance "
          "(label 1 = target class)\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const BagRow& row = rows[i];
    const int top = kMargin + static_cast<int>(i) * kRow;
    viz::draw_text(image, row.title, kMargin, top, 1, kText);
    const double largest = *std::max_element(row.weights.begin(), row.weights.end());
    text << "# " << viz::one_line(row.title) << "\n";
    for (std::size_t k = 0; k < row.instances.size(); ++k) {
      const int x = kMargin + static_cast<int>(k) * kCell;
      const int picture_top = top + kTitle;
      draw_picture(image, row.instances[k], x, picture_top);
      const double share = largest > 0 ? row.weights[k] / largest : 0;
      const int bar = std::max(1, static_cast<int>(share * kBar + 0.5));
      const int bar_bottom = picture_top + kPicture + 4 + kBar;
      fill_rectangle(image, x, bar_bottom - bar, kPicture, bar,
                     row.positive[k] ? kPositiveBar : kNegativeBar);
      viz::draw_text(image, fmt::format("{:.2f}", row.weights[k]), x + 8, bar_bottom + 3, 1, kText);
      text << fmt::format("{}{:.4f}:{}", k == 0 ? "" : " ", row.weights[k],
                          row.positive[k] ? 1 : 0);
    }
    text << "\n";
  }
  viz::finish_writing(text, viz::data_path_for(png), "write_bag_figure");
  viz::write_png(png, image);
}

}  // namespace attend::lesson04
