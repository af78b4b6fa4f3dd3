// tests/unit/eval/PersistentCollectionsTest.cpp — persistent vectors, the hash index and
// maps, checked against std::vector and std::map models over random operations, with
// every older version checked to be unchanged.
#include "eval/HashIndex.h"
#include "eval/PersistentVector.h"
#include "eval/Value.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

using namespace tsl;

namespace {

using IntVector = PersistentVector<int64_t>;

void checkEqual(const IntVector& v, const std::vector<int64_t>& model) {
  REQUIRE(v.size() == model.size());
  for (size_t i = 0; i < model.size(); ++i) REQUIRE(v[i] == model[i]);
  size_t i = 0;
  for (int64_t x : v) REQUIRE(x == model[i++]);
  i = 0;
  v.forEach(0, [&](int64_t x) { REQUIRE(x == model[i++]); });
  CHECK(i == model.size());
}

Value num(int64_t i) { return Value(Tensor::ofInt(i)); }

} // namespace

TEST_CASE("a persistent vector matches std::vector across the tree's levels") {
  // 32^3 + 100 elements: a root three levels deep, and growth past each full root.
  IntVector v;
  std::vector<int64_t> model;
  for (int64_t i = 0; i < 32 * 32 * 32 + 100; ++i) {
    v = v.push_back(i * 3);
    model.push_back(i * 3);
    if (i % 997 == 0 || i == 31 || i == 32 || i == 33 || i == 1055 || i == 1056 || i == 1057) checkEqual(v, model);
  }
  checkEqual(v, model);
  checkEqual(IntVector::fromVector(model), model);
  for (size_t n : {0u, 1u, 31u, 32u, 33u, 64u, 1024u, 1056u, 1057u, 33000u}) {
    std::vector<int64_t> prefix(model.begin(), model.begin() + static_cast<std::ptrdiff_t>(n));
    IntVector built = IntVector::fromVector(prefix);
    checkEqual(built, prefix);
    // A bulk-built vector grows and updates like one built by pushes.
    built = built.push_back(-1);
    prefix.push_back(-1);
    checkEqual(built, prefix);
    if (n > 0) {
      built = built.set(n / 2, -2);
      prefix[n / 2] = -2;
      checkEqual(built, prefix);
    }
  }
}

TEST_CASE("every version of a persistent vector keeps its elements") {
  std::mt19937_64 random(7);
  std::vector<IntVector> versions{IntVector()};
  std::vector<std::vector<int64_t>> models{{}};
  for (int step = 0; step < 4000; ++step) {
    const size_t from = random() % versions.size();
    IntVector v = versions[from];
    std::vector<int64_t> model = models[from];
    if (!model.empty() && random() % 3 == 0) {
      const size_t i = random() % model.size();
      v = v.set(i, step);
      model[i] = step;
    } else {
      // Pushing onto an older version must not disturb the version that pushed onto
      // the same tail before it (the in-place tail append).
      v = v.push_back(step);
      model.push_back(step);
    }
    versions.push_back(v);
    models.push_back(model);
  }
  for (size_t k = 0; k < versions.size(); ++k) checkEqual(versions[k], models[k]);
}

TEST_CASE("the hash index finds every position, in every version, with full-hash collisions") {
  std::mt19937_64 random(11);
  // Hashes drawn from a small set, so that many positions share all 64 bits.
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 40; ++i) hashes.push_back(random());
  hashes.push_back(0);
  hashes.push_back(~uint64_t(0));
  struct Version {
    HashIndex index;
    std::vector<uint64_t> hashOf; ///< position -> hash, for the positions it holds
  };
  std::vector<Version> versions{{HashIndex(), {}}};
  for (int step = 0; step < 3000; ++step) {
    // Mostly extend the newest version (in place); sometimes an older one (a copy).
    const size_t from = random() % 4 == 0 ? random() % versions.size() : versions.size() - 1;
    Version next = versions[from];
    const uint64_t hash = random() % 3 == 0 ? hashes[random() % hashes.size()] : random();
    next.index = next.index.insert(hash, static_cast<uint32_t>(next.hashOf.size()));
    next.hashOf.push_back(hash);
    versions.push_back(std::move(next));
  }
  for (size_t k = 0; k < versions.size(); k += 7) {
    const Version& v = versions[k];
    for (uint32_t p = 0; p < v.hashOf.size(); ++p) {
      // A version may see positions other versions inserted in place (maps reject those
      // through their predicate): it must find its own.
      const auto found = v.index.find(v.hashOf[p], [&](uint32_t at) { return at == p; });
      REQUIRE(found);
      CHECK(*found == p);
    }
    if (std::find(v.hashOf.begin(), v.hashOf.end(), 12345) == v.hashOf.end())
      CHECK_FALSE(v.index.find(12345, [](uint32_t) { return true; }).has_value());
  }
}

TEST_CASE("a map matches std::map, keeps insertion order, and every version stays intact") {
  std::mt19937_64 random(3);
  std::vector<Value> maps{makeMap({})};
  std::vector<std::vector<std::pair<int64_t, int64_t>>> models{{}}; // in insertion order
  for (int step = 0; step < 3000; ++step) {
    // Mostly extend the newest map (the in-place index path); sometimes branch from an
    // older one, which must copy.
    const size_t from = random() % 5 == 0 ? random() % maps.size() : maps.size() - 1;
    Value m = maps[from];
    auto model = models[from];
    const int64_t key = static_cast<int64_t>(random() % 400);
    auto it = std::find_if(model.begin(), model.end(), [&](const auto& e) { return e.first == key; });
    if (random() % 4 == 0) {
      m = m.map().dissoc(num(key));
      if (it != model.end()) model.erase(it);
    } else {
      m = m.map().assoc(num(key), num(step));
      if (it != model.end()) it->second = step;
      else model.emplace_back(key, step);
    }
    maps.push_back(m);
    models.push_back(model);
  }
  for (size_t k = 0; k < maps.size(); k += 13) {
    const MapObj& m = maps[k].map();
    const auto& model = models[k];
    REQUIRE(m.count() == model.size());
    size_t i = 0;
    for (const auto& [key, value] : m.entries()) {
      REQUIRE(i < model.size());
      CHECK(key.tensor().toInt() == model[i].first);
      CHECK(value.tensor().toInt() == model[i].second);
      ++i;
    }
    CHECK(i == model.size());
    std::set<int64_t> present;
    for (const auto& [key, value] : model) {
      present.insert(key);
      const Value* found = m.find(num(key));
      REQUIRE(found);
      CHECK(found->tensor().toInt() == value);
    }
    for (int64_t key = 0; key < 400; key += 3)
      if (!present.count(key)) CHECK(m.find(num(key)) == nullptr);
  }
}

TEST_CASE("map keys follow value equality: weak and strong numbers, lists and vectors, -0.0") {
  Value m = makeMap({});
  m = m.map().assoc(Value(Tensor::weakInt(1)), makeString("one"));
  m = m.map().assoc(makeVector({num(1), num(2)}), makeString("pair"));
  m = m.map().assoc(Value(Tensor::ofFloat(0.0)), makeString("zero"));
  for (int i = 0; i < 20; ++i) m = m.map().assoc(makeKeyword("k" + std::to_string(i)), num(i)); // indexed now
  CHECK(m.map().count() == 23);
  const Value* one = m.map().find(num(1)); // i64 1 equals the weak literal 1
  REQUIRE(one);
  CHECK(one->string().text() == "one");
  const Value items[] = {num(1), num(2)};
  const Value* pair = m.map().find(makeList(items)); // a list equals a vector
  REQUIRE(pair);
  CHECK(pair->string().text() == "pair");
  const Value* zero = m.map().find(Value(Tensor::ofFloat(-0.0)));
  REQUIRE(zero);
  CHECK(zero->string().text() == "zero");
  CHECK(m.map().find(Value(Tensor::ofFloat(1.0))) == nullptr); // f32 1.0 is not i64 1
  CHECK(hashValue(makeVector({num(1), num(2)})) == hashValue(makeList(items)));
}
