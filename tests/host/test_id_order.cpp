// host/sim/id_order.hpp: the particles in increasing id, and where each id sits, on dense ids (a
// table) and on sparse ones (sorting, a hash map) alike.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "host/sim/id_order.hpp"

namespace {

using dem::host::IdIndex;

TEST(IdOrder, DenseAndSparseIdsGiveTheSameOrderAndIndex) {
  const std::vector<std::int64_t> dense{7, 3, 0, 5, 9, 1};
  const std::vector<std::int64_t> sparse{7000000000, 3, 0, 5000000000, 9, 1};
  ASSERT_GE(dem::host::dense_id_top(dense), 0);
  ASSERT_EQ(dem::host::dense_id_top(sparse), -1);
  for (const auto* id : {&dense, &sparse}) {
    std::vector<std::size_t> order;
    dem::host::order_by_id(*id, [](std::size_t i) { return i != 4; }, order);  // all but index 4
    EXPECT_EQ(order, (std::vector<std::size_t>{2, 5, 1, 3, 0}));
    const IdIndex all(*id);
    for (std::size_t i = 0; i < id->size(); ++i) EXPECT_EQ(all.find((*id)[i]), static_cast<std::int64_t>(i));
    EXPECT_EQ(all.find(2), -1);
    EXPECT_EQ(all.find(-1), -1);
    EXPECT_EQ(all.find(1000), -1);
    const IdIndex some(*id, [](std::size_t i) { return i % 2 == 0; });  // indices 0, 2, 4
    EXPECT_EQ(some.find((*id)[2]), 2);
    EXPECT_EQ(some.find((*id)[4]), 4);
    EXPECT_EQ(some.find((*id)[1]), -1);
    EXPECT_EQ(some.find((*id)[3]), -1);
  }
}

}  // namespace
