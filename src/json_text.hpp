// JSON text for the documents the library writes itself (the report of a
// Domain, traces): the library has no JSON dependency (private header).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace hympi {
namespace detail {

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest text that reads back as the same double; null when not finite.
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  double back = 0;
  for (int digits = 1; digits < 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, v);
    if (std::sscanf(shorter, "%lf", &back) == 1 && back == v) return shorter;
  }
  return buf;
}

}  // namespace detail
}  // namespace hympi
