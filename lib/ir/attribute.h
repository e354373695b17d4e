// Typed op attributes. Names follow ONNX where the concept exists (strides,
// pads, dilations, group, axis, perm, keepdims, epsilon) so that importers and
// the executor share one meaning; the op registry documents each op's set.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace qairt {

// Alternative order = qairt_attr_type - 1 (INT, FLOAT, STRING, INTS, FLOATS, STRINGS).
using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>>;

// Ordered by name so iteration (and the C API's attribute index) is deterministic.
using AttributeMap = std::map<std::string, Attribute, std::less<>>;

std::string AttributeToString(const Attribute& a);

}  // namespace qairt
