//! C, C++, Go, Java, JavaScript, TypeScript and TSX: extensions, anchors in
//! `.` and `::` form, ranges with comments and annotations, robustness.

use outline::{Language, Unit, outline, outline_for, resolve_anchor};

use crate::render;

fn units(path: &str, source: &str) -> Vec<Unit> {
    outline(path, source).expect("the path has a grammar")
}

/// `{match}: {kind} {qualified}@L{start}-{end}` for each matched unit.
#[track_caller]
fn resolve(units: &[Unit], query: &str) -> String {
    let resolution = resolve_anchor(units, query)
        .unwrap_or_else(|error| panic!("query {query:?} did not resolve: {error}"));
    let matched: Vec<String> = resolution
        .units
        .iter()
        .map(|unit| {
            format!(
                "{} {}@L{}-{}",
                unit.kind, unit.qualified_name, unit.lines.start, unit.lines.end
            )
        })
        .collect();
    format!("{:?}: {}", resolution.match_kind, matched.join(", "))
}

/// Every query resolves to `expected`.
#[track_caller]
fn check_all(units: &[Unit], queries: &[&str], expected: &str) {
    for query in queries {
        assert_eq!(resolve(units, query), expected, "query {query:?}");
    }
}

#[test]
fn languages_from_extensions() {
    let table: Vec<String> = Language::ALL
        .iter()
        .map(|language| format!("{language}: {}", language.extensions().join(" ")))
        .collect();
    assert_eq!(
        table.join("\n"),
        "rust: rs\npython: py pyi\nc: c h\ncpp: cc cpp cxx hpp hh hxx\ngo: go\njava: java\n\
         javascript: js mjs cjs jsx\ntypescript: ts mts cts\ntsx: tsx"
    );
    for language in Language::ALL.iter().copied() {
        for extension in language.extensions() {
            let path = format!("src/file.{}", extension.to_uppercase());
            assert_eq!(Language::from_path(&path), Some(language), "{path}");
        }
    }
    for path in ["a.kt", "a.cs", "a.swift", "a.d.ts.orig"] {
        assert_eq!(Language::from_path(path), None, "{path}");
    }
}

const C: &str = "\
#include <stdio.h>

/* Quotes a path for output. */
static char *
quote_one(const char *name)
{
\treturn xstrdup(name);
}

#ifdef DEBUG
// Only in debug builds.
static void trace(const char *msg) { fputs(msg, stderr); }
#endif

struct diff_options;

int quote_count = 0; /* not a unit */
void after_comment(void) {}
";

#[test]
fn c_functions_resolve_by_plain_name() {
    let units = units("diff.c", C);
    insta::assert_snapshot!(render(&units), @r"
    L3-8 function quote_one | static char * quote_one(const char *name)
    L11-12 function trace | static void trace(const char *msg)
    L18-18 function after_comment | void after_comment(void)
    ");
    check_all(&units, &["quote_one"], "Exact: function quote_one@L3-8");
    check_all(
        &units,
        &["trace", " trace "],
        "Exact: function trace@L11-12",
    );
    check_all(
        &units,
        &["quote_on"],
        "Fuzzy { distance: 1 }: function quote_one@L3-8",
    );
}

const CPP: &str = "\
namespace render {

class Scene {
public:
    // Inline member.
    int size() const { return 0; }
    bool add(int layer);
    virtual ~Scene() = default;
};

/// Out of line.
bool Scene::add(int layer) {
    return layer > 0;
}

template <typename T>
T twice(T value) { return value + value; }

}  // namespace render

render::Scene make_scene() { return {}; }
";

#[test]
fn cpp_members_resolve_inline_and_out_of_line() {
    let units = units("scene.cpp", CPP);
    insta::assert_snapshot!(render(&units), @r"
    L1-19 module render | namespace render
    L3-9 class render::Scene | class Scene
    L5-6 method render::Scene::size | int size() const
    L8-8 method render::Scene::~Scene | virtual ~Scene()
    L11-14 method render::Scene::add | bool Scene::add(int layer)
    L16-17 function render::twice | T twice(T value)
    L21-21 function make_scene | render::Scene make_scene()
    ");
    let add = "Exact: method render::Scene::add@L11-14";
    check_all(&units, &["render::Scene::add", "render.Scene.add"], add);
    let add = "Unqualified: method render::Scene::add@L11-14";
    check_all(&units, &["Scene::add", "Scene.add", "add"], add);
    check_all(
        &units,
        &["Scene::size", "Scene.size"],
        "Unqualified: method render::Scene::size@L5-6",
    );
    check_all(
        &units,
        &["twice"],
        "Unqualified: function render::twice@L16-17",
    );
}

const GO: &str = "\
package diff

// Options configures a diff.
type Options struct {
\tContext int
}

// Run computes the diff.
func (o *Options) Run(a, b string) string {
\treturn a + b
}

func (o Options) Lines() int { return o.Context }

func New() *Options { return &Options{} }
";

#[test]
fn go_methods_resolve_by_receiver_and_package() {
    let units = units("diff/diff.go", GO);
    insta::assert_snapshot!(render(&units), @r"
    L3-6 struct diff.Options | type Options struct
    L8-11 method diff.Options.Run | func (o *Options) Run(a, b string) string
    L13-13 method diff.Options.Lines | func (o Options) Lines() int
    L15-15 function diff.New | func New() *Options
    ");
    check_all(
        &units,
        &["diff.Options.Run", "diff::Options::Run"],
        "Exact: method diff.Options.Run@L8-11",
    );
    check_all(
        &units,
        &["Options.Run", "Options::Run", "Run"],
        "Unqualified: method diff.Options.Run@L8-11",
    );
    check_all(&units, &["diff.New"], "Exact: function diff.New@L15-15");
    check_all(&units, &["New"], "Unqualified: function diff.New@L15-15");
}

const TS: &str = "\
export class Session {
  /** Marks the session active. */
  @Log()
  refresh(now: number): boolean {
    return true;
  }
}

export const expire = (session: Session): void => {
  session.close();
};

declare function tick(): void;
";

#[test]
fn typescript_methods_resolve_with_either_separator() {
    for path in ["session.ts", "session.tsx"] {
        let units = units(path, TS);
        assert_eq!(
            render(&units),
            "L1-7 class Session | class Session\n\
             L2-6 method Session.refresh | refresh(now: number): boolean\n\
             L9-11 function expire | const expire = (session: Session): void =>\n\
             L13-13 function tick | function tick(): void\n",
            "{path}"
        );
        check_all(
            &units,
            &["Session.refresh", "Session::refresh"],
            "Exact: method Session.refresh@L2-6",
        );
        check_all(
            &units,
            &["refresh"],
            "Unqualified: method Session.refresh@L2-6",
        );
        check_all(&units, &["expire"], "Exact: function expire@L9-11");
    }
}

const JAVA: &str = "\
package org.example;

public class Cache {
    /** Evicts one entry. */
    @Override
    public void evict(String key) {
        map.remove(key);
    }

    static class Entry {
        Entry() {}
    }
}
";

#[test]
fn java_methods_resolve_with_either_separator() {
    let units = units("src/main/java/org/example/Cache.java", JAVA);
    insta::assert_snapshot!(render(&units), @r"
    L3-13 class Cache | public class Cache
    L4-8 method Cache.evict | @Override public void evict(String key)
    L10-12 class Cache.Entry | static class Entry
    L11-11 method Cache.Entry.Entry | Entry()
    ");
    check_all(
        &units,
        &["Cache.evict", "Cache::evict"],
        "Exact: method Cache.evict@L4-8",
    );
    check_all(&units, &["evict"], "Unqualified: method Cache.evict@L4-8");
    check_all(
        &units,
        &["Entry.Entry", "Entry::Entry"],
        "Unqualified: method Cache.Entry.Entry@L11-11",
    );
}

#[test]
fn javascript_methods_and_bound_functions_resolve() {
    let source = "\
class Router {
  // Registers a route.
  add(path, handler) { this.routes.push([path, handler]); }
}
const compile = function (pattern) { return pattern; };
let a = 1, b = () => 2;
";
    let units = units("router.mjs", source);
    insta::assert_snapshot!(render(&units), @r"
    L1-4 class Router | class Router
    L2-3 method Router.add | add(path, handler)
    L5-5 function compile | const compile = function (pattern)
    ");
    check_all(
        &units,
        &["Router::add", "Router.add"],
        "Exact: method Router.add@L2-3",
    );
}

/// Nesting far beyond real code never panics: the outer units are listed
/// (blocks nested deeper than the walker goes are left out).
#[test]
fn deep_nesting_never_panics() {
    let depth = 3_000;
    let cases = [
        (Language::Cpp, "namespace n { ", "void f() {}", "}", "n"),
        (Language::Java, "class C { ", "void f() {}", "}", "C"),
        (
            Language::TypeScript,
            "namespace N { ",
            "function f() {}",
            "}",
            "N",
        ),
        (Language::JavaScript, "class C { m() { ", "", "} }", "C"),
        (
            Language::Cpp,
            "template <typename T> ",
            "void f() {}",
            "",
            "f",
        ),
        (
            Language::Go,
            "package p\ntype I interface { ",
            "",
            "}",
            "p.I",
        ),
    ];
    for (language, open, inner, close, first) in cases {
        let source = format!("{}{inner}{}", open.repeat(depth), close.repeat(depth));
        let units = outline_for(language, &source).expect("the grammar loads");
        assert_eq!(
            units.first().map(|unit| unit.qualified_name.as_str()),
            Some(first),
            "{language}"
        );
    }
    let source = format!(
        "{}void f(void) {{}}\n{}",
        "#ifdef X\n".repeat(depth),
        "#endif\n".repeat(depth)
    );
    let units = outline_for(Language::C, &source).expect("the grammar loads");
    assert!(units.is_empty(), "{}", render(&units));
}
