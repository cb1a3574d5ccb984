// The formats that lay Tables out: the terminal's aligned columns (long
// text cells clipped), GitHub Markdown tables, and CSV (one table after
// another, each after a "# <section>" line). JSON is not a table layout
// (render_json.cpp). The terminal and Markdown show every text through
// visible(): a name's ESC or CR would act on the terminal; CSV quotes its
// cells instead and keeps them as they are.
#include "base/csv_cell.hpp"
#include "render_internal.hpp"

#include <algorithm>
#include <string_view>

namespace jitscope::report {
namespace {

// Display width: code points (the tables' µs is two bytes, one column).
std::size_t width(std::string_view s) {
  std::size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// A text cell cut to kMaxTextWidth code points ("..." at the end): one long
// name (a clang template instantiation) must not widen a whole table.
constexpr std::size_t kMaxTextWidth = 80;
std::string clip(const std::string& s) {
  if (width(s) <= kMaxTextWidth) return s;
  std::size_t n = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++n > kMaxTextWidth - 3) break;
  }
  return s.substr(0, i) + "...";
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : visible(s)) {
    if (c == '|')
      out += "\\|";
    else
      out.push_back(c);
  }
  return out;
}

// Every cell of a row through visible().
void make_visible(Row& row) {
  for (std::string& c : row) c = visible(c);
}

}  // namespace

void write_text(const std::vector<Table>& tables, Emitter& em) {
  std::string& out = em.buf();
  bool first = true;
  for (const Table& tb : tables) {
    if (!first) out += "\n";
    first = false;
    out += tb.key == "header" ? visible(tb.title) + "\n" : "== " + visible(tb.title) + " ==\n";
    for (const std::string& n : tb.notes) out += visible(n) + "\n";
    if (tb.key == "header") {  // "  field   value" lines
      std::vector<Row> rows = tb.rows;
      std::size_t w = 0;
      for (Row& row : rows) {
        make_visible(row);
        w = std::max(w, width(row[0]));
      }
      for (const Row& row : rows)
        out += "  " + row[0] + std::string(w - width(row[0]) + 2, ' ') + row[1] + "\n";
      continue;
    }
    // Two passes over the rows: the column widths, then the lines.
    Row columns = tb.columns;
    make_visible(columns);
    std::vector<std::size_t> w(columns.size(), 0);
    for (std::size_t i = 0; i < columns.size(); ++i) w[i] = width(columns[i]);
    std::size_t rows = 0;
    auto clip_row = [&](Row& row) {  // escaped first: an escape counts in the width
      make_visible(row);
      for (std::size_t i = 0; i < row.size() && i < tb.numeric.size(); ++i) {
        if (!tb.numeric[i]) row[i] = clip(row[i]);
      }
    };
    tb.for_each_row([&](Row&& row) {
      ++rows;
      clip_row(row);
      for (std::size_t i = 0; i < row.size() && i < w.size(); ++i)
        w[i] = std::max(w[i], width(row[i]));
    });
    if (rows == 0) {
      out += tb.empty.empty() ? "(none)\n" : visible(tb.empty) + "\n";
      continue;
    }
    auto line = [&](const Row& row) {
      std::string l;
      for (std::size_t i = 0; i < row.size() && i < w.size(); ++i) {
        const std::string pad(w[i] - width(row[i]), ' ');
        l += tb.numeric[i] ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : "");
        if (i + 1 < row.size()) l += "  ";
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
      em.maybe_flush();
    };
    line(columns);
    Row rule;
    for (std::size_t x : w) rule.emplace_back(x, '-');
    line(rule);
    tb.for_each_row([&](Row&& row) {
      clip_row(row);
      line(row);
    });
  }
}

void write_markdown(const std::vector<Table>& tables, Emitter& em) {
  std::string& out = em.buf();
  bool first = true;
  for (const Table& tb : tables) {
    if (!first) out += "\n";
    first = false;
    // Appended piece by piece: a literal + std::string&& trips GCC 12's
    // -Wrestrict at -O3.
    out += tb.key == "header" ? "# " : "## ";
    out += md_cell(tb.title);
    out += "\n\n";
    for (const std::string& n : tb.notes) out += md_cell(n) + "\n\n";
    std::string head = "|", rule = "|";
    for (std::size_t i = 0; i < tb.columns.size(); ++i) {
      head += ' ';
      head += md_cell(tb.columns[i]);
      head += " |";
      rule += tb.numeric[i] ? " ---: |" : " --- |";
    }
    bool any = false;
    tb.for_each_row([&](Row&& row) {
      if (!any) out += head + "\n" + rule + "\n";
      any = true;
      std::string l = "|";
      for (const std::string& c : row) {
        l += ' ';
        l += md_cell(c);
        l += " |";
      }
      out += l + "\n";
      em.maybe_flush();
    });
    if (!any) out += (tb.empty.empty() ? std::string("(none)") : md_cell(tb.empty)) + "\n";
  }
}

void write_csv(const std::vector<Table>& tables, Emitter& em) {
  std::string& out = em.buf();
  bool first = true;
  for (const Table& tb : tables) {
    if (!first) out += "\n";
    first = false;
    out += "# " + tb.key + "\n";
    auto line = [&](const Row& row) {
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i) out.push_back(',');
        out += detail::csv_cell(row[i]);
      }
      out.push_back('\n');
      em.maybe_flush();
    };
    std::size_t rows = 0;
    tb.for_each_row([&](Row&&) { ++rows; });
    if (rows == 0 && !tb.empty.empty()) out += "# " + tb.empty + "\n";
    line(tb.columns);
    tb.for_each_row([&](Row&& row) { line(row); });
  }
}

}  // namespace jitscope::report
