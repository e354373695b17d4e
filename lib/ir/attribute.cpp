#include "ir/attribute.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace qairt {

std::string AttributeToString(const Attribute& a) {
  struct Visitor {
    std::string operator()(int64_t v) const { return fmt::format("{}", v); }
    std::string operator()(double v) const { return fmt::format("{}", v); }
    std::string operator()(const std::string& v) const { return fmt::format("\"{}\"", v); }
    std::string operator()(const std::vector<int64_t>& v) const { return fmt::format("{}", v); }
    std::string operator()(const std::vector<double>& v) const { return fmt::format("{}", v); }
    std::string operator()(const std::vector<std::string>& v) const { return fmt::format("{}", v); }
  };
  return std::visit(Visitor{}, a);
}

}  // namespace qairt
