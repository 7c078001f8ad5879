// tune_across and pick_shared_winner (tune/across.hpp).
#include "tune/across.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "tuning/winner_rule.hpp"

namespace tune {
namespace {

bool usable(const ConfigResult& r) { return r.status.ok() && std::isfinite(r.stats.median); }

}  // namespace

Status validate(const ShareOptions& opts) {
  if (!std::isfinite(opts.finalist_margin) || opts.finalist_margin < 0)
    return Status(StatusCode::invalid_argument,
                  "ShareOptions::finalist_margin must be a finite number >= 0, not " +
                      std::to_string(opts.finalist_margin));
  if (!std::isfinite(opts.tie_tolerance) || opts.tie_tolerance < 0 || opts.tie_tolerance >= 1)
    return Status(StatusCode::invalid_argument,
                  "ShareOptions::tie_tolerance must be a finite number in [0, 1), not " +
                      std::to_string(opts.tie_tolerance));
  if (opts.max_finalists < 1)
    return Status(StatusCode::invalid_argument, "ShareOptions::max_finalists must be >= 1, not " +
                                                    std::to_string(opts.max_finalists));
  return {};
}

Result<SharedWinner> pick_shared_winner(std::vector<ConfigResult> results, const ShareOptions& opts,
                                        const Retime& retime) {
  TUNE_RETURN_IF_ERROR(validate(opts));
  // Fastest first, an equal median in configuration text order (the same on every process):
  // the winner rule with no tolerance.
  const std::vector<std::size_t> order = detail::rank_by_winner_rule(results, 0.0);
  if (order.empty()) {
    std::string msg = "every configuration failed:";
    for (const auto& r : results) {
      msg += "\n  {" + r.config.to_string() +
             "}: " + (r.status.ok() ? std::string("no timing") : r.status.to_string());
    }
    return Status(StatusCode::all_failed, msg);
  }
  const double limit = results[order[0]].stats.median * (1.0 + opts.finalist_margin);
  std::vector<std::size_t> fin;
  for (std::size_t i : order) {
    if (fin.size() >= static_cast<std::size_t>(opts.max_finalists)) break;
    if (results[i].stats.median > limit) break;
    fin.push_back(i);
  }
  SharedWinner out;
  std::size_t best = fin[0];
  if (fin.size() >= 2) {
    std::vector<Config> configs;
    for (std::size_t i : fin) configs.push_back(results[i].config);
    auto again = retime(configs);
    TUNE_RETURN_IF_ERROR(again.status());
    if (again->size() != fin.size())
      return Status(StatusCode::internal, "retiming returned " + std::to_string(again->size()) +
                                              " results for " + std::to_string(fin.size()) +
                                              " finalists");
    for (std::size_t k = 0; k < fin.size(); ++k) results[fin[k]] = (*again)[k];
    const std::vector<std::size_t> ranked =
        detail::rank_by_winner_rule(*again, opts.tie_tolerance);  // indices into *again
    if (ranked.empty()) {
      return Status(StatusCode::all_failed, "every finalist failed when timed again; the first: {" +
                                                results[fin[0]].config.to_string() +
                                                "}: " + results[fin[0]].status.to_string());
    }
    std::vector<std::size_t> reordered;
    for (std::size_t k : ranked) reordered.push_back(fin[k]);
    for (std::size_t i : fin)
      if (!usable(results[i])) reordered.push_back(i);  // failed again: listed last
    fin = std::move(reordered);
    best = fin[0];
  }
  for (std::size_t i : fin) out.finalists.push_back(results[i].config);
  out.config = results[best].config;
  out.results = std::move(results);
  return out;
}

Result<SharedWinner> tune_across(Autotuner& tuner, std::span<const DeviceCall> calls,
                                 const ShareOptions& opts) {
  const std::string what = "tune_across of kernel " + tuner.kernel().name;
  TUNE_RETURN_IF_ERROR(validate(opts).with_context(what));
  if (calls.empty()) return Status(StatusCode::invalid_argument, what + ": no device given");
  const auto name = [&](std::size_t i) {
    return "call " + std::to_string(i) + " (device " + calls[i].device->info().name + ")";
  };
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].device == nullptr)
      return Status(StatusCode::invalid_argument,
                    what + ": call " + std::to_string(i) + " has no device");
  Device& first = *calls[0].device;
  auto key = tuner.key_text(first, calls[0].args);
  TUNE_RETURN_IF_ERROR(key.status());
  for (std::size_t i = 1; i < calls.size(); ++i) {
    const Device& d = *calls[i].device;
    if (d.info().fingerprint() != first.info().fingerprint()) {
      return Status(StatusCode::invalid_argument,
                    what + ": " + name(i) + " has fingerprint '" + d.info().fingerprint() +
                        "', call 0's is '" + first.info().fingerprint() +
                        "'; timings from different devices cannot be compared");
    }
    auto k = tuner.key_text(d, calls[i].args);
    TUNE_RETURN_IF_ERROR(k.status());
    if (*k != *key) {
      return Status(StatusCode::invalid_argument,
                    what + ": " + name(i) + " has key {" + *k + "}, call 0's is {" + *key + "}");
    }
  }
  auto cands = tuner.candidates(first, calls[0].args);
  TUNE_RETURN_IF_ERROR(cands.status());
  const std::size_t n = calls.size();
  std::vector<std::vector<Config>> shares(n);
  for (std::size_t j = 0; j < cands->size(); ++j) shares[j % n].push_back((*cands)[j]);
  std::vector<Result<std::vector<ConfigResult>>> measured(
      n, Result<std::vector<ConfigResult>>(std::vector<ConfigResult>{}));
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < n; ++i) {
      if (shares[i].empty()) continue;
      threads.emplace_back(
          [&, i] { measured[i] = tuner.measure(*calls[i].device, calls[i].args, shares[i]); });
    }
  }
  std::vector<ConfigResult> results(cands->size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!measured[i].ok()) return Status(measured[i].status()).with_context(what + ", " + name(i));
    for (std::size_t k = 0; k < measured[i]->size(); ++k) results[i + k * n] = (*measured[i])[k];
  }
  auto won = pick_shared_winner(std::move(results), opts, [&](std::span<const Config> fin) {
    return tuner.measure(first, calls[0].args, fin);
  });
  if (!won.ok()) return Status(won.status()).with_context(what + " for key {" + *key + "}");
  for (std::size_t i = 0; i < n; ++i) {
    TUNE_RETURN_IF_ERROR(tuner.adopt(*calls[i].device, calls[i].args, won->config, won->results)
                             .with_context(what + ", " + name(i)));
  }
  return won;
}

}  // namespace tune
