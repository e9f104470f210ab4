//! Carried outlines against full parses: random edits of the realistic
//! fixtures of every language (and of a generated file shaped like the read
//! benchmark's `engine.rs`), each carried outline either `None` or exactly
//! the new text's outline — and `Some` often enough that the fast path
//! cannot die unnoticed.

use outline::{Unit, carry, outline, parse};

use crate::fixture;

/// A deterministic generator (xorshift64*), so that every run tries the same
/// edits and a failure names its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A Rust file shaped like the read benchmark's `src/engine.rs` (doc
/// commented functions with long bodies), with some of everything else a
/// Rust file holds: attributes, structs, impls, traits, consts, modules.
fn engine_like(functions: usize) -> String {
    let mut rng = Rng(0x5eed_0001);
    let mut out = String::from(
        "//! The engine: a pipeline of numbered stages over a `u32` state.\n//!\n//! Each \
         stage mixes its input with its own constants.\n\nuse std::fmt;\n\n",
    );
    for f in 0..functions {
        match f % 9 {
            3 => out.push_str(&format!(
                "/// State number {f}.\n#[derive(Debug, Clone)]\npub struct State{f} {{\n    \
                 pub acc: u32,\n    pub steps: Vec<u32>,\n}}\n\nimpl State{f} {{\n    /// A \
                 new state.\n    pub fn new(acc: u32) -> Self {{\n        State{f} {{ acc, \
                 steps: Vec::new() }}\n    }}\n\n    #[inline]\n    fn step(&mut self) {{\n        \
                 self.acc = self.acc.wrapping_add({f});\n    }}\n}}\n\n"
            )),
            5 => out.push_str(&format!(
                "impl fmt::Display for State{} {{\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) \
                 -> fmt::Result {{\n        write!(f, \"{{}}\", self.acc)\n    }}\n}}\n\nconst \
                 LIMIT_{f}: u32 = {};\n\n",
                f - 2,
                rng.below(10_000)
            )),
            7 => out.push_str(&format!(
                "mod stage_{f} {{\n    //! Helpers of stage {f}.\n\n    pub fn inner(x: u32) \
                 -> u32 {{\n        x ^ {}\n    }}\n}}\n\n",
                rng.below(10_000)
            )),
            _ => {
                out.push_str(&format!(
                    "/// Stage {f}: mix the input with the stage constants.\n/// The result \
                     depends only on `x`.\npub fn f_{f:03}(x: u32) -> u32 {{\n    let mut acc = \
                     x ^ {};\n",
                    rng.below(65_536)
                ));
                for s in 0..4 + rng.below(12) {
                    match rng.below(4) {
                        0 => out.push_str(&format!("    // Step {s}: keep the low bits stable.\n")),
                        1 => out.push_str(&format!(
                            "    if acc % {} == 3 {{ acc = acc.wrapping_add({s}); }}\n",
                            1 + rng.below(50_000)
                        )),
                        _ => out.push_str(&format!(
                            "    acc = acc.wrapping_mul({}).rotate_left({});\n",
                            rng.below(65_536),
                            rng.below(31)
                        )),
                    }
                }
                out.push_str("    acc\n}\n\n");
            }
        }
    }
    out.push_str("#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn stages_mix() {\n        assert_ne!(f_000(1), 1);\n    }\n}\n");
    out
}

/// What an edit can insert, per language: lines that start, attach to or
/// break units.
fn snippets(path: &str) -> &'static [&'static str] {
    let ext = path.rsplit('.').next().unwrap_or("");
    match ext {
        "rs" => &[
            "/// An added doc comment.",
            "#[inline]",
            "#[cfg(test)]",
            "// a plain comment",
            "/* an unterminated comment",
            "*/",
            "\"an unterminated string",
            "r#\"an unterminated raw string",
            "fn inserted(x: u32) -> u32 { x }",
            "pub struct Inserted;",
            "impl Inserted {",
            "}",
            "{",
            "mod added {",
            "pub",
            "    let y = 2;",
            "const ADDED: u32 = 1;",
            "macro_rules! added { () => {}; }",
            "#![allow(dead_code)]",
        ],
        "py" | "pyi" => &[
            "@decorator",
            "@functools.cache",
            "# a comment",
            "def inserted(x):",
            "def inserted(x): return x",
            "class Inserted: pass",
            "class Inserted:",
            "    pass",
            "    x = 1",
            "        return None",
            "\"\"\"an unterminated docstring",
            "'''",
            "\"unterminated",
            "ADDED = 1",
            "Alias: TypeAlias = int",
            "if True:",
            "x = (",
            "\\",
        ],
        "c" | "h" => &[
            "/* an added comment */",
            "// a line comment",
            "/* an unterminated comment",
            "*/",
            "#define ADDED 1",
            "#define CONTINUED \\",
            "#if 0",
            "#endif",
            "#ifdef ADDED",
            "static",
            "int inserted(void) { return 0; }",
            "struct inserted { int x; };",
            "typedef int added_t;",
            "}",
            "{",
            "\t\treturn 0;",
            "\"unterminated",
        ],
        "cpp" | "cc" | "hpp" => &[
            "// an added comment",
            "/* an unterminated comment",
            "*/",
            "template <typename T>",
            "namespace added {",
            "}",
            "extern \"C\" {",
            "int inserted() { return 0; }",
            "class Inserted {};",
            "using Added = int;",
            "#define ADDED(x) (x)",
            "#if 0",
            "#endif",
            "static",
            "    return 0;",
            "R\"(unterminated",
        ],
        "java" => &[
            "/** An added Javadoc. */",
            "// a comment",
            "@Override",
            "@Deprecated",
            "/* an unterminated comment",
            "*/",
            "void inserted() {}",
            "class Inserted {}",
            "}",
            "{",
            "    int x = 1;",
            "\"unterminated",
        ],
        _ => &[
            "// an added comment",
            "/** An added doc. */",
            "/* an unterminated comment",
            "*/",
            "@decorator",
            "export",
            "export default",
            "function inserted() {}",
            "const inserted = () => 1;",
            "class Inserted {}",
            "}",
            "{",
            "x = a",
            "(x)",
            "`an unterminated template",
            "\"unterminated",
            "    return 1;",
            "interface Added {}",
            "type Added = number;",
            "namespace Added {",
            "<div>",
        ],
    }
}

/// A new unit, whole, in the fixture's language.
fn new_unit(path: &str, n: usize) -> String {
    let ext = path.rsplit('.').next().unwrap_or("");
    match ext {
        "rs" => format!("/// Added {n}.\npub fn added_{n}(x: u32) -> u32 {{\n    x + {n}\n}}\n"),
        "py" | "pyi" => format!("def added_{n}(x):\n    return x + {n}\n"),
        "c" | "h" | "cpp" | "cc" | "hpp" => {
            format!("/* Added {n}. */\nstatic int added_{n}(int x)\n{{\n\treturn x + {n};\n}}\n")
        }
        "java" => format!(
            "    /** Added {n}. */\n    int added{n}(int x) {{\n        return x + {n};\n    }}\n"
        ),
        _ => format!("// Added {n}.\nfunction added{n}(x) {{\n  return x + {n};\n}}\n"),
    }
}

/// What goes directly above a unit to attach to it (or, Python, decorate it).
fn attachment(path: &str, rng: &mut Rng) -> &'static str {
    let ext = path.rsplit('.').next().unwrap_or("");
    let options: &[&str] = match ext {
        "rs" => &["/// Added doc.", "#[must_use]", "#[cfg(test)]", "// plain"],
        "py" | "pyi" => &["@decorator", "# comment"],
        "java" => &["/** Added doc. */", "@Deprecated", "// comment"],
        "ts" | "tsx" => &["// comment", "/** Added doc. */", "@decorator"],
        _ => &["// comment", "/* Added doc. */"],
    };
    rng.pick(options)
}

/// One random edit of `text`, whose outline is `units`.
fn edit(path: &str, text: &str, units: &[Unit], rng: &mut Rng, n: usize) -> String {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let line = |s: &str| format!("{s}{newline}");
    let count = lines.len();
    let unit = (!units.is_empty()).then(|| rng.pick(units));
    match rng.below(16) {
        // Insert a snippet anywhere.
        0 | 1 => {
            let at = rng.below(count + 1);
            lines.insert(at, line(rng.pick(snippets(path))));
        }
        // Delete a few lines.
        2 => {
            let at = rng.below(count);
            let len = 1 + rng.below(5);
            lines.drain(at..(at + len).min(count));
        }
        // Replace a line with a snippet or another line of the file.
        3 => {
            let at = rng.below(count);
            lines[at] = if rng.chance(50) {
                line(rng.pick(snippets(path)))
            } else {
                lines[rng.below(count)].clone()
            };
        }
        // A new unit, anywhere or right before or after a unit.
        4 => {
            let at = match &unit {
                Some(u) if rng.chance(70) => {
                    if rng.chance(50) {
                        u.lines.start as usize - 1
                    } else {
                        (u.lines.end as usize).min(count)
                    }
                }
                _ => rng.below(count + 1),
            };
            let blank = if rng.chance(50) {
                line("")
            } else {
                String::new()
            };
            lines.insert(at, format!("{blank}{}", new_unit(path, n)));
        }
        // Delete a unit.
        5 => {
            if let Some(u) = &unit {
                lines.drain(u.lines.start as usize - 1..(u.lines.end as usize).min(count));
            }
        }
        // Edit inside a unit.
        6 | 7 => {
            if let Some(u) = &unit {
                let at = u.lines.start as usize - 1
                    + rng.below((u.lines.end - u.lines.start + 1) as usize);
                let at = at.min(count - 1);
                let old = lines[at].trim_end_matches(['\n', '\r']).to_owned();
                lines[at] = match rng.below(4) {
                    0 => line(&format!("{old} // edited")),
                    1 => line(&old.replace('1', "2")),
                    2 => lines[at].repeat(2),
                    _ => line(&format!("{old}{}", rng.pick(snippets(path)))),
                };
            }
        }
        // Something attached directly above a unit.
        8 | 9 => {
            if let Some(u) = &unit {
                let at = u.lines.start as usize - 1;
                let indent: String = lines[at]
                    .chars()
                    .take_while(|c| *c == ' ' || *c == '\t')
                    .collect();
                let added = attachment(path, rng);
                lines.insert(at, line(&format!("{indent}{added}")));
            }
        }
        // An unterminated comment or string.
        10 => {
            let at = rng.below(count + 1);
            let opener = rng.pick(&["/*", "\"", "'", "\"\"\"", "`", "r#\"", "'''"]);
            lines.insert(at, line(&format!("x = {opener} open")));
        }
        // Whitespace only.
        11 => {
            let at = rng.below(count);
            let old = lines[at].trim_end_matches(['\n', '\r']).to_owned();
            match rng.below(4) {
                0 => lines[at] = line(&format!("{old}   ")),
                1 => lines[at] = line(&format!("    {old}")),
                2 => lines.insert(at, line("")),
                _ => {
                    if old.trim().is_empty() {
                        lines.remove(at);
                    } else {
                        lines[at] = line(old.trim_start());
                    }
                }
            }
        }
        // The first or the last lines.
        12 => {
            let added = line(rng.pick(snippets(path)));
            match rng.below(4) {
                0 => lines.insert(0, added),
                1 => lines.push(added),
                2 => lines[0] = added,
                _ => {
                    lines.pop();
                }
            }
        }
        // Move a unit elsewhere.
        13 => {
            if let Some(u) = &unit {
                let range = u.lines.start as usize - 1..(u.lines.end as usize).min(count);
                let moved: Vec<String> = lines.drain(range).collect();
                let at = rng.below(lines.len() + 1);
                lines.splice(at..at, moved);
            }
        }
        // Swap two lines.
        14 => {
            let (a, b) = (rng.below(count), rng.below(count));
            lines.swap(a, b);
        }
        // `export` before a unit (JavaScript, TypeScript), `pub` (Rust),
        // `static` (C): a wrapper or modifier on the unit's first line.
        _ => {
            if let Some(u) = &unit {
                let at = u.lines.start as usize - 1;
                let word = rng.pick(&["export ", "pub ", "static ", "async "]);
                lines[at] = format!("{word}{}", lines[at]);
            }
        }
    }
    lines.concat()
}

/// How often carrying gave an outline, per fixture.
struct Tally {
    name: String,
    cases: usize,
    /// Cases whose new text parses without errors (the others never carry).
    clean: usize,
    carried: usize,
}

/// Random edits of `text` (as `path`): `rounds` of them, each from the text
/// as the previous round left it (when that parsed cleanly) or from the
/// fixture again. Panics on any carried outline that is not the full one.
fn check(path: &str, text: &str, rounds: usize, seed: u64) -> Tally {
    let mut rng = Rng(seed);
    let base = parse(path, text).expect("fixture has a grammar");
    assert!(base.clean, "{path}: the fixture parses without errors");
    let mut old = (text.to_owned(), base);
    let mut tally = Tally {
        name: path.to_owned(),
        cases: 0,
        clean: 0,
        carried: 0,
    };
    for round in 0..rounds {
        let edits = 1 + usize::from(rng.chance(25)) + usize::from(rng.chance(10));
        let mut new = old.0.clone();
        for k in 0..edits {
            let units = outline(path, &new).expect("grammar");
            new = edit(path, &new, &units, &mut rng, round * 10 + k);
        }
        let full = parse(path, &new).expect("grammar");
        let carried = carry(path, &old.0, &old.1, &new);
        tally.cases += 1;
        tally.clean += usize::from(full.clean);
        if let Some(carried) = &carried {
            tally.carried += 1;
            if carried != &full {
                panic!(
                    "{path} (seed {seed:#x}, round {round}): the carried outline differs \
                     from a full parse\n--- old text ---\n{}\n--- new text ---\n{new}\n--- \
                     carried ---\n{}\n--- full ---\n{}",
                    old.0,
                    crate::render(&carried.units),
                    crate::render(&full.units)
                );
            }
            assert!(
                full.clean,
                "{path} (seed {seed:#x}, round {round}): carried to a text with errors\n--- old \
                 ---\n{}\n--- new ---\n{new}",
                old.0
            );
        }
        // Walk on from the edited text when it is clean (carries chain),
        // else start again from the fixture.
        if full.clean && rng.chance(60) {
            old = (new, carried.unwrap_or(full));
        } else if rng.chance(30) {
            old = (text.to_owned(), parse(path, text).expect("grammar"));
        }
    }
    tally
}

/// Whether at least `percent` of the edits that left a text without syntax
/// errors (no other can carry) carried, and such edits were a quarter of all.
fn carried_enough(tally: &Tally, percent: usize) {
    assert!(
        tally.clean * 4 >= tally.cases,
        "{}: only {} of {} edits left a clean text",
        tally.name,
        tally.clean,
        tally.cases
    );
    assert!(
        tally.carried * 100 >= tally.clean * percent,
        "{}: only {} of {} clean edits carried (at least {percent}% expected)",
        tally.name,
        tally.carried,
        tally.clean
    );
}

/// Every fixture, edited at random: each carried outline equals the full
/// one; files made of many top-level units carry most of the time.
#[test]
fn carried_outlines_equal_full_parses() {
    // (fixture, rounds, least share of clean edits carried in %). Units
    // inside one container (a Java class, a C++ namespace) carry rarely: an
    // edit anywhere in it makes the whole container one gap.
    #[rustfmt::skip]
    let fixtures: &[(&str, usize, usize)] = &[
        ("sample.rs", 160, 80), ("sample.py", 160, 70), ("diff.c", 160, 70),
        ("engine.cpp", 120, 0), ("LruCache.java", 80, 0), ("router.js", 120, 10),
        ("session.ts", 120, 30), ("Profile.tsx", 80, 30),
    ];
    let mut tallies = Vec::new();
    for (i, (name, rounds, _)) in fixtures.iter().enumerate() {
        let tally = check(name, &fixture(name), *rounds, 0x0c0f_fee0 + i as u64);
        tallies.push(tally);
    }
    for (tally, (_, _, least)) in tallies.iter().zip(fixtures) {
        carried_enough(tally, *least);
    }
    let total = tallies.iter().fold(
        Tally {
            name: "all fixtures".to_owned(),
            cases: 0,
            clean: 0,
            carried: 0,
        },
        |sum, t| Tally {
            cases: sum.cases + t.cases,
            clean: sum.clean + t.clean,
            carried: sum.carried + t.carried,
            ..sum
        },
    );
    carried_enough(&total, 50);
}

/// The benchmark's shape: nearly every clean edit of a long file of many
/// functions carries.
#[test]
fn an_engine_like_file_carries_most_edits() {
    let text = engine_like(36);
    let tally = check("src/engine.rs", &text, 150, 0xe091_e000);
    carried_enough(&tally, 90);
}

/// The same over more seeds: two by default, so every run of the suite
/// covers seeds the tests above do not; `OUTLINE_CARRY_SEEDS=40 cargo test
/// --release -p outline many_seeds` runs the long sweep.
#[test]
fn many_seeds() {
    let seeds = std::env::var("OUTLINE_CARRY_SEEDS")
        .ok()
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(2);
    let names = [
        "sample.rs",
        "sample.py",
        "diff.c",
        "engine.cpp",
        "LruCache.java",
        "router.js",
        "session.ts",
        "Profile.tsx",
    ];
    for seed in 0..seeds {
        for name in names {
            check(name, &fixture(name), 100, 0x5eed_0000 + seed);
        }
        check("src/engine.rs", &engine_like(24), 100, 0xe091_0000 + seed);
    }
}

/// CRLF line endings carry the same way.
#[test]
fn crlf_texts_carry_exactly() {
    let text = engine_like(20).replace('\n', "\r\n");
    let tally = check("src/engine.rs", &text, 60, 0xc41f);
    carried_enough(&tally, 80);
    let text = fixture("sample.py").replace('\n', "\r\n");
    carried_enough(&check("sample.py", &text, 60, 0xc420), 50);
}

/// Go names start with the package clause: never carried.
#[test]
fn go_is_never_carried() {
    let text = fixture("store.go");
    let old = parse("store.go", &text).unwrap();
    assert!(old.clean);
    let new = format!("{text}\nfunc Added() {{}}\n");
    assert_eq!(carry("store.go", &text, &old, &new), None);
    let renamed = text.replacen("package store", "package depot", 1);
    assert_eq!(carry("store.go", &text, &old, &renamed), None);
}

/// The cases the carry must notice, each checked on its own.
#[test]
fn edits_that_change_a_neighbour_are_noticed() {
    let old = engine_like(12);
    let outline = parse("src/engine.rs", &old).unwrap();
    let first_fn = old.find("/// Stage 0:").unwrap();
    let cases = [
        // A doc comment and an attribute directly above a unit.
        old.replacen("/// Stage 1:", "/// Added.\n/// Stage 1:", 1),
        old.replacen("/// Stage 1:", "#[inline]\n/// Stage 1:", 1),
        // An unterminated comment or string before units.
        format!("{}/*\n{}", &old[..first_fn], &old[first_fn..]),
        format!(
            "{}const S: &str = \"\n{}",
            &old[..first_fn],
            &old[first_fn..]
        ),
        // A blank line removed between a doc comment and its function.
        old.replacen("\n\n/// Stage 2:", "\n/// Stage 2:", 1),
        // A function's body given a line more.
        old.replacen("    acc\n}\n", "    acc\n}\n    let late = 1;\n}\n", 1),
        // The first and the last lines.
        format!("// first\n{old}"),
        format!("{old}// last\n"),
        old.replacen("//! The engine", "//! An engine", 1),
    ];
    let mut carried = 0;
    for new in &cases {
        let full = parse("src/engine.rs", new).unwrap();
        if let Some(carried_outline) = carry("src/engine.rs", &old, &outline, new) {
            carried += 1;
            assert_eq!(carried_outline, full, "{new}");
        }
    }
    assert!(carried >= 6, "only {carried} of {} carried", cases.len());
}
