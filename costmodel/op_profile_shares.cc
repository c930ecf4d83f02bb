#include "costmodel/op_profile_shares.h"

#include <cctype>
#include <map>
#include <set>

#include "costmodel/lowering.h"

namespace layoutx::costmodel {

std::string normalized_op_name(const std::string& name) {
  std::string out;
  for (unsigned char ch : name) {
    if (std::isalnum(ch)) {
      out += static_cast<char>(std::tolower(ch));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

OpProfileShares shares_from_op_profile(const MeasurementRecord& graph, const std::vector<ProfiledOp>& rows,
                                       const std::string& id_prefix, const std::string& source, double share_sd) {
  OpProfileShares out;
  // 1. The graph as the converter is given it (unfused: the names a profile can carry).
  const std::vector<LoweredOp> ops = lower(build_graph(graph));
  std::vector<std::string> norm;
  for (const LoweredOp& op : ops) norm.push_back(normalized_op_name(op.name));
  // 2. Each row to the lowered op with the longest matching name; time per class.
  double total = 0;
  std::map<std::string, double> class_ms;                 // by class name (sorted: stable ids)
  std::map<std::string, std::set<std::string>> class_ops;  // the matched ops' own names
  for (const ProfiledOp& row : rows) {
    if (!(row.ms > 0)) continue;
    total += row.ms;
    const std::string n = normalized_op_name(row.name);
    size_t best = ops.size();
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::string& m = norm[i];
      const bool hit = !m.empty() && n.compare(0, m.size(), m) == 0 && (n.size() == m.size() || n[m.size()] == '_');
      if (hit && (best == ops.size() || m.size() > norm[best].size())) best = i;
    }
    if (best == ops.size()) {
      out.unmatched.push_back(row.name);
      continue;
    }
    const std::string cls = to_string(ops[best].op_class);
    class_ms[cls] += row.ms;
    class_ops[cls].insert(ops[best].name);
  }
  if (!(total > 0)) return out;
  // 3. One share per class: the rows' time in it over all the rows' time.
  for (const auto& [cls, ms] : class_ms) {
    MeasurementRecord r = graph;
    r.kind = MeasurementRecord::Kind::kOpShare;
    r.id = id_prefix + ":" + cls;
    r.source = source;
    r.ms = 0;
    r.ops.assign(class_ops[cls].begin(), class_ops[cls].end());
    r.share = ms / total;
    r.sd = share_sd;
    out.shares.push_back(std::move(r));
  }
  return out;
}

}  // namespace layoutx::costmodel
