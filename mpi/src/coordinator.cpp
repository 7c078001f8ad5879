// Coordinator: the fingerprint groups and the three modes (tune/mpi.hpp). Every exchange goes
// through Exchange (deadline-polled non-blocking collectives); what travels is wire.hpp's.
//
// Each mode is the same sequence of collectives on every rank of a group, whatever happens
// locally: a rank's own failure travels as a message (never as a missing message), and an
// error every rank has received ends the mode on every rank at the same step. The last step
// of each mode ("commit") tells every rank whether every other rank adopted the winners.
#include "tune/mpi.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "exchange.hpp"
#include "tune/backend/hash.hpp"
#include "wire.hpp"

namespace tune::mpi {
namespace {

using detail::Decision;
using detail::Exchange;

std::chrono::milliseconds to_ms(double ms) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(ms)));
}

// A status as one line of text ("" when ok), and back: what "commit" sends.
std::string status_text(const Status& st) {
  return st.ok() ? std::string() : std::string(to_string(st.code())) + "\n" + st.message();
}
Status status_of_text(const std::string& text) {
  if (text.empty()) return {};
  const auto nl = text.find('\n');
  StatusCode code = StatusCode::internal;
  if (!parse_status_code(text.substr(0, nl), &code)) code = StatusCode::internal;
  return Status(code, nl == std::string::npos ? text : text.substr(nl + 1));
}

std::string hex(std::uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

struct Coordinator::Impl {
  CoordinatorOptions opts;
  MPI_Comm world = MPI_COMM_NULL;  // the caller's communicator, duplicated
  MPI_Comm group = MPI_COMM_NULL;  // the ranks with this rank's fingerprint
  std::unique_ptr<Exchange> ex;    // over `group`
  std::vector<int> members;        // world rank of each group rank
  int group_count = 1;

  ~Impl() {
    // A communicator with an abandoned collective is left alone: freeing it may wait for it.
    if (ex != nullptr && ex->broken()) return;
    int finalized = 0;  // after MPI_Finalize no MPI call is allowed: nothing is freed
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized != 0) return;
    if (group != MPI_COMM_NULL) MPI_Comm_free(&group);
    if (world != MPI_COMM_NULL) MPI_Comm_free(&world);
  }

  bool leader() const { return ex->rank() == 0; }
  std::string rank_name(int group_rank) const {
    return "rank " + std::to_string(members[static_cast<std::size_t>(group_rank)]);
  }

  // Every rank's list of texts `mine`, indexed by group rank. `what` names the step awaited
  // (in a timeout), `decoded` the lists (in a malformed one's error).
  Result<std::vector<std::vector<std::string>>> allgather_lists(
      const std::vector<std::string>& mine, const std::string& what, const std::string& decoded) {
    auto all = ex->allgather(detail::encode_texts(mine), what);
    TUNE_RETURN_IF_ERROR(all.status());
    std::vector<std::vector<std::string>> lists;
    for (const auto& blob : *all) {
      auto l = detail::decode_texts(blob, decoded);
      TUNE_RETURN_IF_ERROR(l.status());
      lists.push_back(std::move(*l));
    }
    return lists;
  }

  // The leader's decision on every rank: `blob` is its encoded Decision at the leader (ignored
  // elsewhere). `what` names the mode, key and rank awaited in every error.
  Result<Decision> receive_decision(const std::string& blob, const std::string& what) {
    auto got = ex->broadcast(0, blob, what);
    TUNE_RETURN_IF_ERROR(got.status());
    return detail::decode_decision(*got, what);
  }

  // Every rank's key items (one per call: "K<text>" or "E<status>"); the first error any rank
  // met, or the first disagreement with the leader's list, is every rank's error.
  Status agree(const std::string& mode, const std::vector<std::string>& mine) {
    auto gathered = allgather_lists(mine, mode + ": exchanging the key texts of every rank's calls",
                                    mode + ": key texts");
    TUNE_RETURN_IF_ERROR(gathered.status());
    const std::vector<std::vector<std::string>>& lists = *gathered;
    for (std::size_t r = 0; r < lists.size(); ++r) {
      for (std::size_t i = 0; i < lists[r].size(); ++i) {
        const std::string& item = lists[r][i];
        if (!item.empty() && item[0] == 'E') {
          Status st = status_of_text(item.substr(1));
          return Status(st.code(), mode + ": " + rank_name(static_cast<int>(r)) + ", call " +
                                       std::to_string(i) + ": " + st.message());
        }
      }
    }
    const auto& lead = lists[0];
    for (std::size_t r = 1; r < lists.size(); ++r) {
      const auto& l = lists[r];
      if (l.size() != lead.size()) {
        return Status(StatusCode::invalid_argument,
                      mode + ": " + rank_name(static_cast<int>(r)) + " passed " +
                          std::to_string(l.size()) + " calls and " + rank_name(0) + " " +
                          std::to_string(lead.size()) +
                          "; every rank of a group must pass the same keys");
      }
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (l[i] == lead[i]) continue;
        return Status(StatusCode::invalid_argument,
                      mode + ": call " + std::to_string(i) + " of " +
                          rank_name(static_cast<int>(r)) + " is {" + l[i].substr(1) + "} but " +
                          rank_name(0) + "'s is {" + lead[i].substr(1) +
                          "}; every rank of a group must pass the same keys in the same order");
      }
    }
    return {};
  }

  // The last step of a mode: every rank says whether it adopted every winner.
  Status commit(const std::string& mode, const Status& mine) {
    auto all = ex->allgather(status_text(mine), mode + ": confirming that every rank adopted");
    TUNE_RETURN_IF_ERROR(all.status());
    for (std::size_t r = 0; r < all->size(); ++r) {
      Status st = status_of_text((*all)[r]);
      if (!st.ok())
        return Status(st.code(), mode + ": " + rank_name(static_cast<int>(r)) +
                                     " could not adopt the winner: " + st.message());
    }
    return {};
  }

  Status usable(const std::string& mode) const {
    if (!ex->broken()) return {};
    return Status(StatusCode::failed_precondition,
                  mode +
                      ": an earlier call of this Coordinator timed out; its communicator "
                      "cannot be used again");
  }

  // The decision of the rank that tunes key `args` itself (modes 1 and 3).
  static Decision tune_here(Autotuner& tuner, Device& dev, ArgList args, ResultSource* source) {
    Decision d;
    if (auto known = tuner.best(dev, args)) {
      d.config = *known;
      *source = ResultSource::memory;
      return d;
    }
    auto c = tuner.tune(dev, args);
    if (!c.ok()) {
      d.status = c.status();
      return d;
    }
    d.config = *c;
    if (auto rep = tuner.last_report(dev, args)) {
      d.results = rep->results;
      *source = rep->source;
    }
    return d;
  }

  // share_space's decision at the leader: every rank's share (gathered blobs, group rank
  // r timed candidates r, r + n, ...) back in candidate order, then pick_shared_winner.
  Decision decide(const std::vector<std::string>& gathered, const std::vector<Config>& cands,
                  const std::string& what, const Retime& retime) {
    Decision d;
    const std::size_t n = gathered.size();
    std::vector<ConfigResult> results(cands.size());
    for (std::size_t r = 0; r < n; ++r) {
      auto share = detail::decode_results(gathered[r], what);
      if (!share.ok()) {
        d.status = Status(share.status().code(),
                          what + ": " + rank_name(static_cast<int>(r)) +
                              " failed measuring its share: " + share.status().message());
        return d;
      }
      for (std::size_t k = 0; k < share->size(); ++k) {
        const std::size_t j = r + k * n;
        if (j >= cands.size() || (*share)[k].config.to_string() != cands[j].to_string()) {
          d.status = Status(StatusCode::internal, what + ": " + rank_name(static_cast<int>(r)) +
                                                      " sent results for other candidates");
          return d;
        }
        results[j] = std::move((*share)[k]);
      }
    }
    auto won = pick_shared_winner(std::move(results), opts.share, retime);
    if (!won.ok()) {
      d.status = Status(won.status().code(), what + ": " + rank_name(0) +
                                                 " deciding the winner: " + won.status().message());
      return d;
    }
    d.config = won->config;
    d.results = std::move(won->results);
    for (const Config& c : won->finalists) d.finalists.push_back(c.to_string());
    return d;
  }

  // A decision received from `from` as this rank's error, or ok.
  Status failed(const std::string& mode, const Decision& d, int from, const std::string& key) {
    if (d.status.ok()) return {};
    return Status(d.status.code(), mode + ": " + rank_name(from) + " failed on key {" + key +
                                       "}: " + d.status.message());
  }
};

Coordinator::Coordinator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Coordinator::~Coordinator() = default;

int Coordinator::group_rank() const noexcept { return impl_->ex->rank(); }
int Coordinator::group_size() const noexcept { return impl_->ex->size(); }
int Coordinator::groups() const noexcept { return impl_->group_count; }
bool Coordinator::broken() const noexcept { return impl_->ex->broken(); }

Result<std::unique_ptr<Coordinator>> Coordinator::make(MPI_Comm comm, const Device& dev,
                                                       CoordinatorOptions options) {
  if (!std::isfinite(options.timeout_ms) || options.timeout_ms <= 0 || options.timeout_ms > 1e9) {
    return Status(StatusCode::invalid_argument,
                  "CoordinatorOptions::timeout_ms must be in (0, 1e9] ms, not " +
                      std::to_string(options.timeout_ms));
  }
  TUNE_RETURN_IF_ERROR(validate(options.share).with_context("CoordinatorOptions::share"));
  auto impl = std::make_unique<Impl>();
  impl->opts = options;
  const auto timeout = to_ms(options.timeout_ms);
  Exchange outer(comm, timeout);
  auto world = outer.duplicate("Coordinator::make: duplicating the communicator");
  TUNE_RETURN_IF_ERROR(world.status());
  impl->world = *world;
  MPI_Comm_set_errhandler(impl->world, MPI_ERRORS_RETURN);
  Exchange all(impl->world, timeout);
  // Every rank's full fingerprint: the groups are exact (equal texts), not hashed.
  auto prints = all.allgather(dev.info().fingerprint(),
                              "Coordinator::make: exchanging the device fingerprints");
  TUNE_RETURN_IF_ERROR(prints.status());
  std::map<std::string, int> color_of;
  for (std::size_t r = 0; r < prints->size(); ++r)
    color_of.emplace((*prints)[r], static_cast<int>(color_of.size()));
  const std::string& mine = (*prints)[static_cast<std::size_t>(all.rank())];
  // Every rank arrived at the allgather above, so this blocking split cannot wait on a
  // missing rank.
  if (int err = MPI_Comm_split(impl->world, color_of[mine], all.rank(), &impl->group);
      err != MPI_SUCCESS) {
    return Status(StatusCode::unavailable, "Coordinator::make: MPI_Comm_split failed");
  }
  MPI_Comm_set_errhandler(impl->group, MPI_ERRORS_RETURN);
  impl->group_count = static_cast<int>(color_of.size());
  for (std::size_t r = 0; r < prints->size(); ++r)
    if ((*prints)[r] == mine) impl->members.push_back(static_cast<int>(r));
  impl->ex = std::make_unique<Exchange>(impl->group, timeout);
  return std::unique_ptr<Coordinator>(new Coordinator(std::move(impl)));
}

namespace {

// Each call's key item for Impl::agree, with `suffix` (e.g. a hash of the candidates).
std::string key_item(const Result<std::string>& key, const std::string& suffix = {}) {
  if (!key.ok()) return "E" + status_text(key.status());
  return "K" + *key + suffix;
}

// Each call's key text ("" when it has none) and its key item for Impl::agree.
void key_texts(Autotuner& tuner, Device& dev, std::span<const ArgList> calls,
               std::vector<std::string>* keys, std::vector<std::string>* items) {
  for (ArgList args : calls) {
    auto k = tuner.key_text(dev, args);
    keys->push_back(k.ok() ? *k : std::string());
    items->push_back(key_item(k));
  }
}

// The calls whose key has not appeared in an earlier call, in order: a key given twice (two
// argument lists in one bucket) is decided once.
std::vector<std::size_t> distinct(const std::vector<std::string>& keys) {
  std::vector<std::size_t> out;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (seen.emplace(keys[i], i).second) out.push_back(i);
  return out;
}

// Each repeated key's outcome is its first call's.
void fill_repeats(const std::vector<std::string>& keys, std::vector<KeyOutcome>& out) {
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = first.emplace(keys[i], i);
    if (fresh) continue;
    out[i] = out[it->second];
    out[i].measured_here.clear();
  }
}

}  // namespace

Result<std::vector<KeyOutcome>> Coordinator::tune_collective(Autotuner& tuner, Device& dev,
                                                             std::span<const ArgList> calls) {
  Impl& m = *impl_;
  const std::string mode = "tune_collective";
  TUNE_RETURN_IF_ERROR(m.usable(mode));
  std::vector<std::string> keys, items;
  key_texts(tuner, dev, calls, &keys, &items);
  TUNE_RETURN_IF_ERROR(m.agree(mode, items));
  std::vector<KeyOutcome> out(calls.size());
  Status adopt_failed;
  for (std::size_t i : distinct(keys)) {
    KeyOutcome& o = out[i];
    o.key = keys[i];
    o.decided_by = 0;
    std::string blob;
    if (m.leader()) blob = detail::encode(Impl::tune_here(tuner, dev, calls[i], &o.source));
    const std::string what =
        mode + ", key {" + keys[i] + "}: waiting for " + m.rank_name(0) + "'s tuning";
    auto d = m.receive_decision(blob, what);
    TUNE_RETURN_IF_ERROR(d.status());
    TUNE_RETURN_IF_ERROR(m.failed(mode, *d, 0, keys[i]));
    o.config = d->config;
    if (!m.leader()) {
      Status st = tuner.adopt(dev, calls[i], d->config, d->results);
      if (adopt_failed.ok()) adopt_failed = st;
    }
  }
  TUNE_RETURN_IF_ERROR(m.commit(mode, adopt_failed));
  fill_repeats(keys, out);
  return out;
}

Result<std::vector<KeyOutcome>> Coordinator::share_space(Autotuner& tuner, Device& dev,
                                                         std::span<const ArgList> calls) {
  Impl& m = *impl_;
  const std::string mode = "share_space";
  TUNE_RETURN_IF_ERROR(m.usable(mode));
  std::vector<std::string> keys, items;
  std::vector<std::vector<Config>> cands(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    auto k = tuner.key_text(dev, calls[i]);
    keys.push_back(k.ok() ? *k : std::string());
    if (!k.ok()) {
      items.push_back(key_item(k));
      continue;
    }
    auto c = tuner.candidates(dev, calls[i]);
    if (!c.ok()) {
      items.push_back(key_item(c.status()));
      continue;
    }
    cands[i] = std::move(*c);
    std::string joined;
    for (const Config& cfg : cands[i]) joined += cfg.to_string() + "\n";
    // Ranks whose candidate lists differ (in content or order) would share a different space.
    items.push_back(key_item(k, " (candidates " + std::to_string(cands[i].size()) + ", hash " +
                                    hex(stable_hash(joined)) + ")"));
  }
  TUNE_RETURN_IF_ERROR(m.agree(mode, items));
  const int n = m.ex->size(), me = m.ex->rank();
  std::vector<KeyOutcome> out(calls.size());
  Status adopt_failed;
  for (std::size_t i : distinct(keys)) {
    KeyOutcome& o = out[i];
    o.key = keys[i];
    o.decided_by = 0;
    const std::vector<Config>& all = cands[i];
    // Round-robin: candidate j is timed by group rank j % n, and by no other in this round.
    for (std::size_t j = static_cast<std::size_t>(me); j < all.size();
         j += static_cast<std::size_t>(n))
      o.measured_here.push_back(all[j]);
    Result<std::vector<ConfigResult>> measured = std::vector<ConfigResult>{};
    if (!o.measured_here.empty()) measured = tuner.measure(dev, calls[i], o.measured_here);
    const std::string blob = measured.ok() ? detail::encode_results({}, *measured)
                                           : detail::encode_results(measured.status(), {});
    const std::string key_what = mode + ", key {" + keys[i] + "}";
    auto gathered = m.ex->gather(0, blob, key_what + ": gathering every rank's measurements");
    TUNE_RETURN_IF_ERROR(gathered.status());
    std::string decision;
    if (m.leader()) {
      decision = detail::encode(m.decide(*gathered, all, key_what, [&](std::span<const Config> f) {
        return tuner.measure(dev, calls[i], f);
      }));
    }
    const std::string what = key_what + ": waiting for " + m.rank_name(0) + "'s decision";
    auto d = m.receive_decision(decision, what);
    TUNE_RETURN_IF_ERROR(d.status());
    if (!d->status.ok()) return d->status;  // decide() named the mode, key and rank
    o.config = d->config;
    o.finalists = d->finalists;
    o.source = m.leader() ? ResultSource::tuned : ResultSource::shared;
    Status st = tuner.adopt(dev, calls[i], d->config, d->results);
    if (adopt_failed.ok()) adopt_failed = st;
  }
  TUNE_RETURN_IF_ERROR(m.commit(mode, adopt_failed));
  fill_repeats(keys, out);
  return out;
}

Result<std::vector<KeyOutcome>> Coordinator::share_keys(Autotuner& tuner, Device& dev,
                                                        std::span<const ArgList> calls) {
  Impl& m = *impl_;
  const std::string mode = "share_keys";
  TUNE_RETURN_IF_ERROR(m.usable(mode));
  std::vector<std::string> keys, items;
  key_texts(tuner, dev, calls, &keys, &items);
  TUNE_RETURN_IF_ERROR(m.agree(mode, items));
  const auto n = static_cast<std::size_t>(m.ex->size());
  const auto me = static_cast<std::size_t>(m.ex->rank());
  std::vector<KeyOutcome> out(calls.size());
  // The u-th distinct key is tuned by group rank u % n; each rank sends its decisions in order.
  const std::vector<std::size_t> uniq = distinct(keys);
  std::vector<std::string> mine;
  for (std::size_t u = me; u < uniq.size(); u += n) {
    const std::size_t i = uniq[u];
    mine.push_back(detail::encode(Impl::tune_here(tuner, dev, calls[i], &out[i].source)));
  }
  auto gathered = m.allgather_lists(mine, mode + ": waiting for every rank's tunings of its keys",
                                    mode + ": decisions");
  TUNE_RETURN_IF_ERROR(gathered.status());
  const std::vector<std::vector<std::string>>& by_rank = *gathered;
  std::vector<Decision> decided(calls.size());
  for (std::size_t u = 0; u < uniq.size(); ++u) {
    const std::size_t i = uniq[u], r = u % n, k = u / n;
    if (k >= by_rank[r].size())
      return Status(StatusCode::data_loss, mode + ": " + m.rank_name(static_cast<int>(r)) +
                                               " sent no decision for key {" + keys[i] + "}");
    auto d = detail::decode_decision(by_rank[r][k], mode + ": decision");
    TUNE_RETURN_IF_ERROR(d.status());
    TUNE_RETURN_IF_ERROR(m.failed(mode, *d, static_cast<int>(r), keys[i]));
    decided[i] = std::move(*d);
  }
  Status adopt_failed;
  for (std::size_t u = 0; u < uniq.size(); ++u) {
    const std::size_t i = uniq[u];
    KeyOutcome& o = out[i];
    o.key = keys[i];
    o.config = decided[i].config;
    o.decided_by = static_cast<int>(u % n);
    if (u % n == me) continue;
    o.source = ResultSource::shared;
    Status st = tuner.adopt(dev, calls[i], decided[i].config, decided[i].results);
    if (adopt_failed.ok()) adopt_failed = st;
  }
  TUNE_RETURN_IF_ERROR(m.commit(mode, adopt_failed));
  fill_repeats(keys, out);
  return out;
}

}  // namespace tune::mpi
