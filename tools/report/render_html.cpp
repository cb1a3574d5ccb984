// The HTML format: one self-contained page (docs/report-html.md). The page
// is a fixed skeleton (a <section> per report section), the embedded CSS,
// the report's data as JSON in <script type="application/json"
// id="jitscope-data">, and the embedded script that builds the tables,
// charts and unit details from that data. The data is the JSON format's
// members (write_json_members, one serializer for both) plus what only the
// page needs (artifact links, the comparison), streamed: memory stays at
// one piece, as for the other formats.
#include "compare.hpp"
#include "html_assets.hpp"
#include "render_internal.hpp"

#include <filesystem>

namespace jitscope::report {
namespace {

bool unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// Percent-encoded (RFC 3986), '/' kept as the path separator.
std::string percent_encode_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : path) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c) || c == '/') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    }
  }
  return out;
}

void section_open(std::string& o, const char* id, const char* title) {
  o += "<section id=\"";
  o += id;
  o += "\"><h2>";
  o += title;
  o += "</h2>\n";
}

// A pager (the units table's is the one the DOM contract names).
void pager(std::string& o, const char* id) {
  o += "<div id=\"";
  o += id;
  o += "\" class=\"pager\"><button type=\"button\" class=\"page-prev\">&lsaquo; prev</button>"
       "<span class=\"page-info\"></span>"
       "<button type=\"button\" class=\"page-next\">next &rsaquo;</button></div>\n";
}

struct PageSections {
  bool summary, compare, units, compile_times, gpu, top_spans;
  bool ir_growth;      // only with passes that carried IR sizes
  bool caches;         // only with lookups: most traces have none
  bool autotune;       // only with tuning sessions
  bool critical_path;  // with units
};

void skeleton(std::string& o, const PageSections& s) {
  o += "<header><h1>jitscope report</h1><nav>";
  const std::pair<bool, const char*> links[] = {
      {s.summary, "<a href=\"#summary\">Summary</a>"},
      {s.compare, "<a href=\"#compare\">Comparison</a>"},
      {s.units, "<a href=\"#units\">Compile units</a><a href=\"#timeline\">Timeline</a>"},
      {s.critical_path, "<a href=\"#critical-path\">Critical path</a>"},
      {s.compile_times, "<a href=\"#compile-times\">Compile times</a>"},
      {s.gpu, "<a href=\"#gpu\">GPU</a>"},
      {s.top_spans, "<a href=\"#top-spans\">Slowest spans</a>"},
      {s.caches, "<a href=\"#caches\">Caches</a>"},
      {s.autotune, "<a href=\"#autotune\">Autotuning</a>"}};
  for (const auto& [on, link] : links) {
    if (on) o += link;
  }
  o += "</nav></header>\n<noscript>This report is built by its script: enable JavaScript to "
       "see it.</noscript>\n<main>\n";
  if (s.summary) {
    section_open(o, "summary", "Summary");
    o += "</section>\n";
  }
  if (s.compare) {
    section_open(o, "compare", "Comparison with the baseline");
    o += "</section>\n";
  }
  if (s.units) {
    section_open(o, "units", "Compile units");
    o += "<div class=\"toolbar\"><input id=\"units-filter\" type=\"search\" "
         "placeholder=\"filter: name, unit key or compile id\" aria-label=\"filter units\">";
    pager(o, "units-pager");
    o += "</div>\n<table id=\"units-table\"><thead></thead><tbody></tbody></table>\n"
         "<h3>Failed passes</h3>\n<p id=\"failed-passes-note\" class=\"note\"></p>\n"
         "<table id=\"failed-passes-table\" class=\"data\"><thead></thead><tbody></tbody>"
         "</table>\n</section>\n";
    section_open(o, "timeline", "Timeline (compile units per thread)");
    o += "<div class=\"toolbar\"><button type=\"button\" id=\"timeline-zoom-in\">zoom in</button>"
         "<button type=\"button\" id=\"timeline-zoom-out\">zoom out</button>"
         "<button type=\"button\" id=\"timeline-reset\">reset</button>"
         "<span id=\"timeline-note\" class=\"note\"></span></div>\n"
         "<svg id=\"timeline-chart\" width=\"0\" height=\"0\"></svg>\n</section>\n";
  }
  if (s.critical_path) {
    section_open(o, "critical-path",
                 "Critical path (the units the wall time waited for, against the work)");
    o += "<p id=\"critical-path-note\" class=\"note\"></p>\n"
         "<div id=\"critical-path-bar\" class=\"cp-bar\" aria-label=\"the path across the wall "
         "time\"></div>\n";
    pager(o, "critical-path-pager");
    o += "<table id=\"critical-path-table\" class=\"data\"><thead></thead><tbody></tbody>"
         "</table>\n</section>\n";
  }
  if (s.compile_times) {
    section_open(o, "compile-times", "Compile times (per span name)");
    o += "<div class=\"toolbar\"><input id=\"compile-times-filter\" type=\"search\" "
         "placeholder=\"filter: name\" aria-label=\"filter names\">";
    pager(o, "compile-times-pager");
    o += "</div>\n<table id=\"compile-times-table\" class=\"data\"><thead></thead><tbody></tbody>"
         "</table>\n";
    if (s.ir_growth) {
      o += "<h3 id=\"ir-growth\">IR growth per pass (the adapters' ir_size: LLVM instructions, "
           "MLIR operations), summed over its runs</h3>\n";
      pager(o, "ir-growth-pager");
      o += "<table id=\"ir-growth-table\" class=\"data\"><thead></thead><tbody></tbody></table>\n";
    }
    o += "</section>\n";
  }
  if (s.gpu) {
    section_open(o, "gpu", "GPU attribution (kernels per unit that built them)");
    o += "<p id=\"gpu-note\" class=\"note\"></p>\n";
    pager(o, "gpu-pager");
    o += "<table id=\"gpu-table\" class=\"data\"><thead></thead><tbody></tbody></table>\n"
         "<h3 id=\"gpu-work\">GPU work and CUDA calls per name (kernels, copies, sets, "
         "host calls)</h3>\n";
    pager(o, "gpu-work-pager");
    o += "<table id=\"gpu-work-table\" class=\"data\"><thead></thead><tbody></tbody></table>\n"
         "</section>\n";
  }
  if (s.top_spans) {
    section_open(o, "top-spans", "Slowest spans");
    o += "<table id=\"top-spans-table\" class=\"data\"><thead></thead><tbody></tbody></table>\n"
         "</section>\n";
  }
  if (s.caches) {
    section_open(o, "caches", "Caches (lookups per layer, and why each missed)");
    o += "<p id=\"caches-note\" class=\"note\"></p>\n"
         "<table id=\"caches-table\" class=\"data\"><thead></thead><tbody></tbody></table>\n"
         "<h3 id=\"cache-misses\">Why each layer missed: the key parts that differ from the "
         "nearest earlier key of the layer</h3>\n";
    pager(o, "cache-misses-pager");
    o += "<table id=\"cache-misses-table\" class=\"data\"><thead></thead><tbody></tbody>"
         "</table>\n</section>\n";
  }
  if (s.autotune) {
    section_open(o, "autotune",
                 "Autotuning (per tuning session: compile against benchmark, time to the winner)");
    o += "<p id=\"autotune-note\" class=\"note\"></p>\n"
         "<table id=\"autotune-table\" class=\"data\"><thead></thead><tbody></tbody></table>\n"
         "<h3 id=\"autotune-trials\">Every trial: its config, compile and benchmark</h3>\n";
    pager(o, "autotune-trials-pager");
    o += "<table id=\"autotune-trials-table\" class=\"data\"><thead></thead><tbody></tbody>"
         "</table>\n</section>\n";
  }
  o += "</main>\n";
}

}  // namespace

void ScriptSafeJson::write(std::string_view piece) {
  std::string& o = out_.buf();
  if (!held_.empty()) {
    // The held bytes lead the piece (rare: a piece that ended in a cut
    // U+2028/2029 lead). Joined whole, so that bytes held again (an invalid
    // E2 E2 80 ...) stay in order.
    std::string joined = std::move(held_);
    held_.clear();
    joined.append(piece);
    append(o, joined);
  } else {
    append(o, piece);
  }
  out_.maybe_flush();
}

void ScriptSafeJson::finish() {
  out_.buf() += held_;  // a lone lead byte at the very end: no U+2028, as it was
  held_.clear();
}

void ScriptSafeJson::append(std::string& o, std::string_view s) {
  std::size_t run = 0;  // start of the bytes not yet copied
  for (std::size_t k = 0; k < s.size(); ++k) {
    const char c = s[k];
    if (c == '<') {
      o.append(s.substr(run, k - run));
      o += "\\u003c";
      run = k + 1;
    } else if (c == '\xe2' && k + 2 < s.size()) {
      if (s[k + 1] == '\x80' && (s[k + 2] == '\xa8' || s[k + 2] == '\xa9')) {
        o.append(s.substr(run, k - run));
        o += s[k + 2] == '\xa8' ? "\\u2028" : "\\u2029";
        k += 2;
        run = k + 1;
      }
    } else if (c == '\xe2' && (k + 1 == s.size() || s[k + 1] == '\x80')) {  // cut: wait
      o.append(s.substr(run, k - run));
      held_.assign(s.substr(k));
      return;
    }
  }
  o.append(s.substr(run));
}

std::string artifact_href(const std::string& path, const std::string& base) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (base.empty()) {  // the page's folder is unknown: no link is made relative
    p = p.lexically_normal();
    return (p.is_absolute() ? "file://" : "") + percent_encode_path(p.generic_string());
  }
  if (p.is_relative()) p = fs::path(base) / p;  // SDK paths are absolute; others: from base
  p = p.lexically_normal();
  fs::path b = fs::path(base).lexically_normal();
  if (!b.has_filename() && b.has_parent_path() && b != b.root_path()) b = b.parent_path();
  const fs::path rel = p.lexically_relative(b);
  if (!rel.empty() && rel != "." && *rel.begin() != "..") {
    return percent_encode_path(rel.generic_string());
  }
  return "file://" + percent_encode_path(p.generic_string());
}

void write_html(const Report& r, const Sections& sec, const Comparison* comparison,
                const CompareSections* compare_sections, const HtmlOptions& opt, Emitter& em) {
  const PageSections page{sec.header,
                          comparison != nullptr,
                          sec.units,
                          sec.compile_times || sec.phases,
                          sec.gpu,
                          sec.top_spans,
                          sec.compile_times && !r.ir_growth.empty(),
                          sec.caches && !r.caches.empty(),
                          sec.autotune && !r.autotune.empty(),
                          sec.critical_path && r.critical_path.present()};
  std::string& o = em.buf();
  o += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<meta name=\"generator\" content=\"jitscope-report\">\n"
       "<title>jitscope report</title>\n<style>\n";
  o += kReportCss;
  o += "</style>\n</head>\n<body>\n"
       // The script takes the SVG namespace from this element (no URL in the page).
       "<svg id=\"svg-namespace\" width=\"0\" height=\"0\" aria-hidden=\"true\" "
       "style=\"position:absolute\"></svg>\n";
  skeleton(o, page);
  o += "<script type=\"application/json\" id=\"jitscope-data\">";
  em.maybe_flush();
  {
    // The data: built by the JSON writer into `inner`, escaped into `em`.
    ScriptSafeJson safe(em);
    const Writer escape = [&safe](std::string_view piece) { safe.write(piece); };
    Emitter inner(escape);
    detail::JsonWriter j(inner.buf());
    j.begin_object();
    j.member("schema", std::string_view("jitscope-report-html/2"));
    // The header always (the page's title and time origin); the compile
    // times table shows self times (the phases section's) too.
    Sections data = sec;
    data.header = true;
    data.compile_times = data.phases = page.compile_times;
    JsonOptions jopt;
    jopt.artifact_href = [&opt](const std::string& path) {
      return artifact_href(path, opt.link_base);
    };
    write_json_members(r, data, j, inner, jopt);
    if (comparison != nullptr) {
      j.key("compare");
      j.begin_object();
      write_comparison_members(*comparison,
                               compare_sections != nullptr ? *compare_sections : CompareSections{},
                               j, inner);
      j.end_object();
    }
    j.end_object();
    inner.flush();
    safe.finish();
  }
  em.buf() += "</script>\n<script>\n";
  em.buf() += kReportJs;
  em.buf() += "</script>\n</body>\n</html>\n";
}

void render_html(const Report& r, const Sections& sections, const Comparison* comparison,
                 const CompareSections* compare_sections, const HtmlOptions& options,
                 const Writer& write) {
  Emitter em(write);
  write_html(r, sections, comparison, compare_sections, options, em);
}

}  // namespace jitscope::report
