// TuningReports as plain Python data: report_dict is one tuning (its results nested),
// report_rows one flat dict per configuration of every tuning (pandas.DataFrame(rows) is a
// table: kernel, key, config, each parameter as a column, status, median_ns...).
// ReportLog keeps what a Tuner's listener heard; it is filled on the tuning thread without the
// GIL and read under its own mutex.
#pragma once

#include <pybind11/pybind11.h>

#include <mutex>
#include <vector>

#include "tune/autotuner.hpp"

namespace tune::python {

namespace py = pybind11;

class ReportLog {
 public:
  void add(const TuningReport& r) {
    std::lock_guard lock(mu_);
    reports_.push_back(r);
  }
  std::vector<TuningReport> all() const {
    std::lock_guard lock(mu_);
    return reports_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<TuningReport> reports_;
};

py::dict report_dict(const TuningReport& r);
py::list report_rows(const std::vector<TuningReport>& reports);

}  // namespace tune::python
