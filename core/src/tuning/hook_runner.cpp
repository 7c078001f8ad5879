#include "hook_runner.hpp"

#include "tune/log.hpp"
#include "user_code.hpp"

namespace tune::detail {

HookRunner::HookRunner(Device& dev, const KernelDef& def, ArgList args,
                       const std::vector<int>& zero, const std::vector<int>& restore)
    : dev_(dev), def_(def), args_(args), zero_(zero), restore_(restore) {}

HookRunner::~HookRunner() {
  if (finished_ || (saved_.empty() && pending_post_ == nullptr)) return;
  Status st = finish(Status(StatusCode::internal, "tuning ended early"));
  if (!st.ok()) log_warning("restoring buffers after tuning " + def_.name + ": " + st.to_string());
}

bool HookRunner::active() const noexcept {
  return !zero_.empty() || !restore_.empty() || static_cast<bool>(def_.pre_hook) ||
         static_cast<bool>(def_.post_hook);
}

Status HookRunner::snapshot() {
  std::vector<int> all = zero_;
  all.insert(all.end(), restore_.begin(), restore_.end());
  for (int i : all) {
    DeviceBuffer* b = args_[static_cast<std::size_t>(i)].buffer;
    if (saved_.count(b)) continue;
    auto copy = dev_.alloc(b->size_bytes());
    if (!copy.ok()) return copy.status().with_context("saving buffer for tuning hooks");
    TUNE_RETURN_IF_ERROR(dev_.copy(**copy, *b, b->size_bytes()));
    saved_.emplace(b, std::move(*copy));
  }
  return {};
}

LaunchResets HookRunner::resets() const {
  LaunchResets r;
  for (int i : zero_) r.zero.push_back(args_[static_cast<std::size_t>(i)].buffer);
  for (int i : restore_) {
    DeviceBuffer* b = args_[static_cast<std::size_t>(i)].buffer;
    r.restore.push_back({b, saved_.at(b).get()});
  }
  return r;
}

BeforeLaunch HookRunner::before(const Config* c) {
  if (def_.pre_hook || def_.post_hook) {
    return BeforeLaunch([this, c] {
      set_config(c);
      return before_launch();
    });
  }
  BeforeLaunch b;
  if (active()) b.resets = resets();
  return b;
}

Status HookRunner::before_launch() {
  TUNE_RETURN_IF_ERROR(flush_post());
  TUNE_RETURN_IF_ERROR(apply_resets(dev_, resets()));
  if (!def_.pre_hook) {
    if (def_.post_hook) pending_post_ = config_;
    return {};
  }
  // Due even if the pre-hook fails: the post-hook then hears the pre-hook's failure.
  pending_post_ = config_;
  Status st =
      call_user_status("pre_hook", config_, [&] { return def_.pre_hook(dev_, args_, *config_); });
  if (!st.ok()) {
    Status post = flush_post(st);
    if (post.code() == StatusCode::callback_failed) return post;
  }
  return st;
}

Status HookRunner::flush_post(const Status& outcome) {
  const Config* c = pending_post_;
  pending_post_ = nullptr;
  if (c == nullptr || !def_.post_hook) return {};
  return call_user_status("post_hook", c, [&] { return def_.post_hook(dev_, args_, *c, outcome); });
}

Status HookRunner::finish(const Status& outcome) {
  finished_ = true;
  Status post = flush_post(outcome);
  Status restored = restore_all();
  return !post.ok() ? post : restored;
}

Status HookRunner::zero_outputs() { return zero_buffers(dev_, args_, zero_); }

Status HookRunner::restore_all() {
  for (auto& [b, copy] : saved_) TUNE_RETURN_IF_ERROR(dev_.copy(*b, *copy, b->size_bytes()));
  return {};
}

Status zero_buffers(Device& dev, ArgList args, const std::vector<int>& zero) {
  LaunchResets r;
  for (int i : zero) r.zero.push_back(args[static_cast<std::size_t>(i)].buffer);
  return apply_resets(dev, r);
}

}  // namespace tune::detail
