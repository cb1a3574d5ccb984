// The pieces render() is made of, internal to render*.cpp: the Emitter
// (output handed on in pieces), the Table model that the terminal, Markdown
// and CSV formats share (built from a Report by render_tables.cpp), and one
// writer per format: render_text_formats.cpp lays Tables out, render_json.cpp
// writes JSON straight from the Report (its shape is not a table's).
#pragma once

#include "base/json_writer.hpp"
#include "render.hpp"
#include "report_data.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::report {

using Row = std::vector<std::string>;
using RowFn = std::function<void(Row&&)>;

struct Table {
  std::string key;    // CSV section name
  std::string title;  // table and markdown heading
  std::vector<std::string> columns;
  std::vector<bool> numeric;  // right-aligned
  std::vector<Row> rows;
  std::vector<std::string> notes;  // lines before the table
  std::string empty;               // said instead of an empty table
  // Big tables (one row per unit or per unit and phase) are produced row by
  // row while written, never held: memory stays at one row.
  std::function<void(const RowFn&)> produce;

  void for_each_row(const RowFn& fn) const {
    if (produce) {
      produce(fn);
      return;
    }
    for (const Row& r : rows) fn(Row(r));
  }
};

// Output in pieces of about kFlushBytes to the caller's writer.
class Emitter {
 public:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  explicit Emitter(const Writer& w) : write_(w) {}
  ~Emitter() { flush(); }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    if (!buf_.empty()) write_(buf_);
    buf_.clear();
  }

 private:
  const Writer& write_;
  std::string buf_;
};

// The tables of the sections asked for: times as human_ns and the terminal's
// wording when `human`, else raw ns and CSV column names (*_ns).
std::vector<Table> build(const Report& r, const Sections& sec, bool human);
// The caches section (render_caches.cpp): its tables into `out`, its JSON into `j`.
void cache_tables(const Report& r, std::vector<Table>& out);
void json_caches(const Report& r, detail::JsonWriter& j);
// The autotune section (render_autotune.cpp), likewise; times as human_ns
// when `human`, else ns.
void autotune_tables(const Report& r, bool human, std::vector<Table>& out);
void json_autotune(const Report& r, detail::JsonWriter& j);
// The critical path section (render_critical_path.cpp), likewise, and its
// totals as one line.
void critical_path_tables(const Report& r, bool human, std::vector<Table>& out);
void json_critical_path(const Report& r, detail::JsonWriter& j);
std::string critical_path_summary(const CriticalPath& p);
// JSON values shared by the sections (render_json.cpp): a pid or tid as
// written (number or string), null for none; an optional time, null for none.
void json_id(detail::JsonWriter& j, const Id& id);
void json_pid(detail::JsonWriter& j, const std::optional<Id>& pid);
void json_opt(detail::JsonWriter& j, std::string_view key, const std::optional<std::int64_t>& v);

// v with `decimals` decimals ("%.*f").
std::string fixed(double v, int decimals);
// part of whole as a percentage with one decimal ("12.5%"), "-" when whole <= 0.
std::string percent(std::int64_t part, std::int64_t whole);
// A timestamp in ns as µs with three decimals, exactly ("1712195495406752.797"):
// never through a double, whose 53 bits cannot hold a µs epoch time to the ns.
std::string us_text(std::int64_t ns);
// `s` with its control characters (C0, DEL, C1) as visible escapes ("\x1b",
// "\u009b"): the terminal and Markdown show names, never act on them.
std::string visible(std::string_view s);

void write_text(const std::vector<Table>& tables, Emitter& em);
void write_markdown(const std::vector<Table>& tables, Emitter& em);
void write_csv(const std::vector<Table>& tables, Emitter& em);
void write_json(const Report& r, const Sections& sec, Emitter& em);

// What a caller of write_json_members adds to the JSON format.
struct JsonOptions {
  // When set, each artifact also gets "href": this function of its path
  // (the HTML report's link to it).
  std::function<std::string(const std::string& path)> artifact_href;
};
// The JSON format's members (no enclosing braces) into `j`, whose buffer is
// em.buf(); `em` is flushed between units. The HTML report embeds them.
void write_json_members(const Report& r, const Sections& sec, detail::JsonWriter& j, Emitter& em,
                        const JsonOptions& opt);

struct Comparison;
struct CompareSections;
// The comparison's JSON members (no enclosing braces), likewise.
void write_comparison_members(const Comparison& c, const CompareSections& sec,
                              detail::JsonWriter& j, Emitter& em);

// JSON made safe inside <script>: every '<' as \u003c (so "</script>" or
// "<!--" in a name cannot end the block or start markup) and U+2028/U+2029
// as \u2028/\u2029 (line terminators to older JS parsers). These bytes only
// occur inside JSON strings, where the escapes stand for the same
// characters. Pieces may be cut anywhere: a U+2028's first bytes at the end
// of one wait for the next (the writer flushes between units, so this is
// for safety, not the usual case). render_html.cpp.
class ScriptSafeJson {
 public:
  explicit ScriptSafeJson(Emitter& out) : out_(out) {}
  void write(std::string_view piece);  // escaped into out
  void finish();                       // what is held, as it was

 private:
  void append(std::string& o, std::string_view s);

  Emitter& out_;
  std::string held_;
};

// The HTML format (render_html.cpp): one self-contained page.
void write_html(const Report& r, const Sections& sec, const Comparison* comparison,
                const CompareSections* compare_sections, const HtmlOptions& opt, Emitter& em);

}  // namespace jitscope::report
