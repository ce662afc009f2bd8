// The census of kernel tables (registry.h).
#include "cpu/registry.h"

namespace fixq::cpu_detail {

namespace {
// Filled before main, by the constructors of FIXQ_KERNEL_TABLE's recorders.
std::vector<TableRecord>& census() {
  static std::vector<TableRecord> tables;
  return tables;
}
}  // namespace

TableRecorder::TableRecorder(const TableRecord& r) { census().push_back(r); }

const std::vector<TableRecord>& recorded_tables() { return census(); }

}  // namespace fixq::cpu_detail
