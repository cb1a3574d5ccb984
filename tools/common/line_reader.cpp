#include "line_reader.hpp"

#include <cstring>

namespace jitscope::tools {

bool LineReader::next(std::string* line, std::string* error) {
  line->clear();
  error->clear();
  bool any = false;  // bytes of this line seen (an empty line before '\n' counts)
  for (;;) {
    if (pos_ < end_) {
      const char* p = buf_.data() + pos_;
      const auto* nl = static_cast<const char*>(std::memchr(p, '\n', end_ - pos_));
      if (nl != nullptr) {
        line->append(p, static_cast<std::size_t>(nl - p));
        pos_ += static_cast<std::size_t>(nl - p) + 1;
        return true;
      }
      line->append(p, end_ - pos_);
      any = true;
      pos_ = end_;
    }
    if (eof_) return any;
    const long n = in_.read(buf_.data(), buf_.size(), error);
    if (n < 0) return false;
    if (n == 0) {
      eof_ = true;
      return any;
    }
    pos_ = 0;
    end_ = static_cast<std::size_t>(n);
  }
}

}  // namespace jitscope::tools
