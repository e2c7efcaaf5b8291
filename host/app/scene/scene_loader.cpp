// YAML scene → SceneConfig. First a streaming pass over the parser's events that checks the keys
// of the schema's maps (a bad key is refused before any node tree is built), then three passes
// over one yaml-cpp tree: apply the --set overrides, check every map's keys against the schema
// table, then convert and validate section by section. Each value is read through an Item that
// carries its key path and source mark, so every message can start with "file:line: key.path"
// (or "--set key=value" for a value an override put there).
#include "host/app/scene/scene_loader.hpp"

#include <sys/stat.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "core/analysis/coarse_graining.hpp"
#include "host/sim/errors.hpp"
#include "host/sim/polyhedron_shape.hpp"

namespace dem::host {
namespace {

// ---- Schema ---------------------------------------------------------------------------------
// The keys each map allows, by section path: "" is the top level, "simulation" a nested map,
// "materials[]" every entry of the sequence "materials". A key whose path is listed is a map; one
// whose path + "[]" is listed is a sequence of such maps; any other key holds a value. Both the
// unknown-key check and the resolution of --set paths read this table and nothing else.
// Note: the cylinder radius of a fill is `cylinder_radius`, since `radius` is the particle radius.
using Schema = std::map<std::string, std::vector<std::string>>;
const Schema& schema() {
  static const Schema table = {
      {"", {"name", "simulation", "domain", "broad_phase", "materials", "interactions", "particles", "fills", "meshes", "inlets",
            "outlets", "retag", "mixing", "coarse_graining", "output"}},
      {"inlets[]",
       {"name", "shape", "min", "max", "base", "axis", "cylinder_radius", "length", "radius", "polyhedron", "size",
        "material", "velocity", "seed", "rate", "mass_rate", "start", "stop", "count", "interval", "tag"}},
      {"inlets[].radius", {"distribution", "min", "max", "values", "weights"}},
      {"inlets[].polyhedron", {"builtin", "sides", "file"}},
      {"inlets[].size", {"distribution", "min", "max", "values", "weights"}},
      {"outlets[]", {"name", "min", "max", "interval"}},
      {"retag[]", {"time", "tag", "shape", "min", "max", "base", "axis", "cylinder_radius", "length"}},
      {"mixing", {"cell_size", "origin", "min_particles", "sample_particles", "weighting"}},
      {"coarse_graining", {"kernel", "width", "cell_size", "min", "max", "interval", "sample_interval", "per_tag", "contact_stress"}},
      {"simulation",
       {"dt", "end_time", "gravity", "skin", "neighbour_interval", "max_speed", "max_overlap", "common_plane_tolerance"}},
      {"domain", {"min", "max", "on_escape", "periodic"}},
      {"broad_phase", {"method", "levels", "cell_sizes"}},
      {"materials[]", {"name", "density", "youngs_modulus", "poisson_ratio"}},
      {"interactions[]", {"name", "materials", "friction", "restitution", "rolling_friction", "normal", "stiffness",
                          "tangential", "tangential_stiffness", "rolling", "rolling_damping", "cohesion",
                          "cohesion_energy_density"}},
      {"particles[]",
       {"position", "velocity", "angular_velocity", "radius", "polyhedron", "size", "orientation", "material", "prescribed",
        "tag"}},
      {"particles[].polyhedron", {"builtin", "sides", "file"}},
      {"fills[]",
       {"shape", "pattern", "min", "max", "base", "axis", "cylinder_radius", "length", "count", "spacing",
        "radius", "polyhedron", "size", "material", "velocity", "seed", "prescribed", "jitter", "tag"}},
      {"fills[].radius", {"distribution", "min", "max", "values", "weights"}},
      {"fills[].polyhedron", {"builtin", "sides", "file"}},
      {"fills[].size", {"distribution", "min", "max", "values", "weights"}},
      {"meshes[]",
       {"name", "file", "vertices", "faces", "scale", "rotation", "translation", "motion", "material"}},
      {"meshes[].motion", {"velocity", "angular_velocity", "center", "table", "oscillation", "start", "stop"}},
      {"meshes[].motion.oscillation", {"amplitude", "frequency", "phase"}},
      {"output", {"snapshot_interval", "probe_interval", "probe_ids", "vtk", "compression", "checkpoint_interval"}},
  };
  return table;
}

const std::vector<std::string>* section_keys(const std::string& section) {
  const auto it = schema().find(section);
  return it == schema().end() ? nullptr : &it->second;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string shortest_text(double x) {  // the shortest text that reads back to x
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {  // Levenshtein
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "; did you mean 'dt'?" for the candidate closest to `word` (the first one on a tie).
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_distance) best = &c, best_distance = d;
  }
  return best ? "; did you mean '" + *best + "'?" : "";
}

// At most 80 characters of a value the user wrote, for messages: a 50 MB scalar must not come
// back as a 50 MB message.
std::string excerpt(const std::string& s) {
  constexpr std::size_t kMax = 80;
  if (s.size() <= kMax) return s;
  return s.substr(0, kMax) + "... (" + std::to_string(s.size()) + " characters)";
}

// The messages of the key check, one wording for the streaming pre-pass and the tree walk.
// `path` is the map's ("" for the top level, "simulation", "particles[3]").
std::string in_map(const std::string& path) {
  return path.empty() ? "at the top level" : "in '" + path + "'";
}
std::string unknown_key(const std::string& key, const std::vector<std::string>& keys, const std::string& path) {
  return "unknown key '" + key + "' " + in_map(path) + suggestion(key, keys);
}
std::string duplicate_key(const std::string& key, const std::string& path) {
  return "duplicate key '" + key + "' " + in_map(path);
}

// The keys of the maps the schema table describes, checked as yaml-cpp's parser reads them (its
// event API), before any node tree is built: the tree of a file takes some 50 times the file's
// size (a 50 MB file of one unknown key repeated, 2.6 GB and 11 s), while this check stops at the
// first unknown or repeated key, having read the file only up to it and kept only a stack of the
// maps and lists open there. It follows the tree check (Loader::check_keys) node for node, in the
// same order, so the first fault it finds is the one that check would report, with its message
// and mark; `fault` is called with the key's path, its mark and the message, and throws.
//
// Where the tree could hold what the text does not show, the nested maps are left to the tree
// check from there on (the top level's keys are still checked): after an alias in a checked place
// (the tree holds the anchor's node there), a list section that is not a list (the tree check
// stops on it), and a top-level section in `overridden` (a --set may replace the file's map,
// unknown keys and all: --set simulation={dt: 1}). A later fault found here could otherwise come
// before one that the tree check finds first.
class SchemaKeys : public YAML::EventHandler {
 public:
  using Fault = std::function<void(const std::string& path, const YAML::Mark& mark, const std::string& message)>;
  SchemaKeys(std::set<std::string> overridden, Fault fault)
      : overridden_(std::move(overridden)), fault_(std::move(fault)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    static const std::string nothing = "nothing";
    node(mark, Kind::Null, &nothing);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, Kind::Alias, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    node(mark, Kind::Scalar, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    static const std::string list = "a list";
    node(mark, Kind::List, &list);
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    static const std::string map = "a map";
    node(mark, Kind::Map, &map);
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  enum class Kind { Null, Scalar, Alias, List, Map };
  // An open map or list. A map the schema describes has `keys`; a list section's entries have
  // `section` ("particles[]"); anything else is unchecked.
  struct Open {
    bool is_map = false;
    const std::vector<std::string>* keys = nullptr;
    std::string section;  // the map's schema section ("simulation"), or the entries' of a list
    std::string path;     // "particles[3]", or the list's "particles"
    bool next_is_key = true;
    std::vector<bool> seen;  // keys[i] seen
    std::string key;         // the key whose value comes next, if that value is checked
    std::size_t entries = 0;  // a list's, so far
  };

  // A node of the text: `text` names it as a key (nullptr for an alias). Checks it if it is a key
  // of a checked map, and opens a frame for a map or list, checked where the schema says.
  void node(const YAML::Mark& mark, Kind kind, const std::string* text) {
    Open next;
    next.is_map = kind == Kind::Map;
    if (open_.empty()) {  // the root
      if (next.is_map) next.keys = section_keys("");
    } else if (Open& parent = open_.back(); parent.is_map && parent.next_is_key) {
      parent.next_is_key = false;
      parent.key.clear();
      const bool checked = parent.keys && (open_.size() == 1 || nested_);
      if (checked && !text) nested_ = false;
      if (checked && text) key(parent, mark, excerpt(*text));
    } else if (parent.is_map) {  // a value
      parent.next_is_key = true;
      if (!parent.key.empty() && nested_) value(next, kind, parent);
    } else if (const std::size_t index = parent.entries++; !parent.section.empty() && nested_) {  // an entry
      if (kind == Kind::Alias) nested_ = false;
      if (next.is_map) {
        next.keys = section_keys(parent.section);
        next.section = parent.section;
        next.path = parent.path + "[" + std::to_string(index) + "]";
      }
    }
    if (kind == Kind::Map || kind == Kind::List) {
      if (next.keys) next.seen.assign(next.keys->size(), false);
      open_.push_back(std::move(next));
    }
  }

  // A key of checked map `map` (its text as describe() gives it): unknown, repeated, or recorded
  // for its value.
  void key(Open& map, const YAML::Mark& mark, const std::string& key) {
    const auto at = std::find(map.keys->begin(), map.keys->end(), key);
    if (at == map.keys->end()) fault_(join(map.path, key), mark, unknown_key(key, *map.keys, map.path));
    const std::size_t i = static_cast<std::size_t>(at - map.keys->begin());
    if (map.seen[i]) fault_(join(map.path, key), mark, duplicate_key(key, map.path));
    map.seen[i] = true;
    if (open_.size() == 1 && overridden_.count(key)) nested_ = false;
    map.key = key;
  }

  // The value of `map`'s last key: a map the schema describes, or a list section (null is an
  // empty list), opens checked; an alias there, or a list section that is not a list, ends the
  // nested checks.
  void value(Open& next, Kind kind, const Open& map) {
    const std::string section = join(map.section, map.key);
    if (section_keys(section + "[]")) {
      if (kind == Kind::List) next.section = section + "[]", next.path = join(map.path, map.key);
      else if (kind != Kind::Null) nested_ = false;
    } else if (const auto* keys = section_keys(section)) {
      if (kind == Kind::Map) next.keys = keys, next.section = section, next.path = join(map.path, map.key);
      else if (kind == Kind::Alias) nested_ = false;
    }
  }

  std::set<std::string> overridden_;  // top-level sections
  Fault fault_;
  std::vector<Open> open_;
  bool nested_ = true;  // whether maps below the top level are still checked
};

// The text as an input stream, without a copy (yaml-cpp's parser reads a std::istream).
struct TextBuffer : std::streambuf {
  explicit TextBuffer(const std::string& text) {
    char* p = const_cast<char*>(text.data());  // only read: setg needs char*
    setg(p, p, p + text.size());
  }
};

// Why the file at `path` cannot be read as an input file of at most `limit` bytes ("it is a
// directory, not a file", ...), or "" when it can: a path that is not a regular file (a directory,
// /dev/zero, a pipe) or a file above the limit is refused before anything is read from it. A path
// that does not exist passes: opening it reports that.
std::string unreadable_reason(const std::string& path, std::uintmax_t limit) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // (follows links: a link to a file is that file)
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a pipe"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "a special file";
    return std::string("it is ") + kind + ", not a regular file";
  }
  if (static_cast<std::uintmax_t>(st.st_size) > limit)
    return "it is " + std::to_string(static_cast<std::uintmax_t>(st.st_size)) + " bytes, more than the limit of " +
           std::to_string(limit >> 20) + " MiB";
  return "";
}

// Line (1-based) of the first line where a quote opens and does not close ('' and \" are escapes),
// outside comments; 0 if none. YAML allows quoted scalars over several lines, but in a scene an
// unclosed quote is a typo, and yaml-cpp would swallow the rest of the file into that one value
// (then report the next section as missing).
int unclosed_quote_line(const std::string& text) {
  int line = 1;
  for (std::size_t begin = 0; begin < text.size(); ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    char open = 0;
    for (std::size_t k = begin; k < end; ++k) {
      const char c = text[k];
      if (!open) {
        if (c == '#' && (k == begin || text[k - 1] == ' ' || text[k - 1] == '\t')) break;  // a comment
        // a quote opens a scalar only at its start (after a space, ':', ',', '[', '{' or '-')
        const char before = k == begin ? ' ' : text[k - 1];
        if ((c == '"' || c == '\'') && std::strchr(" \t:,[{-", before)) open = c;
      } else if (open == '"' && c == '\\') {
        ++k;  // an escaped character
      } else if (c == open) {
        if (open == '\'' && k + 1 < end && text[k + 1] == '\'') ++k;  // '' inside single quotes
        else open = 0;
      }
    }
    if (open) return line;
    begin = end + 1;
  }
  return 0;
}

// Line (1-based) of a document marker ('---' at the start of a line) that follows content, or 0.
int second_document_line(const std::string& text) {
  bool content = false;
  int line = 1;
  for (std::size_t begin = 0; begin < text.size(); ++line) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(begin, end - begin);
    const bool marker = l.compare(0, 3, "---") == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    if (marker && content) return line;
    const std::size_t first = l.find_first_not_of(" \t\r");
    if (!marker && first != std::string::npos && l[first] != '#' && l[first] != '%') content = true;
    begin = end + 1;
  }
  return 0;
}

std::string describe(const YAML::Node& n) {  // for "(got ...)"
  if (n.IsScalar()) return excerpt(n.Scalar());
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a map";
  return "nothing";
}

// A YAML number, with YAML's .inf/.nan spellings as well as inf/nan; nullopt if it is not one.
std::optional<double> parse_number(std::string s) {
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.erase(0, 1);
  if (s.empty() || s[0] == '+' || s[0] == '-') return std::nullopt;
  std::string lower = s;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  double v = 0;
  if (lower == ".inf") {
    v = std::numeric_limits<double>::infinity();
  } else if (lower == ".nan") {
    v = std::numeric_limits<double>::quiet_NaN();
  } else {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  }
  return negative ? -v : v;
}

// A node and where it is, for messages. `node` is undefined when the key is absent; `mark` is
// then the parent's.
struct Item {
  YAML::Node node;
  std::string path;  // "materials[1].youngs_modulus"
  YAML::Mark mark;
  bool present() const { return node.IsDefined(); }
};

// What a number must satisfy; all but PositiveOrInf also require it to be finite.
enum class Rule { Finite, Positive, NonNegative, PositiveOrInf, Poisson, Restitution };

const char* violated(Rule rule, double v) {  // the requirement v fails, or nullptr
  switch (rule) {
    case Rule::Finite:
      return nullptr;
    case Rule::Positive:
    case Rule::PositiveOrInf:
      return v > 0 ? nullptr : "> 0";
    case Rule::NonNegative:
      return v >= 0 ? nullptr : ">= 0";
    case Rule::Poisson:
      return v > -1 && v < 0.5 ? nullptr : "in (-1, 0.5)";
    case Rule::Restitution:
      return v >= 0 && v <= 1 ? nullptr : "in [0, 1]";
  }
  return nullptr;
}

class Loader {
 public:
  Loader(std::string source, std::filesystem::path base_dir)
      : source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  SceneConfig load(const std::string& yaml, const std::vector<std::string>& overrides) {
    YAML::Node root;
    try {
      if (const int line = unclosed_quote_line(yaml); line > 0)
        throw InputError(source_ + ":" + std::to_string(line) +
                         ": a quoted value does not end on its line (a closing quote is missing; values in a scene "
                         "are one line each)");
      // yaml-cpp's LoadAll loops for ever on some malformed streams (found by fuzzing), so the
      // second document is found by its marker: a line starting with '---' after content.
      if (const int line = second_document_line(yaml); line > 0)
        throw InputError(source_ + ":" + std::to_string(line) +
                         ": a second YAML document (after '---'); a scene is one document: remove it or put it "
                         "in its own file");
      check_keys_streaming(yaml, overrides);
      root = YAML::Load(yaml);
    } catch (const YAML::ParserException& e) {
      throw InputError(source_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                       std::to_string(e.mark.column + 1) + ": " + e.msg);
    }
    if (root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    const YAML::Mark root_mark = root.Mark().is_null() ? YAML::Mark() : root.Mark();
    if (!root.IsMap())
      throw InputError(where("", root_mark) + ": the top level must be a map of sections (got " +
                       describe(root) + ")");
    for (const std::string& o : overrides) apply_override(root, o);
    const Item top{root, "", root_mark};
    try {
      check_keys(top, "");
      return convert(top);
    } catch (const YAML::Exception& e) {  // a yaml-cpp surprise still gets a location
      throw InputError(source_ + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
  }

 private:
  // ---- Locations and messages ---------------------------------------------------------------
  std::string where(const std::string& path, const YAML::Mark& mark) const {
    for (auto o = origins_.rbegin(); o != origins_.rend(); ++o) {  // the latest override wins
      const std::string& p = o->first;
      if (path.compare(0, p.size(), p) == 0 &&
          (path.size() == p.size() || path[p.size()] == '.' || path[p.size()] == '['))
        return "--set " + excerpt(o->second);
    }
    return mark.is_null() ? source_ : source_ + ":" + std::to_string(mark.line + 1);
  }
  [[noreturn]] void fail_at(const std::string& path, const YAML::Mark& mark, const std::string& msg) const {
    throw InputError(where(path, mark) + ": " + msg);
  }
  [[noreturn]] void fail(const Item& it, const std::string& what) const {
    fail_at(it.path, it.mark, it.path + " " + what);
  }

  // ---- Overrides ----------------------------------------------------------------------------
  // Walks the dotted key through the schema and the tree, creating maps the file left out, and
  // writes the value there. The subtree it wrote (and any map it created) is remembered, so later
  // messages about it name the override instead of a file line.
  [[noreturn]] static void override_error(const std::string& assignment, const std::string& msg) {
    throw InputError("--set " + excerpt(assignment) + ": " + msg);
  }
  void apply_override(YAML::Node root, const std::string& assignment) {
    const std::size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) override_error(assignment, "expected key=value");
    const std::string key = assignment.substr(0, eq);
    YAML::Node value;
    try {
      value = YAML::Load(assignment.substr(eq + 1));
    } catch (const YAML::ParserException& e) {
      override_error(assignment, "cannot parse the value: " + e.msg);
    }
    YAML::Node node = root;  // a handle: reset() moves it, while assignment writes into the tree
    std::string section, path;
    for (std::size_t begin = 0, end = 0; begin <= key.size(); begin = end + 1) {
      end = std::min(key.find('.', begin), key.size());
      const std::string seg = key.substr(begin, end - begin);
      if (seg.empty()) override_error(assignment, "empty key in '" + key + "'");
      YAML::Node next;
      if (const auto* keys = section_keys(section)) {
        if (!contains(*keys, seg))
          override_error(assignment, unknown_key(seg, *keys, path));
        if (!node.IsMap()) {  // absent, or a value (fills.0.radius.min over radius: 0.003)
          node = YAML::Node(YAML::NodeType::Map);
          origins_.emplace_back(path, assignment);
        }
        next.reset(node[seg]);
        section = join(section, seg);
        path = join(path, seg);
      } else if (const auto* entry_keys = section_keys(section + "[]")) {
        const std::size_t index =
            entry_index(node, seg, path, contains(*entry_keys, "name"), assignment, section == "interactions");
        next.reset(node[index]);
        section += "[]";
        path += "[" + std::to_string(index) + "]";
      } else {
        override_error(assignment, "'" + path + "' is a value, not a section");
      }
      if (end == key.size()) {
        next = value;  // writes into the tree
        origins_.emplace_back(path, assignment);
        return;
      }
      node.reset(next);
    }
  }

  // The entry of sequence `seq` that `seg` names: an index, or the value of the entries' `name`.
  // Interactions without a name answer to their materials joined by '-', in either order
  // ("glass-wall" or "wall-glass").
  static std::size_t entry_index(const YAML::Node& seq, const std::string& seg, const std::string& path,
                                 bool named, const std::string& assignment, bool by_materials = false) {
    const std::size_t size = seq.IsSequence() ? seq.size() : 0;
    if (std::all_of(seg.begin(), seg.end(), [](unsigned char c) { return std::isdigit(c); })) {
      // More digits than any sequence has entries: no entry (and no overflow in stoul).
      const std::size_t index = seg.size() > 9 ? size : std::stoul(seg);
      if (index >= size)
        override_error(assignment,
                       "'" + path + "' has no entry " + seg + " (it has " + std::to_string(size) + ")");
      return index;
    }
    if (!named) override_error(assignment, "entries of '" + path + "' have no name; address them by index");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < size; ++i) {
      const YAML::Node entry = seq[i];
      const YAML::Node name = entry.IsMap() ? entry["name"] : YAML::Node();
      names.push_back(name.IsDefined() && name.IsScalar() ? name.Scalar() : "");
      if (names.back() == seg) return i;
      const YAML::Node pair = entry.IsMap() ? entry["materials"] : YAML::Node();
      if (by_materials && names.back().empty() && pair.IsSequence() && pair.size() == 2 && pair[0].IsScalar() &&
          pair[1].IsScalar()) {
        names.back() = pair[0].Scalar() + "-" + pair[1].Scalar();
        if (seg == names.back() || seg == pair[1].Scalar() + "-" + pair[0].Scalar()) return i;
      }
    }
    override_error(assignment, "no entry named '" + seg + "' in '" + path + "'" + suggestion(seg, names));
  }

  // ---- Unknown and duplicate keys, from the schema table ------------------------------------
  // First streaming, before the tree is built (SchemaKeys), with the text's own marks: no
  // override has been applied yet, and an override can add no key that the schema lacks, only
  // replace a section (so the sections it writes into are left to the tree check).
  // The price: a valid scene is parsed twice, once here without a tree (3.3 s of 9.2 s for a
  // 7.5 MB scene listing 10^5 particles, of which the nested maps' checks take some 5%; nothing
  // to notice for a scene of fills).
  void check_keys_streaming(const std::string& yaml, const std::vector<std::string>& overrides) const {
    std::set<std::string> overridden;  // the top-level section of each --set key
    for (const std::string& o : overrides) overridden.insert(o.substr(0, std::min(o.find('.'), o.find('='))));
    SchemaKeys handler(std::move(overridden), [&](const std::string& path, const YAML::Mark& mark,
                                                  const std::string& message) { fail_at(path, mark, message); });
    TextBuffer buffer(yaml);
    std::istream stream(&buffer);
    YAML::Parser parser(stream);
    parser.HandleNextDocument(handler);
  }

  // Then every map of the tree, with the overrides applied, in the same order.
  void check_keys(const Item& map, const std::string& section) const {
    const auto* keys = section_keys(section);
    if (!keys || !map.node.IsMap()) return;  // values, and sections of the wrong type, fail when read
    std::set<std::string> seen;
    for (const auto& kv : map.node) {
      const std::string key = describe(kv.first);
      const Item value{kv.second, join(map.path, key), kv.first.Mark()};
      if (!contains(*keys, key)) fail_at(value.path, value.mark, unknown_key(key, *keys, map.path));
      if (!seen.insert(key).second) fail_at(value.path, value.mark, duplicate_key(key, map.path));
      const std::string sub = join(section, key);
      if (section_keys(sub + "[]")) {
        for (const Item& entry : items(value)) check_keys(entry, sub + "[]");
      } else {
        check_keys(value, sub);
      }
    }
  }

  // ---- Typed access -------------------------------------------------------------------------
  // The accessors taking (map, key, ..., fallback) return the fallback when the key is absent,
  // and fail with "is required" when there is no fallback.
  Item child(const Item& map, const std::string& key) const {
    const YAML::Node& m = map.node;  // const: a lookup must not insert the key
    Item c{m[key], join(map.path, key), map.mark};
    if (c.present()) c.mark = c.node.Mark();
    return c;
  }
  Item need(const Item& it) const {
    if (!it.present()) fail(it, "is required");
    return it;
  }
  void expect_map(const Item& it) const {
    if (!need(it).node.IsMap()) fail(it, "must be a map (got " + describe(it.node) + ")");
  }
  // The entries of a list; an absent or empty (null) list has none.
  std::vector<Item> items(const Item& seq) const {
    std::vector<Item> out;
    if (!seq.present() || seq.node.IsNull()) return out;
    if (!seq.node.IsSequence()) fail(seq, "must be a list (got " + describe(seq.node) + ")");
    const YAML::Node& s = seq.node;
    for (std::size_t i = 0; i < s.size(); ++i)
      out.push_back({s[i], seq.path + "[" + std::to_string(i) + "]", s[i].Mark()});
    return out;
  }
  // Keys that belong to another variant of a section (box keys in a cylinder fill, ...).
  void forbid(const Item& map, std::initializer_list<const char*> keys, const std::string& owner) const {
    for (const char* key : keys)
      if (const Item c = child(map, key); c.present()) fail(c, "is only used with " + owner);
  }

  double number(const Item& it, Rule rule) const {
    const std::string got = describe(it.node);
    const std::optional<double> v = it.node.IsScalar() ? parse_number(got) : std::nullopt;
    if (!v) fail(it, "must be a number (got " + got + ")");
    const bool inf_ok = rule == Rule::PositiveOrInf;
    if (std::isnan(*v) || (std::isinf(*v) && !inf_ok))
      fail(it, std::string("must be a finite number") + (inf_ok ? " or inf" : "") + " (got " + got + ")");
    if (const char* req = violated(rule, *v)) fail(it, std::string("must be ") + req + " (got " + got + ")");
    return *v;
  }
  double number(const Item& map, const char* key, Rule rule, std::optional<double> fallback = {}) const {
    const Item c = child(map, key);
    return !c.present() && fallback ? *fallback : number(need(c), rule);
  }
  std::vector<double> numbers(const Item& seq, Rule rule) const {
    std::vector<double> out;
    for (const Item& e : items(seq)) out.push_back(number(e, rule));
    return out;
  }
  std::int64_t integer(const Item& it, std::int64_t min) const {
    const std::string got = describe(it.node);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(got.data(), got.data() + got.size(), v);
    if (!it.node.IsScalar() || ec != std::errc() || end != got.data() + got.size()) {
      const std::optional<double> d = it.node.IsScalar() ? parse_number(got) : std::nullopt;  // 1e4
      if (!d || *d != std::floor(*d) || std::fabs(*d) > 9.0e15)
        fail(it, "must be an integer (got " + got + ")");
      v = static_cast<std::int64_t>(*d);
    }
    if (v < min) fail(it, "must be >= " + std::to_string(min) + " (got " + got + ")");
    return v;
  }
  std::int64_t integer(const Item& map, const char* key, std::int64_t min,
                       std::optional<std::int64_t> fallback = {}) const {
    const Item c = child(map, key);
    return !c.present() && fallback ? *fallback : integer(need(c), min);
  }
  Vec3d vec3(const Item& it) const {
    if (!it.node.IsSequence() || it.node.size() != 3)
      fail(it, "must be a list of 3 numbers (got " +
                   (it.node.IsSequence() ? std::to_string(it.node.size()) + " items" : describe(it.node)) +
                   ")");
    const std::vector<double> v = numbers(it, Rule::Finite);
    return {v[0], v[1], v[2]};
  }
  Vec3d vec3(const Item& map, const char* key, std::optional<Vec3d> fallback = {}) const {
    const Item c = child(map, key);
    return !c.present() && fallback ? *fallback : vec3(need(c));
  }
  // The text of `it` with every ${NAME} replaced by the environment variable NAME (mesh paths:
  // data that lives outside the project, e.g. file: ${DEM_SHARED_MESHES}/internal_mixer.obj).
  std::string expand_environment(const Item& it) const {
    const std::string in = text(it);
    std::string out;
    for (std::size_t k = 0; k < in.size();) {
      if (in.compare(k, 2, "${") != 0) {
        out += in[k++];
        continue;
      }
      const std::size_t close = in.find('}', k);
      if (close == std::string::npos) fail(it, "has an unterminated ${...} in '" + in + "'");
      const std::string name = in.substr(k + 2, close - k - 2);
      const char* value = std::getenv(name.c_str());
      if (!value || !*value)
        fail(it, "refers to the environment variable " + name + ", which is not set; set it, or give the path with --set");
      out += value;
      k = close + 1;
    }
    return out;
  }
  std::string text(const Item& it) const {
    if (!it.node.IsScalar()) fail(it, "must be a string (got " + describe(it.node) + ")");
    if (it.node.Scalar().empty()) fail(it, "must not be empty");
    return it.node.Scalar();
  }
  std::string text(const Item& map, const char* key, std::optional<std::string> fallback = {}) const {
    const Item c = child(map, key);
    return !c.present() && fallback ? *fallback : text(need(c));
  }
  bool flag(const Item& map, const char* key, bool fallback) const {
    const Item c = child(map, key);
    bool v = fallback;
    if (c.present() && !(c.node.IsScalar() && YAML::convert<bool>::decode(c.node, v)))
      fail(c, "must be true or false (got " + describe(c.node) + ")");
    return v;
  }
  // Index into `options` of the value at `key`; the first option is the default.
  std::size_t choice(const Item& map, const char* key, const std::vector<std::string>& options,
                     bool required = false) const {
    const Item c = child(map, key);
    if (!c.present() && !required) return 0;
    const std::string s = text(need(c));
    const auto it = std::find(options.begin(), options.end(), s);
    if (it != options.end()) return static_cast<std::size_t>(it - options.begin());
    std::string list;
    for (const std::string& o : options) list += (list.empty() ? "" : ", ") + o;
    fail(c, "must be one of " + list + " (got '" + s + "')" + suggestion(s, options));
  }
  // A material name that must be defined in `materials`.
  std::string material_ref(const Item& it) const {
    const std::string name = text(need(it));
    if (!contains(material_names_, name))
      fail(it,
           "refers to undefined material '" + name + "'" +
               (material_names_.empty() ? "; no materials are defined" : suggestion(name, material_names_)));
    return name;
  }

  // ---- Sections -----------------------------------------------------------------------------
  SceneConfig convert(const Item& root) {
    SceneConfig cfg;
    cfg.source = source_;
    cfg.name = text(root, "name", std::filesystem::path(source_).stem().string());
    cfg.simulation = read_simulation(child(root, "simulation"));

    const std::vector<Item> materials = items(child(root, "materials"));
    if (materials.size() > kMaxMaterials)  // before the table of every pair is built (scene_loader.hpp)
      fail(child(root, "materials"), "defines " + std::to_string(materials.size()) + " materials, more than the limit of " +
                                         std::to_string(kMaxMaterials) +
                                         " (the contact table holds an entry for every pair of materials)");
    for (const Item& m : materials) {
      cfg.materials.push_back(read_material(m));
      const auto dup = std::find(material_names_.begin(), material_names_.end(), cfg.materials.back().name);
      if (dup != material_names_.end())
        fail(child(m, "name"), "'" + *dup + "' is already used by materials[" +
                                   std::to_string(dup - material_names_.begin()) + "]");
      material_names_.push_back(cfg.materials.back().name);
    }

    const Item interactions = child(root, "interactions");
    std::map<std::pair<std::string, std::string>, std::size_t> pairs;  // sorted pair → entry
    std::map<std::string, std::size_t> interaction_names;              // name → first entry
    for (const Item& it : items(interactions)) {
      cfg.interactions.push_back(read_interaction(it));
      const InteractionSpec& s = cfg.interactions.back();
      const auto key = std::minmax(s.material_a, s.material_b);
      const auto [prev, fresh] = pairs.emplace(key, pairs.size());
      if (!fresh)
        fail(child(it, "materials"), "repeats the pair [" + key.first + ", " + key.second +
                                         "] of interactions[" + std::to_string(prev->second) + "]");
      // (a map: up to 32,896 interactions for kMaxMaterials, too many to compare each with each)
      const auto [first, fresh_name] = interaction_names.emplace(s.name, cfg.interactions.size() - 1);
      if (!fresh_name)
        fail(child(it, "name"), "'" + s.name + "' is already used by interactions[" + std::to_string(first->second) + "]");
    }

    for (const Item& p : items(child(root, "particles"))) cfg.particles.push_back(read_particle(p));
    for (const Item& f : items(child(root, "fills"))) cfg.fills.push_back(read_fill(f));
    const std::vector<Item> inlets = items(child(root, "inlets"));
    for (std::size_t i = 0; i < inlets.size(); ++i) cfg.inlets.push_back(read_inlet(inlets[i], i));
    const std::vector<Item> outlets = items(child(root, "outlets"));
    for (std::size_t i = 0; i < outlets.size(); ++i) {
      const Item& o = outlets[i];
      expect_map(o);
      OutletSpec out;
      out.name = text(o, "name", "outlet" + std::to_string(i));
      out.min = vec3(o, "min");
      out.max = vec3(o, "max");
      for (int k = 0; k < 3; ++k)
        if (out.max[k] <= out.min[k]) fail(child(o, "max"), "must be > min in every component");
      out.interval = number(o, "interval", Rule::NonNegative, out.interval);
      cfg.outlets.push_back(out);
    }
    for (const Item& r : items(child(root, "retag"))) {
      expect_map(r);
      RetagSpec out;
      out.time = number(r, "time", Rule::NonNegative);
      need(child(r, "tag"));
      out.tag = tag(r);
      read_region(r, out.region);
      cfg.retags.push_back(out);
    }
    if (const Item m = child(root, "mixing"); m.present()) {
      expect_map(m);
      cfg.mixing.given = true;
      if (child(m, "cell_size").present() == child(m, "sample_particles").present())
        fail(m, "needs exactly one of cell_size (cubic sample cells, m) and sample_particles (samples of that many "
                "neighbouring particles)");
      if (child(m, "cell_size").present()) {
        cfg.mixing.cell_size = number(m, "cell_size", Rule::Positive);
        cfg.mixing.origin = vec3(m, "origin", cfg.mixing.origin);
        cfg.mixing.min_particles = integer(m, "min_particles", 1, cfg.mixing.min_particles);
      } else {
        forbid(m, {"origin", "min_particles"}, "cell_size");
        cfg.mixing.sample_particles = integer(m, "sample_particles", 2);
        cfg.mixing.min_particles = cfg.mixing.sample_particles;
      }
      cfg.mixing.mass_weighted = choice(m, "weighting", {"count", "mass"}) == 1;
    }
    if (const Item g = child(root, "coarse_graining"); g.present()) {
      expect_map(g);
      CoarseGrainingSpec& cg = cfg.coarse_graining;
      cg.given = true;
      cg.kernel = static_cast<std::uint8_t>(choice(g, "kernel", {"lucy", "gaussian"}));
      cg.cell_size = number(g, "cell_size", Rule::Positive);
      cg.width = number(g, "width", Rule::Positive);
      if (const std::string why = coarse_graining_width_conflict(cg); !why.empty()) fail(child(g, "width"), why);
      if (child(g, "min").present() || child(g, "max").present()) {
        cg.region_given = true;
        cg.min = vec3(g, "min");
        cg.max = vec3(g, "max");
        for (int k = 0; k < 3; ++k)
          if (cg.max[k] <= cg.min[k]) fail(child(g, "max"), "must be > min in every component");
      }
      cg.interval = number(g, "interval", Rule::Positive);
      cg.sample_interval = number(g, "sample_interval", Rule::Positive, cg.interval);
      if (cg.sample_interval > cg.interval)
        fail(child(g, "sample_interval"), "must be at most interval (" + shortest_text(cg.interval) + " s)");
      cg.per_tag = flag(g, "per_tag", cg.per_tag);
      cg.contact_stress = flag(g, "contact_stress", cg.contact_stress);
    }
    const std::vector<Item> meshes = items(child(root, "meshes"));
    for (std::size_t i = 0; i < meshes.size(); ++i) {
      cfg.meshes.push_back(read_mesh(meshes[i], i));
      for (std::size_t j = 0; j < i; ++j)
        if (cfg.meshes[j].name == cfg.meshes[i].name)
          fail(child(meshes[i], "name"),
               "'" + cfg.meshes[i].name + "' is already used by meshes[" + std::to_string(j) + "]");
    }
    if (const Item out = child(root, "output"); out.present()) cfg.output = read_output(out);
    if (cfg.mixing.given && !(cfg.output.probe_interval > 0))
      fail(child(root, "mixing"), "needs output.probe_interval > 0 (mixing.csv gets its rows every probe interval)");
    if (const Item d = child(root, "domain"); d.present()) {
      expect_map(d);
      cfg.domain.given = true;
      cfg.domain.min = vec3(d, "min");
      cfg.domain.max = vec3(d, "max");
      const std::string on_escape = text(d, "on_escape", "stop");
      if (on_escape != "stop" && on_escape != "remove") fail(child(d, "on_escape"), "must be stop or remove (got " + excerpt(on_escape) + ")");
      cfg.domain.remove_escaped = on_escape == "remove";
      for (int k = 0; k < 3; ++k)
        if (!(cfg.domain.min[k] < cfg.domain.max[k]))
          fail(d, "domain.min must lie below domain.max on every axis");
      // periodic: [x, z], the axes along which the domain repeats
      if (const Item per = child(d, "periodic"); per.present()) {
        if (!per.node.IsSequence()) fail(per, "must be a list of axes, e.g. [x, y] (got " + describe(per.node) + ")");
        for (const Item& axis : items(per)) {
          const std::string a = text(axis);
          const int k = a == "x" ? 0 : (a == "y" ? 1 : (a == "z" ? 2 : -1));
          if (k < 0) fail(axis, "must be x, y or z (got " + excerpt(a) + ")");
          if (cfg.domain.periodic[k]) fail(axis, "axis " + a + " is listed twice");
          cfg.domain.periodic[k] = true;
        }
      }
    }

    if (cfg.coarse_graining.given && !cfg.coarse_graining.region_given) {
      if (!cfg.domain.given)
        fail(child(root, "coarse_graining"), "needs min and max (the region whose particles count) when the scene has no domain");
      cfg.coarse_graining.min = cfg.domain.min;
      cfg.coarse_graining.max = cfg.domain.max;
    }

    // broad_phase: {method: auto | grid | hgrid | bsp, levels: n, cell_sizes: [...]} (the last two: hgrid)
    if (const Item bp = child(root, "broad_phase"); bp.present()) {
      expect_map(bp);
      const std::size_t m = choice(bp, "method", {"auto", "grid", "hgrid", "bsp"});
      cfg.broad_phase.method = m == 1   ? BroadPhaseMethod::Grid
                               : m == 2 ? BroadPhaseMethod::HGrid
                               : m == 3 ? BroadPhaseMethod::Bsp
                                        : BroadPhaseMethod::Auto;
      const bool hgrid = cfg.broad_phase.method == BroadPhaseMethod::HGrid;
      for (const char* key : {"levels", "cell_sizes"})
        if (child(bp, key).present() && !hgrid) fail(child(bp, key), "applies only to method: hgrid");
      if (child(bp, "levels").present()) {
        cfg.broad_phase.levels = static_cast<int>(integer(bp, "levels", 1));
        if (cfg.broad_phase.levels > kMaxHGridLevels)
          fail(child(bp, "levels"), "at most " + std::to_string(kMaxHGridLevels) + " levels (kMaxHGridLevels)");
      }
      if (const Item cs = child(bp, "cell_sizes"); cs.present()) {
        if (!cs.node.IsSequence()) fail(cs, "must be a list of cell sizes in m, increasing");
        cfg.broad_phase.cell_sizes = numbers(cs, Rule::Positive);
        if (cfg.broad_phase.cell_sizes.empty() || cfg.broad_phase.cell_sizes.size() > std::size_t(kMaxHGridLevels))
          fail(cs, "must list 1 to " + std::to_string(kMaxHGridLevels) + " cell sizes");
        for (std::size_t k = 1; k < cfg.broad_phase.cell_sizes.size(); ++k)
          if (!(cfg.broad_phase.cell_sizes[k] > cfg.broad_phase.cell_sizes[k - 1])) fail(cs, "cell sizes must increase");
        if (cfg.broad_phase.levels > 0 && std::size_t(cfg.broad_phase.levels) != cfg.broad_phase.cell_sizes.size())
          fail(cs, "gives " + std::to_string(cfg.broad_phase.cell_sizes.size()) + " sizes for " +
                       std::to_string(cfg.broad_phase.levels) + " levels");
      }
    }

    // Particle materials, in definition order: they need a density and an interaction with each
    // other and with every mesh material.
    std::vector<std::size_t> used;
    const auto index_of = [&](const std::string& name) {
      return static_cast<std::size_t>(std::find(material_names_.begin(), material_names_.end(), name) -
                                      material_names_.begin());
    };
    for (const ParticleSpec& p : cfg.particles) used.push_back(index_of(p.material));
    for (const FillSpec& f : cfg.fills) used.push_back(index_of(f.material));
    for (const InletSpec& f : cfg.inlets) used.push_back(index_of(f.region.material));
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    for (std::size_t m : used) {
      if (cfg.materials[m].density <= 0)
        fail(child(materials[m], "density"),
             "is required: particles use material '" + material_names_[m] + "'");
      if (!std::isfinite(cfg.materials[m].youngs_modulus))
        fail(child(materials[m], "youngs_modulus"),
             "is infinite, but particles use material '" + material_names_[m] +
                 "': only walls can be rigid (a rigid particle has no contact time, so no time step resolves it)");
    }
    const auto need_pair = [&](const std::string& a, const std::string& b, const std::string& why) {
      if (!pairs.count(std::minmax(a, b)))
        fail(interactions, "has no entry for the material pair [" + a + ", " + b + "] (" + why + ")");
    };
    for (std::size_t i = 0; i < used.size(); ++i)
      for (std::size_t j = i; j < used.size(); ++j) {
        const std::string& a = material_names_[used[i]];
        const std::string& b = material_names_[used[j]];
        need_pair(a, b, "particles of '" + a + "' can touch particles of '" + b + "'");
      }
    for (const MeshSpec& mesh : cfg.meshes)
      for (std::size_t m : used)
        need_pair(material_names_[m], mesh.material,
                  "particles of '" + material_names_[m] + "' can touch mesh '" + mesh.name + "'");
    return cfg;
  }

  SimulationSpec read_simulation(const Item& s) const {
    expect_map(s);
    SimulationSpec out;
    out.dt = number(s, "dt", Rule::Positive);
    out.end_time = number(s, "end_time", Rule::Positive);
    out.gravity = vec3(s, "gravity", out.gravity);
    out.skin = number(s, "skin", Rule::Finite, out.skin);
    out.neighbour_interval = static_cast<int>(integer(s, "neighbour_interval", 0, out.neighbour_interval));
    out.max_speed = number(s, "max_speed", Rule::Positive, out.max_speed);
    out.max_overlap = number(s, "max_overlap", Rule::Positive, out.max_overlap);
    out.common_plane_tolerance = number(s, "common_plane_tolerance", Rule::NonNegative, out.common_plane_tolerance);
    return out;
  }

  MaterialSpec read_material(const Item& m) const {
    expect_map(m);
    MaterialSpec out;
    out.name = text(m, "name");
    out.density = number(m, "density", Rule::Positive, out.density);
    out.youngs_modulus = number(m, "youngs_modulus", Rule::PositiveOrInf);
    out.poisson_ratio = number(m, "poisson_ratio", Rule::Poisson);
    return out;
  }

  InteractionSpec read_interaction(const Item& it) const {
    expect_map(it);
    InteractionSpec out;
    const Item pair = need(child(it, "materials"));
    const std::vector<Item> names = items(pair);
    if (names.size() != 2) fail(pair, "must be a list of 2 material names (got " + describe(pair.node) + ")");
    out.material_a = material_ref(names[0]);
    out.material_b = material_ref(names[1]);
    out.name = text(it, "name", out.material_a + "-" + out.material_b);
    out.friction = number(it, "friction", Rule::NonNegative, out.friction);
    out.restitution = number(it, "restitution", Rule::Restitution, out.restitution);
    out.rolling_friction = number(it, "rolling_friction", Rule::NonNegative, out.rolling_friction);
    // The law's parts; a parameter that the chosen part does not use is refused (it would be ignored).
    auto only_with = [&](const char* key, bool used, const std::string& part) {
      if (child(it, key).present() && !used) fail(child(it, key), std::string("applies only to ") + part);
    };
    out.normal = choice(it, "normal", {"hertz", "linear"}) == 1 ? NormalModel::Linear : NormalModel::Hertz;
    const bool linear = out.normal == NormalModel::Linear;
    only_with("stiffness", linear, "normal: linear");
    if (linear) out.stiffness = number(it, "stiffness", Rule::Positive);
    // the tangential part follows the normal one unless chosen
    out.tangential = child(it, "tangential").present()
                         ? static_cast<TangentialModel>(choice(it, "tangential", {"mindlin", "linear", "mindlin_deresiewicz"}))
                         : (linear ? TangentialModel::Linear : TangentialModel::Mindlin);
    const bool linear_t = out.tangential == TangentialModel::Linear;
    only_with("tangential_stiffness", linear_t, "tangential: linear");
    if (linear_t)  // default 2/7 of the normal stiffness (LAMMPS gran/hooke's choice)
      out.tangential_stiffness = linear ? number(it, "tangential_stiffness", Rule::Positive, out.stiffness * 2.0 / 7.0)
                                        : number(it, "tangential_stiffness", Rule::Positive);
    out.rolling = choice(it, "rolling", {"constant_torque", "epsd"}) == 1 ? RollingModel::Epsd : RollingModel::ConstantTorque;
    only_with("rolling_damping", out.rolling == RollingModel::Epsd, "rolling: epsd");
    out.rolling_damping = number(it, "rolling_damping", Rule::NonNegative, out.rolling_damping);
    if (const ModelConflict c = contact_model_conflict(out); c.key) fail(child(it, c.key), c.why);
    out.cohesion = choice(it, "cohesion", {"none", "sjkr"}) == 1 ? CohesionModel::Sjkr : CohesionModel::None;
    only_with("cohesion_energy_density", out.cohesion == CohesionModel::Sjkr, "cohesion: sjkr");
    if (out.cohesion == CohesionModel::Sjkr) out.cohesion_energy_density = number(it, "cohesion_energy_density", Rule::Positive);
    return out;
  }

  ParticleSpec read_particle(const Item& p) const {
    expect_map(p);
    ParticleSpec out;
    out.position = vec3(p, "position");
    out.velocity = vec3(p, "velocity", out.velocity);
    out.angular_velocity = vec3(p, "angular_velocity", out.angular_velocity);
    if (const Item poly = child(p, "polyhedron"); poly.present()) {
      out.polyhedron = read_polyhedron(poly);
      forbid(p, {"radius"}, "spheres (a polyhedron's size is its volume-equivalent diameter: size)");
      out.size = number(p, "size", Rule::Positive);
      if (const Item o = child(p, "orientation"); o.present()) {
        if (!o.node.IsSequence() || o.node.size() != 4) fail(o, "must be a quaternion [w, x, y, z] (got " + describe(o.node) + ")");
        const std::vector<double> q = numbers(o, Rule::Finite);
        const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (!(norm > 0)) fail(o, "must not be zero");
        for (int k = 0; k < 4; ++k) out.orientation[k] = q[k] / norm;
      }
    } else {
      forbid(p, {"size", "orientation"}, "polyhedron");
      out.radius = number(p, "radius", Rule::Positive);
    }
    out.material = material_ref(child(p, "material"));
    out.prescribed = flag(p, "prescribed", out.prescribed);
    out.tag = tag(p);
    return out;
  }

  // A particle's tag (key tag:): 0 to 2^31 - 1, 0 when not given.
  std::int32_t tag(const Item& map) const {
    const Item t = child(map, "tag");
    if (!t.present()) return 0;
    const std::int64_t v = integer(t, 0);
    if (v > 2147483647) fail(t, "must be at most 2147483647 (got " + std::to_string(v) + ")");
    return static_cast<std::int32_t>(v);
  }

  // What a fill or an inlet places: spheres by `radius`, or polyhedra by `polyhedron` and `size`
  // (volume-equivalent diameters, in the radius distribution's place).
  void read_particle_kind(const Item& f, FillSpec& out) const {
    if (const Item poly = child(f, "polyhedron"); poly.present()) {
      out.polyhedron = read_polyhedron(poly);
      forbid(f, {"radius"}, "spheres (a polyhedron's size is its volume-equivalent diameter: size)");
      out.radius = read_radius(need(child(f, "size")));
    } else {
      forbid(f, {"size"}, "polyhedron");
      out.radius = read_radius(need(child(f, "radius")));
    }
  }

  // A polyhedral shape: a built-in's name or a file's path, or a map {builtin, sides} or {file}.
  PolyhedronSpec read_polyhedron(const Item& it) const {
    PolyhedronSpec out;
    out.where = it.path;
    const std::vector<std::string>& names = builtin_polyhedron_names();
    const auto builtin = [&](const Item& b) {
      const std::string name = text(b);
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
        fail(b, "'" + name + "' is no built-in shape (" + list + ")");
      }
      return name;
    };
    const auto path = [&](const Item& f) {
      std::filesystem::path p(expand_environment(f));
      if (p.is_relative()) p = base_dir_ / p;
      return p.lexically_normal().string();
    };
    if (!it.node.IsMap()) {  // a name, else a file
      const std::string name = text(it);
      if (std::find(names.begin(), names.end(), name) != names.end()) out.builtin = name;
      else out.file = path(it);
      return out;
    }
    const Item b = child(it, "builtin"), f = child(it, "file");
    if (b.present() == f.present())
      fail(it, "needs exactly one of builtin (a built-in shape's name) and file (a convex OBJ or STL file)");
    if (b.present()) {
      out.builtin = builtin(b);
      if (const Item s = child(it, "sides"); s.present()) out.sides = numbers(s, Rule::Positive);
    } else {
      forbid(it, {"sides"}, "builtin");
      out.file = path(f);
    }
    return out;
  }

  InletSpec read_inlet(const Item& f, std::size_t index) const {
    expect_map(f);
    InletSpec out;
    out.name = text(f, "name", "inlet" + std::to_string(index));
    read_region(f, out.region);
    read_particle_kind(f, out.region);
    out.region.material = material_ref(child(f, "material"));
    out.region.velocity = vec3(f, "velocity", out.region.velocity);
    out.region.seed = static_cast<std::uint64_t>(integer(f, "seed", 0, static_cast<std::int64_t>(out.region.seed)));
    out.region.tag = tag(f);
    const Item rate = child(f, "rate"), mass_rate = child(f, "mass_rate");
    if (rate.present() == mass_rate.present()) fail(f, "needs exactly one of rate (particles/s) and mass_rate (kg/s)");
    if (rate.present()) out.rate = number(rate, Rule::Positive);
    else out.mass_rate = number(mass_rate, Rule::Positive);
    out.start = number(f, "start", Rule::NonNegative, out.start);
    if (child(f, "stop").present()) {
      out.stop = number(f, "stop", Rule::NonNegative);
      if (!(out.stop > out.start)) fail(child(f, "stop"), "must be later than start (" + std::to_string(out.start) + " s)");
    }
    if (child(f, "count").present()) out.count = integer(f, "count", 1);
    out.interval = number(f, "interval", Rule::Positive, out.interval);
    return out;
  }

  // The region of a fill or an inlet: a box (min, max) or a cylinder (base, axis, radius, length).
  void read_region(const Item& f, FillSpec& out) const {
    out.shape =
        choice(f, "shape", {"box", "cylinder"}) == 0 ? FillSpec::Shape::Box : FillSpec::Shape::Cylinder;
    if (out.shape == FillSpec::Shape::Box) {
      forbid(f, {"base", "axis", "cylinder_radius", "length"}, "shape: cylinder");
      out.box_min = vec3(f, "min");
      out.box_max = vec3(f, "max");
      for (int k = 0; k < 3; ++k)
        if (out.box_max[k] <= out.box_min[k]) fail(child(f, "max"), "must be > min in every component");
    } else {
      forbid(f, {"min", "max"}, "shape: box");
      out.cylinder_base = vec3(f, "base");
      const Item axis = child(f, "axis");
      const Vec3d a = vec3(f, "axis", out.cylinder_axis);
      const double norm = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
      if (norm == 0) fail(axis, "must not be zero");
      out.cylinder_axis = {a[0] / norm, a[1] / norm, a[2] / norm};
      out.cylinder_radius = number(f, "cylinder_radius", Rule::Positive);
      out.cylinder_length = number(f, "length", Rule::Positive);
    }
  }

  FillSpec read_fill(const Item& f) const {
    expect_map(f);
    FillSpec out;
    out.shape =
        choice(f, "shape", {"box", "cylinder"}) == 0 ? FillSpec::Shape::Box : FillSpec::Shape::Cylinder;
    const std::size_t pattern = choice(f, "pattern", {"random", "regular", "plate"});
    out.pattern = pattern == 0 ? FillSpec::Pattern::Random : pattern == 1 ? FillSpec::Pattern::Regular : FillSpec::Pattern::Plate;
    out.prescribed = flag(f, "prescribed", out.prescribed);
    if (out.pattern == FillSpec::Pattern::Plate) {
      if (choice(f, "shape", {"box", "cylinder"}) != 0) fail(child(f, "shape"), "must be box for pattern: plate");
      out.jitter = number(f, "jitter", Rule::NonNegative, out.jitter);
      if (out.jitter > 1) fail(child(f, "jitter"), "must be at most 1 (a fraction of the radius; got " + std::to_string(out.jitter) + ")");
    } else {
      forbid(f, {"jitter"}, "pattern: plate");
    }
    read_region(f, out);
    if (out.pattern == FillSpec::Pattern::Random) {
      out.count = integer(f, "count", 1);
      forbid(f, {"spacing"}, "pattern: regular or pattern: plate");  // (random places have no lattice)
    } else {
      out.count = integer(f, "count", 0, out.count);
    }
    out.spacing = number(f, "spacing", Rule::NonNegative, out.spacing);
    read_particle_kind(f, out);
    out.material = material_ref(child(f, "material"));
    out.velocity = vec3(f, "velocity", out.velocity);
    out.seed = static_cast<std::uint64_t>(integer(f, "seed", 0, static_cast<std::int64_t>(out.seed)));
    out.tag = tag(f);
    return out;
  }

  RadiusDistribution read_radius(const Item& r) const {
    RadiusDistribution out;
    if (!r.node.IsMap()) {
      out.radius = number(r, Rule::Positive);
      return out;
    }
    if (choice(r, "distribution", {"uniform", "discrete"}, true) == 0) {
      forbid(r, {"values", "weights"}, "distribution: discrete");
      out.kind = RadiusDistribution::Kind::Uniform;
      out.min = number(r, "min", Rule::Positive);
      out.max = number(r, "max", Rule::Positive);
      if (out.min > out.max)
        fail(child(r, "min"), "must be <= max (got " + describe(child(r, "min").node) + " > " +
                                  describe(child(r, "max").node) + ")");
    } else {
      forbid(r, {"min", "max"}, "distribution: uniform");
      out.kind = RadiusDistribution::Kind::Discrete;
      const Item values = need(child(r, "values"));
      out.values = numbers(values, Rule::Positive);
      if (out.values.empty()) fail(values, "must not be empty");
      const Item weights = child(r, "weights");
      out.weights = weights.present() ? numbers(weights, Rule::NonNegative)
                                      : std::vector<double>(out.values.size(), 1.0);
      if (out.weights.size() != out.values.size())
        fail(weights, "must have one entry per value (got " + std::to_string(out.weights.size()) +
                          ", expected " + std::to_string(out.values.size()) + ")");
      if (std::all_of(out.weights.begin(), out.weights.end(), [](double w) { return w == 0; }))
        fail(weights, "must not all be 0");
    }
    return out;
  }

  MeshSpec read_mesh(const Item& m, std::size_t index) const {
    expect_map(m);
    MeshSpec out;
    out.name = text(m, "name", "mesh" + std::to_string(index));
    const Item file = child(m, "file");
    const Item vertices = child(m, "vertices");
    const Item faces = child(m, "faces");
    if (file.present() == (vertices.present() || faces.present()))
      fail(m, file.present() ? "gives both a file and inline vertices/faces; use one"
                             : "needs either a file or inline vertices and faces");
    if (file.present()) {
      std::filesystem::path p(expand_environment(file));
      if (p.is_relative()) p = base_dir_ / p;
      out.file = p.lexically_normal().string();
    } else {
      PolygonMesh& mesh = out.inline_mesh;
      mesh.source = "<inline>";
      for (const Item& v : items(need(vertices))) mesh.vertices.push_back(vec3(v));
      const std::vector<Item> polygons = items(need(faces));
      if (polygons.empty()) fail(faces, "must not be empty");
      for (const Item& face : polygons) {
        const std::vector<Item> corners = items(face);
        if (corners.size() < 3)
          fail(face, "must list at least 3 vertex indices (got " + std::to_string(corners.size()) + ")");
        for (const Item& c : corners) {
          const std::int64_t v = integer(c, 0);
          if (v >= static_cast<std::int64_t>(mesh.vertices.size()))
            fail(c, "must be a vertex index < " + std::to_string(mesh.vertices.size()) + " (got " +
                        describe(c.node) + ")");
          mesh.face_vertices.push_back(static_cast<std::int32_t>(v));
        }
        mesh.face_offsets.push_back(static_cast<std::int32_t>(mesh.face_vertices.size()));
      }
    }
    if (const Item scale = child(m, "scale"); scale.present()) {
      if (scale.node.IsSequence()) {
        const std::vector<double> v = numbers(scale, Rule::Positive);
        if (v.size() != 3) fail(scale, "must be a number or a list of 3 numbers (got " + std::to_string(v.size()) + " items)");
        out.scale = {v[0], v[1], v[2]};
      } else {
        const double s = number(scale, Rule::Positive);
        out.scale = {s, s, s};
      }
    }
    out.rotation_deg = vec3(m, "rotation", out.rotation_deg);
    out.translation = vec3(m, "translation", out.translation);
    if (const Item motion = child(m, "motion"); motion.present()) {
      expect_map(motion);
      out.motion.velocity = vec3(motion, "velocity", out.motion.velocity);
      out.motion.angular_velocity = vec3(motion, "angular_velocity", out.motion.angular_velocity);
      out.motion.center = vec3(motion, "center", out.motion.center);
      if (const Item table = child(motion, "table"); table.present()) {
        forbid(motion, {"velocity", "angular_velocity"}, "a constant motion (no table)");
        read_motion_table(table, out.motion);
      }
      if (const Item osc = child(motion, "oscillation"); osc.present()) {
        expect_map(osc);
        out.motion.osc_amplitude = vec3(osc, "amplitude");
        out.motion.osc_frequency = number(osc, "frequency", Rule::Positive);
        out.motion.osc_phase_deg = number(osc, "phase", Rule::Finite, 0.0);
      }
      out.motion.start = number(motion, "start", Rule::NonNegative, out.motion.start);
      if (child(motion, "stop").present()) {
        out.motion.stop = number(motion, "stop", Rule::NonNegative);
        if (!(out.motion.stop > out.motion.start))
          fail(child(motion, "stop"), "must be later than start (" + std::to_string(out.motion.start) + " s)");
      }
    }
    out.material = material_ref(child(m, "material"));
    return out;
  }

  // A motion table, inline (a list of rows) or from a CSV file (a path, relative to the scene):
  // rows of 7 numbers t, vx, vy, vz, wx, wy, wz; t >= 0 and increasing; the spins along one axis.
  void read_motion_table(const Item& table, MotionSpec& out) const {
    std::vector<std::string> where;  // per row, for messages
    if (table.node.IsScalar()) {
      std::filesystem::path p(expand_environment(table));
      if (p.is_relative()) p = base_dir_ / p;
      const std::string path = p.lexically_normal().string();
      // (a scene's limit: a table that size is some 10^6 rows, far more than any motion needs)
      if (const std::string why = unreadable_reason(path, kMaxSceneFileBytes); !why.empty())
        fail(table, "cannot read the motion table '" + path + "': " + why);
      std::ifstream in(path);
      if (!in) fail(table, "cannot open the motion table '" + path + "'");
      out.table_source = path;
      std::string line;
      for (int number_of_line = 1; std::getline(in, line); ++number_of_line) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
        std::array<double, 7> row{};
        std::istringstream fields(line);
        std::string field;
        int k = 0;
        bool numeric = true;
        while (std::getline(fields, field, ',')) {
          char* end = nullptr;
          const double v = std::strtod(field.c_str(), &end);
          while (end && (*end == ' ' || *end == '\t')) ++end;
          if (end == field.c_str() || (end && *end != '\0') || !std::isfinite(v)) numeric = false;
          if (k < 7) row[k] = v;
          ++k;
        }
        const std::string at = path + ":" + std::to_string(number_of_line);
        if (!numeric && out.table.empty() && where.empty()) {
          where.push_back("header");  // a header line (t,vx,...) before the first row
          continue;
        }
        if (!numeric || k != 7)
          throw InputError(at + ": a motion table row must be 7 numbers t,vx,vy,vz,wx,wy,wz (got '" + excerpt(line) + "')");
        out.table.push_back(row);
        where.push_back(at + ": motion table row " + std::to_string(out.table.size() - 1));
      }
      if (!where.empty() && where.front() == "header") where.erase(where.begin());
    } else {
      out.table_source = source_;
      for (const Item& row : items(table)) {
        const std::vector<double> v = numbers(row, Rule::Finite);
        if (v.size() != 7) fail(row, "must be 7 numbers t, vx, vy, vz, wx, wy, wz (got " + std::to_string(v.size()) + ")");
        out.table.push_back({v[0], v[1], v[2], v[3], v[4], v[5], v[6]});
        where.push_back(this->where(row.path, row.mark) + ": " + row.path);
      }
    }
    if (out.table.empty()) fail(table, "has no rows");
    const auto bad = [&](std::size_t r, const std::string& why) -> void {
      throw InputError(where[r] + " " + why);
    };
    std::array<double, 3> axis{0, 0, 0};
    for (std::size_t r = 0; r < out.table.size(); ++r) {
      const auto& row = out.table[r];
      if (row[0] < 0) bad(r, "has t < 0 (t counts from the motion's start)");
      if (r > 0 && !(row[0] > out.table[r - 1][0])) bad(r, "has t not after the row before");
      const double w[3] = {row[4], row[5], row[6]};
      const double wn = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
      if (wn == 0) continue;
      if (axis == std::array<double, 3>{0, 0, 0}) {
        axis = {w[0] / wn, w[1] / wn, w[2] / wn};
      } else {
        const double c[3] = {axis[1] * w[2] - axis[2] * w[1], axis[2] * w[0] - axis[0] * w[2], axis[0] * w[1] - axis[1] * w[0]};
        if (std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) > 1e-9 * wn)
          bad(r, "spins about another axis than the rows before: a table's spins must share one axis");
      }
    }
  }

  OutputSpec read_output(const Item& o) const {
    expect_map(o);
    OutputSpec out;
    out.snapshot_interval = number(o, "snapshot_interval", Rule::NonNegative, out.snapshot_interval);
    out.probe_interval = number(o, "probe_interval", Rule::NonNegative, out.probe_interval);
    for (const Item& id : items(child(o, "probe_ids"))) out.probe_ids.push_back(integer(id, 0));
    out.vtk = flag(o, "vtk", out.vtk);
    out.zlib = choice(o, "compression", {"none", "zlib"}) == 1;
    out.checkpoint_interval = number(o, "checkpoint_interval", Rule::NonNegative, out.checkpoint_interval);
    return out;
  }

  std::string source_;
  std::filesystem::path base_dir_;                            // relative mesh paths are relative to this
  std::vector<std::pair<std::string, std::string>> origins_;  // key path set by "--set <text>"
  std::vector<std::string> material_names_;                   // in definition order
};

}  // namespace

std::string coarse_graining_width_conflict(const CoarseGrainingSpec& cg) {
  // at least a cell, so that a kernel spans cells rather than sampling one; at most what a
  // particle's weights can span (kMaxCgSpan cells per axis)
  const double cut = cg_cutoff(static_cast<CgKernel>(cg.kernel), cg.width);
  if (!(cg.width >= cg.cell_size))
    return "is below the allowed range: at least cell_size (" + shortest_text(cg.cell_size) +
           " m), so that each particle's kernel spans several cells";
  if (2 * cut / cg.cell_size + 2 > kMaxCgSpan)
    return "is above the allowed range: the kernel would span more than " + std::to_string(kMaxCgSpan - 2) +
           " cells (at most " + shortest_text((kMaxCgSpan - 2) / 2.0 * cg.cell_size / (cut / cg.width)) +
           " m at this cell_size)";
  return "";
}

ModelConflict contact_model_conflict(const InteractionSpec& it) {
  const bool md = it.tangential == TangentialModel::MindlinDeresiewicz;
  const char* shared = " (both keep a history in the same place)";
  if (it.restitution == 0 && it.rolling == RollingModel::Epsd)
    return {"rolling", std::string("epsd cannot be combined with restitution 0") + shared + "; use rolling: constant_torque"};
  if (it.restitution == 0 && md) return {"tangential", std::string("mindlin_deresiewicz cannot be combined with restitution 0") + shared};
  if (md && it.normal != NormalModel::Hertz)
    return {"tangential", "mindlin_deresiewicz needs normal: hertz (it is the partial slip of a Hertzian contact)"};
  if (md && it.rolling == RollingModel::Epsd)
    return {"rolling", std::string("epsd cannot be combined with tangential: mindlin_deresiewicz") + shared +
                           "; use rolling: constant_torque"};
  return {};
}

SceneConfig load_scene(const std::string& path, const std::vector<std::string>& overrides) {
  const auto refuse = [&](const std::string& why) {
    throw InputError(path + ": cannot read the scene: " + why);
  };
  if (const std::string why = unreadable_reason(path, kMaxSceneFileBytes); !why.empty()) refuse(why);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  int error = errno;
  std::string text;
  bool too_long = false;
  if (file) {
    // At most the limit and one byte more: a file that grew after the check, or one whose size
    // the system does not know (/proc), is still read no further than that.
    char buffer[1 << 16];
    for (std::size_t n; !too_long && (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) {
      text.append(buffer, n);
      too_long = text.size() > kMaxSceneFileBytes;
    }
    error = std::ferror(file) ? errno : 0;
    std::fclose(file);
  }
  if (!file || error != 0) throw InputError("cannot read scene file '" + path + "': " + std::strerror(error));
  if (too_long) refuse("it is more than the limit of " + std::to_string(kMaxSceneFileBytes >> 20) + " MiB");
  return Loader(path, std::filesystem::path(path).parent_path()).load(text, overrides);
}

SceneConfig load_scene_from_string(const std::string& yaml_text, const std::string& source_name,
                                   const std::vector<std::string>& overrides) {
  return Loader(source_name, {}).load(yaml_text, overrides);
}

}  // namespace dem::host
