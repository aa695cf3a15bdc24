#include "query_pooling.h"

#include <fmt/format.h>

namespace own_model {

using namespace attend;

QueryPooling::QueryPooling(Index features, Index queries_count, Index key_size, Index value_size,
                           Generator& gen)
    : queries(randn({queries_count, key_size}, gen)),
      key(features, key_size, /*bias=*/false, gen),
      value(features, value_size, /*bias=*/true, gen) {
  register_parameter("queries", queries);
  register_module("key", key);
  register_module("value", value);
}

Pooled QueryPooling::forward(const Tensor& set) {
  if (set.ndim() != 3 || set.size(2) != key.weight.size(1))
    fail("QueryPooling: expected a set [B, N, {}], got {}", key.weight.size(1), set.shape());
  const Index batch = set.size(0);
  // The same queries for every set of the batch: [Q, Dk] -> [B, Q, Dk].
  Tensor s = broadcast_to(unsqueeze(queries, 0), {batch, queries.size(0), queries.size(1)});
  nn::Attended a = nn::attend(nn::scaled_dot_score(s, key(set)), value(set));
  return {a.context, a.weights};
}

std::string QueryPooling::describe() const {
  return fmt::format("QueryPooling({} queries, {} -> keys {}, values {})", queries.size(0),
                     key.weight.size(1), key.weight.size(0), value.weight.size(0));
}

}  // namespace own_model
