#include "parse.hpp"

#include <cerrno>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>

#include "hympi/scheme.hpp"

namespace hympi::cli {

namespace {
constexpr long long kMaxBytes = 1LL << 30;  // the largest byte count any option takes
}  // namespace

bool parse_int(const std::string& text, long long lo, long long hi, long long& out) {
  if (text.empty()) return false;
  std::size_t start = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (start == text.size()) return false;
  for (std::size_t i = start; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0' || v < lo || v > hi) return false;
  out = v;
  return true;
}

bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || *end != '\0' || !std::isfinite(v)) return false;
  out = v;
  return true;
}

ByteParse parse_bytes_checked(const std::string& text, long long& out) {
  // The grammar of docs/units.md, the same as hympi-lab's (cli_args.byte_count):
  // a decimal number without sign (1, 1.5, 1e6, 2.5e3) and an optional unit.
  static const std::pair<const char*, long long> units[] = {
      {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}, {"kB", 1000}, {"MB", 1000000},
      {"GB", 1000000000}, {"k", 1000}, {"M", 1000000}, {"G", 1000000000}, {"B", 1}};
  std::string number = text;
  long long unit = 1;
  for (const auto& [suffix, factor] : units) {
    const std::string sfx = suffix;
    if (text.size() > sfx.size() && text.compare(text.size() - sfx.size(), sfx.size(), sfx) == 0) {
      number = text.substr(0, text.size() - sfx.size());
      unit = factor;
      break;
    }
  }
  // digits [. digits] [e|E [+|-] digits], exact: the mantissa as an integer
  // and a power of ten, so 1.5MB is 1500000 with no rounding.
  std::size_t i = 0;
  __int128 mantissa = 0;
  int digits = 0, scale = 0;
  bool big = false;  // more digits than any byte count has: out of range
  auto digit = [&](char c, bool fraction) {
    if (mantissa >= static_cast<__int128>(100000000000000000LL) * 1000) {
      big = true;
      return;
    }
    mantissa = mantissa * 10 + (c - '0');
    if (fraction) --scale;
  };
  for (; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i, ++digits) digit(number[i], false);
  if (i < number.size() && number[i] == '.') {
    for (++i; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i, ++digits) digit(number[i], true);
  }
  if (digits == 0) return ByteParse::Malformed;
  if (i < number.size() && (number[i] == 'e' || number[i] == 'E')) {
    ++i;
    const int sign = i < number.size() && (number[i] == '-' || number[i] == '+') ? (number[i++] == '-' ? -1 : 1) : 1;
    int exponent = 0, exp_digits = 0;
    for (; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i, ++exp_digits)
      exponent = std::min(exponent * 10 + (number[i] - '0'), 10000);
    if (exp_digits == 0) return ByteParse::Malformed;
    scale += sign * exponent;
  }
  if (i != number.size()) return ByteParse::Malformed;
  if (mantissa == 0) return ByteParse::OutOfRange;
  if (big || scale > 40) return ByteParse::OutOfRange;
  __int128 value = mantissa * unit;
  for (; scale > 0; --scale) {
    value *= 10;
    if (value > kMaxBytes) return ByteParse::OutOfRange;
  }
  for (; scale < 0; ++scale) {
    if (value % 10 != 0) return value < 10 * kMaxBytes ? ByteParse::Malformed : ByteParse::OutOfRange;
    value /= 10;
  }
  if (value < 1 || value > kMaxBytes) return ByteParse::OutOfRange;
  out = static_cast<long long>(value);
  return ByteParse::Ok;
}

bool parse_bytes(const std::string& text, long long& out) {
  return parse_bytes_checked(text, out) == ByteParse::Ok;
}

bool looks_like_integer(const std::string& text) {
  const std::size_t start = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > start && text.find_first_not_of("0123456789", start) == std::string::npos;
}

std::string int_range_message(const std::string& name, const std::string& text, long long lo,
                              long long hi, const std::string& unit) {
  const std::string range =
      std::to_string(lo) + " .. " + std::to_string(hi) + (unit.empty() ? "" : " " + unit);
  if (looks_like_integer(text)) return name + " " + text + " is out of range: accepted " + range;
  return name + " '" + text + "': expected an integer, " + range;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

namespace {

// Up to 2^30 points per axis: index arithmetic stays in range.
constexpr long long kMaxAxis = 1LL << 30;

}  // namespace

bool parse_grid(const std::string& text, std::array<int, 3>& out, std::string& why, GridKind kind) {
  const bool procs = kind == GridKind::Processes;
  const std::string shape = procs ? "PXxPYxPZ or P^3" : "NXxNYxNZ or N^3";
  const std::string item = procs ? "process count" : "dimension";
  std::vector<std::string> parts;
  auto caret = text.find('^');
  if (caret != std::string::npos) {
    if (text.substr(caret) != "^3") {
      why = "only " + std::string(procs ? "P^3" : "N^3") + " is accepted as a power";
      return false;
    }
    const std::string n = text.substr(0, caret);
    parts = {n, n, n};
  } else {
    parts = split(text, 'x');
  }
  if (parts.size() != 3) {
    why = "expected three " + std::string(procs ? "process counts " : "dimensions ") + shape + ", got " +
          std::to_string(parts.size());
    return false;
  }
  for (int d = 0; d < 3; ++d) {
    long long v = 0;
    if (!parse_int(parts[d], 1, kMaxAxis, v)) {
      why = item + " '" + parts[d] + "' " +
            (looks_like_integer(parts[d]) ? "is out of range" : "is not an integer") + ": accepted 1 .. " +
            std::to_string(kMaxAxis);
      return false;
    }
    out[d] = static_cast<int>(v);
  }
  return true;
}

std::string rename_parameters(const std::string& message,
                              const std::function<std::string(const std::string&)>& rename) {
  std::string out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t open = message.find('`', pos);
    const std::size_t close = open == std::string::npos ? open : message.find('`', open + 1);
    if (close == std::string::npos) return out + message.substr(pos);
    out += message.substr(pos, open - pos) + rename(message.substr(open + 1, close - open - 1));
    pos = close + 1;
  }
}

std::string plain_parameters(const std::string& message) {
  return rename_parameters(message, [](const std::string& name) { return name; });
}

std::string unknown_scheme_message(const std::string& name) {
  return "unknown scheme '" + name + "' (valid: " + scheme_names() + ")";
}

std::vector<std::string> check_threads_and_nodes(int threads, int ranks_per_node, int ranks) {
  std::vector<std::string> e;
  if (threads < 1 || threads > 1024)
    e.push_back("--threads " + std::to_string(threads) + " is out of range: accepted 1 .. 1024");
  if (ranks_per_node > 0 && ranks % ranks_per_node)
    e.push_back("--ranks-per-node " + std::to_string(ranks_per_node) + " does not divide the " +
                std::to_string(ranks) + " ranks");
  return e;
}

}  // namespace hympi::cli
