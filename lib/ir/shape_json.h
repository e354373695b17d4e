// A shape as JSON: known dims as numbers, symbolic dims as their name,
// unknown dims as null; an unknown rank as null. Shared by every report.
#pragma once

#include "ir/shape.h"
#include "support/json_writer.h"

namespace qairt {

void WriteShapeJson(JsonWriter& w, const Shape& shape);

}  // namespace qairt
