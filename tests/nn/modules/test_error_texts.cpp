// The error texts of nn/'s public API: each names the function or module that refused and
// the values it was given, never an internal name (vector::_M_range_check) or a bare "bad
// input". One representative error per source file whose texts were swept.
#include <filesystem>

#include "attend.h"
#include "nn/data/idx.h"
#include "scratch_dir.h"
#include "support.h"

using namespace attend;
using namespace attend::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("error texts: Sequential[i] past its end names the index and the size", "[nn]") {
  Generator gen(0);
  nn::Sequential model;
  model.add(std::make_unique<nn::Linear>(4, 3, true, gen));
  model.add(std::make_unique<nn::ReLU>());
  CHECK_NOTHROW(model[1]);
  CHECK_THROWS_WITH(model[5], "Sequential[5]: there is no layer 5; the Sequential has 2");
}

TEST_CASE("error texts: Module::to names the dtype it refuses", "[nn]") {
  Generator gen(0);
  nn::Linear layer(2, 2, true, gen);
  CHECK_THROWS_WITH(layer.to(kInt64),
                    "Module::to: parameters must be float32 or float64, not int64");
}

TEST_CASE("error texts: CanvasGenerator names the class and the classes chosen", "[nn]") {
  const data::CanvasGenerator canvases(data::synthetic_fashion_mnist(data::Split::kTrain, 50, 1));
  CHECK(canvases.noun_of_class(0) >= 0);
  CHECK_THROWS_WITH(canvases.noun_of_class(10),
                    "CanvasGenerator::noun_of_class: class 10 does not exist (10 classes)");
  CHECK_THROWS_WITH(canvases.noun_of_class(-1), Contains("class -1 does not exist"));
  // Items only of class 0, canvases only of classes 3 and 4.
  data::LabelledImages items = data::synthetic_fashion_mnist(data::Split::kTrain, 50, 1);
  items.labels = NDArray::zeros({items.size()}, kInt64);
  CHECK_THROWS_WITH(data::CanvasGenerator(items, {.classes = {3, 4}}),
                    "CanvasGenerator: none of the 50 source items is of the chosen classes [3, 4]");
}

TEST_CASE("error texts: an IDX array of an unknown type names the function and the code", "[nn]") {
  data::IdxArray idx;
  idx.type = static_cast<data::IdxType>(0x42);
  idx.shape = Shape{2};
  idx.bytes = {1, 2};
  CHECK_THROWS_WITH(idx.to_array(kFloat32), "idx_type_size: unknown IDX type 0x42");
}

TEST_CASE("error texts: read_text_file says why it cannot read a path", "[nn]") {
  ScratchDir dir("text_file_errors");
  CHECK_THROWS_WITH(data::read_text_file(dir.file("")),
                    "read_text_file: '" + dir.file("") + "' is a folder, not a file");
  CHECK_THROWS_WITH(
      data::read_text_file(dir.file("nowhere.txt")),
      "read_text_file: cannot open '" + dir.file("nowhere.txt") + "': No such file or directory");
}

TEST_CASE("error texts: a layer names itself, not the tensor op inside it", "[nn]") {
  Generator gen(0);
  nn::Linear linear(4, 3, true, gen);
  CHECK_THROWS_WITH(linear(randn({2, 4}, gen, kFloat64)),
                    "linear: input [2,4] is float64 but weight [3,4] is float32 (convert one with "
                    ".to())");
  nn::Embedding embedding(10, 4, -1, gen);
  const Tensor ids(NDArray::from_list({1, 12}, {2}, kInt64));
  CHECK_THROWS_WITH(embedding(ids),
                    "embedding: id 12 at position 1 of ids [2] is outside the table of 10 rows "
                    "(0..9)");
  nn::GeneralScore general(4, 5, gen);
  CHECK_THROWS_WITH(general.forward(randn({2, 3, 4}, gen), randn({2, 7, 6}, gen)),
                    "GeneralScore: keys [2,7,6] must end in key_size = 5, got 6");
  nn::AdditiveScore additive(4, 5, 8, gen);
  CHECK_THROWS_WITH(additive.forward(randn({2, 3, 7}, gen), randn({2, 7, 5}, gen)),
                    "AdditiveScore: queries [2,3,7] must end in query_size = 4, got 7");
  CHECK_THROWS_WITH(nn::masked_softmax(randn({2, 3, 4}, gen), ones({2, 5})),
                    Contains("masked_softmax: mask [2,5] does not fit scores [2,3,4]"));
  CHECK_NOTHROW(nn::masked_softmax(randn({2, 3, 4}, gen), ones({2, 4})));
  CHECK_NOTHROW(nn::masked_softmax(randn({2, 3, 4}, gen), ones({2, 3, 4})));
}

TEST_CASE("error texts: Sequential says which layer refused its input", "[nn]") {
  Generator gen(0);
  nn::Sequential model;
  model.add(std::make_unique<nn::Linear>(4, 3, true, gen));
  model.add(std::make_unique<nn::Linear>(5, 2, true, gen));
  CHECK_THROWS_WITH(model(randn({2, 4}, gen)),
                    StartsWith("Sequential: layer 1 (") &&
                        Contains(") on input [2,3]: linear: input [2,3] does not end in "
                                 "in_features 5 of weight [2,5]"));
}
